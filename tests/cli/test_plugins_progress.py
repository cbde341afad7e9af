"""Custom metrics from an installed package's entry point; the progress line of long runs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from ci_eval.model.status import Status
from ci_eval.run.progress import Progress
from tests.conftest import REPO


def test_a_metric_from_the_ci_eval_metrics_entry_point(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "polite_metrics").mkdir(parents=True)
    (site / "polite_metrics/__init__.py").write_text(
        "def polite(expected, actual, criterion):\n"
        "    return {'score': 1.0, 'per_invocation': [1.0 for _ in actual],\n"
        "            'details': {'checked': len(actual)}}\n"
    )
    dist = site / "polite_metrics-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: polite-metrics\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ci_eval.metrics]\npolite = polite_metrics:polite\n")
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ci_eval",
            "run",
            "samples/evals/weather_basic.evalset.json",
            "--agent",
            "command",
            "--agent-command",
            "python samples/agents/weather_agent/command_agent.py",
            "--metric",
            "polite=0.5",
            "--results",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = json.loads(out.read_text())["sets"][0]["cases"][0]
    [metric] = [m for m in case["metrics"] if m["name"] == "polite"]
    assert (metric["score"], metric["status"]) == (1.0, "PASSED")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_quiet_for_short_runs_and_speaks_for_long_ones() -> None:
    quiet = io.StringIO()
    bar = Progress(3, stream=quiet, quiet_for=60)
    for _ in range(3):
        bar.advance()
        bar.case(Status.PASSED)
    bar.finish()
    assert quiet.getvalue() == ""
    log = io.StringIO()  # CI log: whole lines
    bar = Progress(3, 6, stream=log, quiet_for=0)
    for status in (Status.ERROR, Status.FAILED, Status.PASSED):
        bar.advance()
        bar.advance()
        bar.case(status)
    # cases, as the final line counts them: failures and errors apart
    assert (
        log.getvalue()
        .splitlines()[-1]
        .startswith("ci-eval: 3/3 cases done, 1 failed, 1 error (6/6 runs), ")
    )
    tty = _Terminal()  # a terminal: one line rewritten in place, closed by a newline
    bar = Progress(2, stream=tty, quiet_for=0)
    bar.advance()
    bar.case(Status.PASSED)
    bar.finish()
    assert tty.getvalue().startswith("\r") and tty.getvalue().endswith("\n")
