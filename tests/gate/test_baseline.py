"""The baseline gate, driven from replayed results: identical → pass; a drop → fail, named in
the summary and the JUnit; noise over repeated runs → no regression; a clear drop → a regression
with its p-value; a baseline read at a git ref; an atomic write that survives a kill."""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_eval.gate import baseline as baseline_store
from ci_eval.gate.compare import compare
from ci_eval.metrics.base import CaseMetric
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.results.file import CaseRecord, RunResults, SetRecord
from tests.conftest import REPO
from tests.helpers import git, run_cli, run_replay

COMMAND = "python samples/agents/weather_agent/command_agent.py"
EVALS = "samples/evals/weather_basic.evalset.json"


def ci_eval(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("baseline")
    first = folder / "first.json"
    ci_eval("run", EVALS, "--agent", "command", "--agent-command", COMMAND, "--results", str(first))
    base = folder / "baseline.json"
    assert ci_eval("baseline", "update", str(first), "--baseline", str(base)).returncode == 0
    # five recorded runs with paris answered worse: the agent "regressed" (a recorded run is
    # evidence once: confirmation reruns replay the recording's next runs)
    five = folder / "five.json"
    ci_eval("run", EVALS, "--agent", "command", "--agent-command", COMMAND, "--num-runs", "5",
            "--results", str(five))  # fmt: skip
    worse = json.loads(five.read_text())
    for case in worse["sets"][0]["cases"]:
        if case["eval_id"] == "paris_weather":
            for run in case["runs"]:
                actual = run["invocations"][0]["actual"]
                actual["final_response"]["parts"][0]["text"] = "Paris is nice."
    edited = folder / "worse-recording.json"
    edited.write_text(json.dumps(worse))
    return {"folder": folder, "first": first, "baseline": base, "worse": edited}


def test_identical_results_pass_with_no_regression(recorded: dict[str, Path]) -> None:
    proc = run_replay(
        EVALS, "--baseline", str(recorded["baseline"]), replay=str(recorded["first"]), cwd=REPO
    )
    # berlin fails its thresholds, as it did in the baseline: a known failure, not a regression
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 regressions" in proc.stdout


def test_a_drop_fails_the_gate_and_is_named(recorded: dict[str, Path]) -> None:
    folder = recorded["folder"]
    proc = run_replay(
        EVALS,
        "--baseline",
        str(recorded["baseline"]),
        "--junit",
        str(folder / "junit.xml"),
        "--summary",
        str(folder / "summary.md"),
        "--results",
        str(folder / "worse.json"),
        replay=str(recorded["worse"]),
        cwd=REPO,
    )
    assert proc.returncode == 1
    # a one-run baseline is too little history: four confirmation reruns (the recording's
    # runs 2 to 5) fail too, which confirms the break
    assert (
        "REGRESSION weather_basic:paris_weather: passed 1 of 1 run on main → failed 5 of 5 now; "
        "response_match_score 1 → 0.4; main's history (" in proc.stdout
    )
    assert (
        "): short history: only 1 run on main (the history test needs 5); failed all 5 runs, "
        "reruns included" in proc.stdout
    )
    assert "confirmation reruns: 4 agent runs of 1 failing case (weather_basic:paris_weather)" in (
        proc.stderr + proc.stdout
    )
    assert proc.stdout.splitlines()[-1].startswith(
        "gate failed: 1 regression (weather_basic:paris_weather)"
    )
    summary = (folder / "summary.md").read_text()
    assert summary.startswith("## ❌ ci-eval: gate failed: 1 regression")
    assert "### Blocking: 1 regression" in summary
    assert "- 🔴 **regression** · weather_basic › paris_weather — passed 1 of 1 run" in summary
    junit = (folder / "junit.xml").read_text()
    assert '<failure message="regression: passed 1 of 1 run' in junit
    assert "response_match_score 1 → 0." in junit
    results = json.loads((folder / "worse.json").read_text())
    assert results["comparison"]["regressions"] == 1
    # compare on the saved results reaches the same verdict
    again = ci_eval("compare", str(folder / "worse.json"), "--baseline", str(recorded["baseline"]))
    assert again.returncode == 1
    # --fail-on failure ignores regressions and fails on berlin's thresholds instead
    assert (
        ci_eval(
            "compare",
            str(folder / "worse.json"),
            "--baseline",
            str(recorded["baseline"]),
            "--fail-on",
            "error",
        ).returncode
        == 0
    )


def test_without_a_baseline_the_verdict_says_it_gates_on_thresholds(
    recorded: dict[str, Path],
) -> None:
    proc = ci_eval("compare", str(recorded["first"]), cwd=recorded["folder"])
    assert proc.returncode == 1  # berlin fails its thresholds
    assert "gate on thresholds only: no baseline at .ci-eval/baseline.json" in proc.stdout


def test_a_named_baseline_that_is_missing_is_a_usage_error(recorded: dict[str, Path]) -> None:
    typo = recorded["folder"] / "first.jsn"
    proc = ci_eval("compare", str(recorded["first"]), "--baseline", str(typo))
    assert proc.returncode == 2
    assert f"--baseline {typo}: no such file (did you mean {recorded['first']}?)" in proc.stderr


def test_a_named_baseline_that_is_a_folder_is_a_usage_error(recorded: dict[str, Path]) -> None:
    proc = ci_eval("compare", str(recorded["first"]), "--baseline", str(recorded["folder"]))
    assert proc.returncode == 2 and "is a directory, not a baseline file" in proc.stderr


def test_bad_fail_on_is_a_usage_error(recorded: dict[str, Path]) -> None:
    proc = ci_eval("compare", str(recorded["first"]), "--fail-on", "everything")
    assert proc.returncode == 2 and "--fail-on: unknown everything" in proc.stderr


# --- statistics over repeated runs ---------------------------------------------------------


def _results(runs: list[float], threshold: float = 0.5) -> RunResults:
    spec = MetricSpec("m", threshold)
    mean = sum(runs) / len(runs)
    passes = sum(1 for r in runs if r >= threshold)
    status = "PASSED" if mean >= threshold else "FAILED"
    case = CaseRecord(
        "c",
        "f.json",
        1,
        scored_status=status,
        metrics=[CaseMetric("m", status, mean, threshold, runs=runs, pass_rate=passes / len(runs))],
    )
    return RunResults(
        [SetRecord("s", "f.json", "adk", MetricConfig([spec], "x", "adk"), [case], [spec])],
        "agent",
        "",
        0.0,
    )


def _baseline(runs: list[float]) -> dict[str, Any]:
    return baseline_store.from_results(_results(runs), commit="abc")


def test_a_short_history_sees_a_drop_over_three_runs_when_three_confirm_it() -> None:
    # the gate before reruns was blind here: 1,1,1 → 0,0,0 could not reach p < 0.05
    result = compare(_results([0, 0, 0]), _baseline([1, 1, 1]), confirm=3)
    [judged] = result.cases
    assert judged.judgement == "regression" and "short history" in judged.method
    assert "passed 3 of 3 runs on main, failed 3 of 3 now" in judged.describe()


def test_new_and_removed_cases_are_reported_apart() -> None:
    base = _baseline([1])
    base.sets["s"].cases["gone"] = copy.deepcopy(base.sets["s"].cases["c"])
    current = _results([1])
    current.sets[0].cases.append(CaseRecord("fresh", "f.json", 2, scored_status="PASSED"))
    result = compare(current, base)
    assert result.new_cases == [("s", "fresh")] and result.removed_cases == [("s", "gone")]
    assert not result.regressions


# --- where the baseline comes from ---------------------------------------------------------


def test_baseline_from_a_git_ref(recorded: dict[str, Path], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    target = repo / ".ci-eval/baseline.json"
    target.parent.mkdir()
    target.write_text(recorded["baseline"].read_text())
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "baseline")
    git(repo, "checkout", "-q", "-b", "feature")
    target.write_text("{ broken on the branch")  # the working copy must not be what is read
    git(repo, "commit", "-q", "-am", "break it")
    proc = ci_eval("compare", str(recorded["first"]), "--baseline-ref", "main", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 regressions" in proc.stdout
    bad = ci_eval("compare", str(recorded["first"]), "--baseline-ref", "no-such-ref", cwd=repo)
    assert bad.returncode == 2 and "no such commit" in bad.stderr


def test_atomic_write_survives_a_kill_between_write_and_rename(tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    old = baseline_store.from_results(_results([1.0]), commit="old")
    baseline_store.write(target, old)
    before = target.read_text()
    script = (
        "import os, signal, sys\n"
        "from ci_eval.gate import baseline\n"
        "from tests.gate.test_baseline import _results\n"
        "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"baseline.write(__import__('pathlib').Path({str(target)!r}), "
        "baseline.from_results(_results([0.0]), commit='new'))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == -signal.SIGKILL
    assert target.read_text() == before  # the old baseline is intact
    assert json.loads(target.read_text())["provenance"]["commit"] == "old"
    # (the kill hit write_text_atomic's rename: the same helper every baseline write uses)


def test_baseline_file_is_stable_and_sorted(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    data = baseline_store.from_results(_results([1.0, 0.0]), commit="x")
    baseline_store.write(a, data)
    baseline_store.write(b, json.loads(a.read_text()))
    assert a.read_text() == b.read_text()
    keys = list(json.loads(a.read_text()))
    assert keys == sorted(keys)


def test_old_or_differently_configured_baselines_warn(
    recorded: dict[str, Path], tmp_path: Path
) -> None:
    data = json.loads(recorded["baseline"].read_text())
    data["provenance"]["date"] = "2020-01-01T00:00:00+00:00"
    data["provenance"]["metrics_digest"] = "different"
    for stored in data["sets"].values():  # recorded before the baseline kept each criterion
        stored.pop("criteria", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    proc = ci_eval("compare", str(recorded["first"]), "--baseline", str(old))
    assert "days old (more than 30)" in proc.stderr
    assert "another metric configuration" in proc.stderr


def test_the_update_says_the_runs_the_cases_hold_not_the_window(tmp_path: Path) -> None:
    agent = ["--agent", "command", "--agent-command", COMMAND]
    ci_eval("run", EVALS, *agent, "--results", str(tmp_path / "one.json"))
    ci_eval("run", EVALS, *agent, "--num-runs", "5", "--case", "weather_basic:paris_weather",
            "--results", str(tmp_path / "paris.json"))  # fmt: skip
    base = tmp_path / "baseline.json"
    first = ci_eval("baseline", "update", str(tmp_path / "one.json"), "--baseline", str(base))
    assert first.stdout.startswith(
        f"baseline written to {base}: 3 cases with 1 run each, keeping each case's last 20; "
    )
    then = ci_eval("baseline", "update", str(tmp_path / "paris.json"), "--baseline", str(base))
    assert then.stdout.startswith(
        f"baseline written to {base}: 3 cases with 1–6 runs each, keeping each case's last 20; "
    )


def test_the_update_says_the_window_where_it_cut_the_runs(tmp_path: Path) -> None:
    agent = ["--agent", "command", "--agent-command", COMMAND]
    ci_eval("run", EVALS, *agent, "--num-runs", "4", "--results", str(tmp_path / "four.json"))
    base = tmp_path / "baseline.json"
    done = ci_eval(
        "baseline", "update", str(tmp_path / "four.json"), "--baseline", str(base), "--window", "3"
    )
    assert done.stdout.startswith(
        f"baseline written to {base}: 3 cases with 3 runs each, keeping each case's last 3; "
    )
