"""agentevals-cli 0.11.0, the tool that scores recorded traces, as the parity tests run it.

agentevals pins google-adk < 3, litellm and nltk, so it lives in a virtual environment of its
own: ``CI_EVAL_AGENTEVALS`` (a venv folder holding it) when set, else one made once per machine
under ``~/.cache/ci-eval-tests/agentevals-0.11.0`` (``python -m venv`` + ``pip install
agentevals-cli==0.11.0``, under a file lock so parallel xdist workers make it once). A machine
where it cannot be had skips the tests that need it, with the reason.

:func:`agentevals_rows` runs ``agentevals run TRACE --eval-set EVALSET OPTIONS`` and
:func:`ci_eval_rows` ``ci-eval run EVALSET --agent replay --replay TRACE --metric …``; both give
the metric rows (eval case, metric, score, status) as plain data, so a test compares them.
Only metrics agentevals scores without a model are meant (tool_trajectory_avg_score,
response_match_score: ``METRICS_NEEDING_LLM`` and ``METRICS_NEEDING_GCP`` in agentevals'
``builtin_metrics.py`` name the others); no network is needed once it is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.tool_cache import cache_root, locked

VERSION = "0.11.0"
ENV_VAR = "CI_EVAL_AGENTEVALS"
INSTALL_TIMEOUT_S = 900
FAILED_INSTALL_KEPT_S = 600  # a failed install is not retried by every worker of one run


class MetricRow(NamedTuple):
    """One metric of one eval case, as either tool scored it."""

    case: str | None  # agentevals: None when it paired the trace with no case
    metric: str
    score: float | None
    status: str


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / (name + (".exe" * (os.name == "nt")))


def _version_problem(exe: Path) -> str | None:
    """Why ``exe`` is not agentevals 0.11.0, or None when it is."""
    if not exe.is_file():
        return f"{exe} does not exist"
    try:
        proc = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exe} --version failed: {exc}"
    if proc.returncode != 0 or VERSION not in proc.stdout.split():
        return f"{exe} --version says {(proc.stdout + proc.stderr).strip()[:200]!r}, not {VERSION}"
    return None


def _install(venv: Path) -> str | None:
    """Make ``venv`` with agentevals-cli 0.11.0 in it; why not, or None when done."""
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [
            str(_bin(venv, "python")), "-m", "pip", "install", "--quiet",
            "--disable-pip-version-check", f"agentevals-cli=={VERSION}",
        ],
    ]  # fmt: skip
    for step in steps:
        try:
            proc = subprocess.run(
                step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{' '.join(step[-3:])}: {exc}"
        if proc.returncode != 0:
            lines = [ln for ln in proc.stderr.splitlines() if ln.strip()] or ["(no output)"]
            return f"{' '.join(step[-3:])} exited {proc.returncode}: {lines[-1][:300]}"
    return _version_problem(_bin(venv, "agentevals"))


def agentevals_executable() -> Path:
    """The ``agentevals`` 0.11.0 executable, made once per machine; skips the test without it."""
    given = os.environ.get(ENV_VAR)
    if given:
        exe = _bin(Path(given), "agentevals")
        problem = _version_problem(exe)
        if problem:
            pytest.skip(f"{ENV_VAR}={given}: {problem}")
        return exe
    root = cache_root()
    venv = root / f"agentevals-{VERSION}"
    done, failed = venv / ".ci-eval-installed", root / f"agentevals-{VERSION}.failed"
    with locked(root / f"agentevals-{VERSION}.lock"):
        if not done.exists():
            if failed.exists() and time.time() - failed.stat().st_mtime < FAILED_INSTALL_KEPT_S:
                pytest.skip(failed.read_text())
            problem = _install(venv)
            if problem:
                reason = f"agentevals-cli {VERSION} could not be installed in {venv}: {problem}"
                failed.write_text(reason)
                pytest.skip(reason)
            failed.unlink(missing_ok=True)
            done.write_text(VERSION)
    return _bin(venv, "agentevals")


@pytest.fixture(scope="session")
def agentevals() -> Path:
    """The path of an ``agentevals`` 0.11.0 executable (see the module's docstring)."""
    return agentevals_executable()


# Runs ``agentevals run`` as its CLI does, once per job in one interpreter (its imports cost
# seconds), and writes each run's metric rows with the eval case agentevals paired: its JSON
# output leaves the case out, so the driver takes the RunResult handed to format_results.
_DRIVER = """
import contextlib, io, json, sys
import agentevals.output as output
from agentevals.cli import main

jobs = json.load(open(sys.argv[1]))
runs = []
for args in jobs:
    seen = []
    output.format_results = lambda result, fmt="table": seen.append(result) or ""
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(["run", *args], standalone_mode=False)
        except SystemExit:
            pass
    if not seen:
        runs.append({"errors": ["agentevals gave no result"], "rows": []})
        continue
    [result] = seen
    runs.append({
        "errors": result.errors,
        "rows": [
            [t.eval_case_id, m.metric_name, m.score, m.eval_status, m.error]
            for t in result.trace_results for m in t.metric_results
        ],
    })
json.dump(runs, open(sys.argv[2], "w"))
"""


class AgentevalsRun(NamedTuple):
    rows: list[MetricRow]
    errors: list[str]  # the run's own (a trace file it could not load) and each metric's


def _environment() -> dict[str, str]:
    """The test's environment without telemetry switches; no OTel export, no price-list fetch."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTEVALS_", "GOOGLE_"))
    }
    return {**env, "OTEL_SDK_DISABLED": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def agentevals_runs(
    exe: Path, jobs: Sequence[tuple[Path, Path, Sequence[str]]], workdir: Path
) -> list[AgentevalsRun]:
    """``agentevals run TRACE --eval-set EVALSET OPTIONS`` for each (trace, eval set, options)
    job, options as its CLI takes them (``-m NAME``, ``-t THRESHOLD``, ``--group-by …``)."""
    jobs_file, out_file = workdir / "agentevals-jobs.json", workdir / "agentevals-runs.json"
    jobs_file.write_text(
        json.dumps(
            [[str(trace), "--eval-set", str(evalset), *opts] for trace, evalset, opts in jobs]
        )
    )
    proc = subprocess.run(
        [str(exe.parent / exe.name.replace("agentevals", "python")), "-c", _DRIVER,
         str(jobs_file), str(out_file)],
        capture_output=True, text=True, timeout=600, check=False, env=_environment(), cwd=workdir,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = []
    for run in json.loads(out_file.read_text()):
        rows = [
            MetricRow(case, name, score, status) for case, name, score, status, _ in run["rows"]
        ]
        errors = [f"{name}: {err}" for _, name, _, _, err in run["rows"] if err]
        runs.append(AgentevalsRun(rows, [*run["errors"], *errors]))
    return runs


def agentevals_rows(
    exe: Path, trace: Path, evalset: Path, options: Sequence[str], workdir: Path
) -> list[MetricRow]:
    """The metric rows of ``agentevals run TRACE --eval-set EVALSET OPTIONS``."""
    [run] = agentevals_runs(exe, [(trace, evalset, options)], workdir)
    assert not run.errors, run.errors
    return run.rows


def ci_eval_rows(
    trace: Path, evalset: Path, metrics: Sequence[str], workdir: Path
) -> list[MetricRow]:
    """The metric rows of ``ci-eval run EVALSET --agent replay --replay TRACE --metric …``
    (``NAME`` or ``NAME=THRESHOLD`` each), read from its results file; the gate's verdict is
    not the point, a run that wrote no results file is (it says why)."""
    from tests.helpers import run_replay  # ci-eval itself, imported by the tests that run it

    results = workdir / f"{trace.stem}.{evalset.stem}.results.json"
    results.unlink(missing_ok=True)
    options = [arg for metric in metrics for arg in ("--metric", metric)]
    proc = run_replay(
        str(evalset), *options, "--results", str(results), replay=str(trace), cwd=workdir
    )
    assert proc.returncode in (0, 1, 3) and results.exists(), (
        f"exit {proc.returncode}: {proc.stdout[-1500:]}{proc.stderr[-1500:]}"
    )
    return [
        MetricRow(case["eval_id"], m["name"], m["score"], m["status"])
        for found in json.loads(results.read_text())["sets"]
        for case in found["cases"]
        for m in case["metrics"]
        if not m["informational"]
    ]
