"""adk-rs's metrics as its eval runner scores them, so adk-rs users reproduce their numbers.

Read from skundu42/adk-rs ``src/eval/metrics.rs`` and ``src/eval/runner.rs`` (the single-crate
layout; ``adk-rs-eval/src/{metrics,runner}.rs`` at 433b5668 before it) and the Evaluation page
``docs/content/eval.ts`` (f2a9f2fb):

- each evaluator scores one invocation pair; an invocation passes when
  ``score + 1e-9 >= threshold``;
- a metric's reported score is the mean over the case's invocations, and its status the AND of
  the per-invocation statuses: one failing invocation fails it, whatever the mean;
- ``tool_trajectory_avg_score``: in-order exact ``(name, args)`` matches over
  ``max(len expected, len actual, 1)``; default threshold 1.0 (``TrajectoryMatch::default``);
- ``final_response_match_v1``: the fraction of the expected response's lower-cased whitespace
  tokens found as whole tokens in the actual response (1.0 when nothing is expected); default
  threshold 0.8 (``ResponseMatch::default``; the adk-rs CLI's ``eval`` passes 0.5).

Registered as adk-rs's: an adk-rs set is scored with these (``score.scorer.metrics_for``); the
ADK names keep ADK's meaning elsewhere.
"""

from __future__ import annotations

from typing import Any

from ci_eval.metrics.adk import adk_rs_fraction, require_paired, text_of
from ci_eval.metrics.base import Metric, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

# adk-rs compares with a 1e-9 slack so that a score like 0.7999999999 from float division
# still meets a threshold of 0.8
_SLACK = 1e-9


def invocation_passes(score: float, threshold: float) -> bool:
    """adk-rs's per-invocation verdict (``score + 1e-9 >= threshold``)."""
    return score + _SLACK >= threshold


def unigram_recall(expected: str, actual: str) -> float:
    """Fraction of the expected lower-cased whitespace tokens present as whole tokens in the
    actual; 1.0 when nothing is expected (adk-rs ``final_response_match_v1``). A repeated
    expected token counts each time, as adk-rs loops over every expected token."""
    wanted = expected.lower().split()
    if not wanted:
        return 1.0
    present = set(actual.lower().split())
    return sum(1 for token in wanted if token in present) / len(wanted)


def _mean(scores: list[float | None]) -> float:
    return sum(s or 0.0 for s in scores) / len(scores)


def final_response_match_v1(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    require_paired(expected, actual)
    # an invocation without final_response reads as "" (adk-rs ``response_text``)
    scores: list[float | None] = [
        unigram_recall(text_of(e.final_response), text_of(a.final_response))
        for e, a in zip(expected, actual, strict=True)
    ]
    return _mean(scores), scores, {}


def tool_trajectory(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    """adk-rs's ``TrajectoryMatch``: position-wise matches over the longer list; it has no
    match types or ``ignore_args``."""
    require_paired(expected, actual)
    scores: list[float | None] = [
        adk_rs_fraction(a.tool_calls(), e.tool_calls(), ignore_args=False)
        for e, a in zip(expected, actual, strict=True)
    ]
    return _mean(scores), scores, {}


register(
    Metric(
        "final_response_match_v1",
        "adk-rs: fraction of the expected response's lower-cased words present as whole words "
        "in the actual one (1.0 when nothing is expected); mean over invocations, FAILED when "
        "any invocation is below the threshold.",
        final_response_match_v1,
        default_threshold=0.8,
        origin="adk-rs",
        invocation_passes=invocation_passes,
    )
)
register(
    Metric(
        "tool_trajectory_avg_score",
        "adk-rs: in-order exact (name, args) matches / max(len expected, len actual, 1) per "
        "invocation; mean over invocations, FAILED when any invocation is below the threshold.",
        tool_trajectory,
        default_threshold=1.0,
        origin="adk-rs",
        invocation_passes=invocation_passes,
    ),
    dialect="adk-rs",
)
