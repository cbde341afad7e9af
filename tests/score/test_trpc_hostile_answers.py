"""A judge answer built to make a backtracking engine cubic — trpc's hallucination blocks, its
final-response pattern, its segmenter's ``<sentence>`` at the 100,000-character ceiling — is
read in bounded time through the CLI: the corpus's trpc sets replayed with such a judge finish,
and every case is in the results (issue #47)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers import run_replay
from tests.judge_server import JudgeServer
from tests.score.test_trpc_judge_corpus import _judged_sets, recorded_runs

CEILING = 100_000


def _hostile(prompt: str, n: int) -> str:
    if "Segment the final answer" in prompt:
        unit = "<sentence>a"
    elif "detect hallucinations" in prompt:
        unit = "ID:a Reason:b "
    else:
        unit = "reasoning: x "
    return (unit * (CEILING // len(unit) + 1))[:CEILING]


def test_hostile_judge_answers_at_the_ceiling_are_read_in_bounded_time(tmp_path: Path) -> None:
    folders, recorded = recorded_runs(_judged_sets(), tmp_path)
    started = time.monotonic()
    with JudgeServer(_hostile) as server:
        results = tmp_path / "r.json"
        done = run_replay(*folders, "--results", str(results), "--judge-url",
                          server.url, "--judge-model", "m", replay=str(recorded),
                          cwd=tmp_path)  # fmt: skip
    took = time.monotonic() - started
    assert took < 120, took  # generous: seconds on a 2-core runner (Python's re: minutes)
    assert done.returncode in (1, 3), done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    data = json.loads(results.read_text())
    assert sum(len(s["cases"]) for s in data["sets"]) > 0
