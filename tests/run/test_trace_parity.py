"""Recorded traces score as agentevals-cli 0.11.0 scores them: for every committed trace and every
eval set beside it, each metric row ci-eval's ``--agent replay --replay TRACE`` gives (eval case,
metric, score within 1e-9, status) is agentevals' row, at agentevals' default threshold (0.5),
at ci-eval's defaults (ADK's: tool trajectory 1.0, response match 0.8) and at 0.2.

agentevals runs from a venv of its own (tests/agentevals_tool.py); without it the tests skip.
The traces are agentevals' own samples (tests/data/traces/agentevals/README.md) and traces real
instrumented agents wrote: google-adk 2.13's default telemetry with and without message content
(tests/data/traces/adk-2.13) and the OpenAI Agents SDK's (tests/data/traces/openai-agents).

A trace without message content pairs with no case in agentevals (no user text to match), so its
rows name no case; ci-eval pairs them by ``session_input.session_id`` and says why each metric is
not evaluated. Those rows are compared without their case: the same metrics, scores and
statuses."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.agentevals_tool import MetricRow, agentevals_runs, ci_eval_rows

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests/data/traces"
_SAMPLE_TRACES = ["helm.json", "helm_2.json", "helm_3.json", "k8s.json"]
_SAMPLE_TRACES.append("tempo_export_with_batches.json")
_SAMPLE_SETS = ["eval_set_helm.json", "evalset_helm_3_2026-02-23.json"]
_SAMPLE_SETS.append("evalset_k8s_2026-02-20.json")
# (trace, eval set), relative to DATA: agentevals' samples each against each of its eval sets,
# then the traces real agents wrote against theirs
PAIRS = [(f"agentevals/{t}", f"agentevals/{e}") for t in _SAMPLE_TRACES for e in _SAMPLE_SETS]
PAIRS += [
    ("adk-2.13/content.otlp.json", "adk-2.13/weather.evalset.json"),
    ("adk-2.13/no-content.otlp.json", "adk-2.13/no-content.evalset.json"),
    ("openai-agents/traces.json", "openai-agents/weather.evalset.json"),
    ("synthetic/openllmetry-indexed.otlp.json", "synthetic/openllmetry-indexed.evalset.json"),
    ("synthetic/failed-agent.otlp.json", "synthetic/failed-agent.evalset.json"),
    ("synthetic/failed-agent.jaeger.json", "synthetic/failed-agent.evalset.json"),
    ("synthetic/provider-only.otlp.json", "synthetic/provider-only.evalset.json"),
]
UNPAIRED = {("adk-2.13/no-content.otlp.json", "adk-2.13/no-content.evalset.json")}
TRAJECTORY, RESPONSE = "tool_trajectory_avg_score", "response_match_score"

# each setting: agentevals' runs (its -t applies to every metric of a run, so one run a
# threshold) and ci-eval's --metric values, at the same thresholds
SETTINGS: dict[str, tuple[list[list[str]], list[str]]] = {
    "agentevals-defaults": (
        [["-m", TRAJECTORY, "-m", RESPONSE]],
        [f"{TRAJECTORY}=0.5", f"{RESPONSE}=0.5"],
    ),
    "ci-eval-defaults": (
        [["-m", TRAJECTORY, "-t", "1.0"], ["-m", RESPONSE, "-t", "0.8"]],
        [TRAJECTORY, RESPONSE],
    ),
    "threshold-0.2": (  # passes the response scores between 0.2 and 0.5 the others fail
        [["-m", TRAJECTORY, "-m", RESPONSE, "-t", "0.2"]],
        [f"{TRAJECTORY}=0.2", f"{RESPONSE}=0.2"],
    ),
}

# pairs ci-eval cannot score as agentevals does yet (#53): they flip when it can
NOT_YET: dict[tuple[str, str], str] = {}

CASES = [
    pytest.param(
        trace,
        evalset,
        setting,
        id=f"{Path(trace).parent.name}-{Path(trace).stem}-{Path(evalset).stem}-{setting}",
        marks=[pytest.mark.xfail(strict=True, reason=NOT_YET[trace, evalset])]
        if (trace, evalset) in NOT_YET
        else [],
    )
    for trace, evalset in PAIRS
    for setting in SETTINGS
]


@pytest.fixture(scope="module")
def agentevals_scores(
    agentevals: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str, str], list[MetricRow]]:
    """agentevals' rows of every pair at every setting, from one interpreter (its imports cost
    seconds a run)."""
    keys, jobs = [], []
    for trace, evalset in PAIRS:
        for setting, (runs, _) in SETTINGS.items():
            for options in runs:
                keys.append((trace, evalset, setting))
                jobs.append((DATA / trace, DATA / evalset, options))
    runs = agentevals_runs(agentevals, jobs, tmp_path_factory.mktemp("agentevals"))
    scores: dict[tuple[str, str, str], list[MetricRow]] = {}
    for key, run in zip(keys, runs, strict=True):
        assert not run.errors, (key, run.errors)
        scores.setdefault(key, []).extend(run.rows)
    return scores


def _sorted(rows: list[MetricRow]) -> list[MetricRow]:
    return sorted(rows, key=lambda r: (r.case or "", r.metric))


def _same_score(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)


@pytest.mark.parametrize(("trace", "evalset", "setting"), CASES)
def test_each_metric_row_is_agentevals_row(
    agentevals_scores: dict[tuple[str, str, str], list[MetricRow]],
    trace: str,
    evalset: str,
    setting: str,
    tmp_path: Path,
) -> None:
    theirs = _sorted(agentevals_scores[trace, evalset, setting])
    assert theirs, "agentevals scored nothing"
    ours = _sorted(ci_eval_rows(DATA / trace, DATA / evalset, SETTINGS[setting][1], tmp_path))
    if (trace, evalset) in UNPAIRED:
        assert {r.case for r in theirs} == {None}
        ours = _sorted([r._replace(case=None) for r in ours])
    assert [(r.case, r.metric, r.status) for r in ours] == [
        (r.case, r.metric, r.status) for r in theirs
    ], (ours, theirs)
    assert all(_same_score(o.score, t.score) for o, t in zip(ours, theirs, strict=True)), (
        ours,
        theirs,
    )
