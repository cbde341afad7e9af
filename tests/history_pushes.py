"""Main's pushes built in code, for ``ci-eval history``'s tests and benchmark: results files of
a few eval sets whose cases pass, fail, flake and error by a known rule (:func:`outcome`), with
each run's tokens and wall time known too, so a page's numbers can be checked against the rule
rather than against the code that drew them."""

from __future__ import annotations

from pathlib import Path

from ci_eval.metrics.base import CaseMetric
from ci_eval.model.evalset import Invocation
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.usage import Usage
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    write_results,
)

TURN = Invocation.model_validate(
    {"invocation_id": "t", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
)
SPEC = MetricSpec("m", 1.0)
RUNS = 3
PRICES = {"agent": {"input": 2.0, "output": 8.0}}


def outcome(push: int, set_n: int, case_n: int, run: int) -> str:
    """``pass``, ``fail`` or ``error``: case 0 always passes, case 1 flakes (fails one run in
    five), case 2 breaks at push 20, case 3 errors on its first run of every seventh push; the
    others pass."""
    if case_n == 1:
        return "fail" if (push * RUNS + run + set_n) % 5 == 0 else "pass"
    if case_n == 2:
        return "fail" if push >= 20 else "pass"
    if case_n == 3 and push % 7 == 0 and run == 0:
        return "error"
    return "pass"


def tokens(push: int, case_n: int, run: int) -> int:
    return 1000 * (case_n + 1) + 10 * push + run


def seconds(push: int, case_n: int, run: int) -> float:
    return round(1.0 + case_n / 2 + run / 10 + (push % 4) / 100, 3)


def _run(n: int, spent: int, wall: float, error: str | None = None) -> RunRecord:
    usage = Usage(spent * 3 // 4, spent - spent * 3 // 4, model_calls=1)
    turns = [] if error else [InvocationRecord(TURN, TURN, duration_s=wall, usage=usage)]
    return RunRecord(n, turns, error=error, duration_s=wall)


def push_results(
    push: int, sets: int = 2, cases: int = 5, case_ids: dict[int, str] | None = None
) -> RunResults:
    """One push's results: ``sets`` sets ``s0``… of ``cases`` cases ``c0``… (or ``case_ids``'
    names), ``RUNS`` runs each, by :func:`outcome`."""
    records = []
    config = MetricConfig([SPEC], "c.json", "adk")
    for s in range(sets):
        out = []
        for i in range(cases):
            runs, scores = [], []
            for r in range(RUNS):
                what = outcome(push, s, i, r)
                wall = seconds(push, i, r)
                if what == "error":
                    runs.append(_run(r + 1, 0, wall, error="agent: HTTP 500 <b>boom</b>"))
                    continue
                runs.append(_run(r + 1, tokens(push, i, r), wall))
                scores.append(1.0 if what == "pass" else 0.0)
            status = "PASSED" if scores and min(scores) >= 1.0 else "FAILED"
            metric = CaseMetric("m", status, sum(scores) / max(1, len(scores)), 1.0, runs=scores)
            name = (case_ids or {}).get(i, f"c{i}")
            out.append(
                CaseRecord(name, f"s{s}.json", 1, runs, metrics=[metric], scored_status=status)
            )
        records.append(SetRecord(f"s{s}", f"s{s}.json", "adk", config, out, [SPEC]))
    results = RunResults(
        records, "agent", f"2026-11-{1 + push // 2:02d}T{push % 2:02d}:00:00+00:00", 1.0
    )
    results.run_id = f"{push:032x}"
    results.settings = RunFacts(num_runs=RUNS, prices=PRICES)
    return results


def write_pushes(folder: Path, pushes: int = 30, **shape: object) -> list[Path]:
    """``pushes`` results files, push 0 first."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in range(pushes):
        path = folder / f"push-{p:02d}.json"
        write_results(path, push_results(p, **shape))  # type: ignore[arg-type]
        paths.append(path)
    return paths
