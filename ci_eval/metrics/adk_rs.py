"""adk-rs's response metric, so adk-rs users reproduce their numbers. (Its trajectory rule is
``tool_trajectory_avg_score`` with ``match_type: ADK_RS``.)"""

from __future__ import annotations

from typing import Any

from ci_eval.metrics.adk import require_paired, text_of
from ci_eval.metrics.base import Metric, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec


def unigram_recall(expected: str, actual: str) -> float:
    """Fraction of the expected lower-cased whitespace unigrams present in the actual; 1.0 when
    nothing is expected (adk-rs ``final_response_match_v1``)."""
    wanted = expected.lower().split()
    if not wanted:
        return 1.0
    present = set(actual.lower().split())
    return sum(1 for token in wanted if token in present) / len(wanted)


def final_response_match_v1(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    require_paired(expected, actual)
    scores: list[float | None] = [
        unigram_recall(text_of(e.final_response), text_of(a.final_response))
        for e, a in zip(expected, actual, strict=True)
    ]
    return sum(s or 0 for s in scores) / len(scores), scores, {}


register(
    Metric(
        "final_response_match_v1",
        "adk-rs: fraction of the expected response's lower-cased words present in the actual one "
        "(1.0 when nothing is expected).",
        final_response_match_v1,
        default_threshold=0.8,
        origin="adk-rs",
    )
)
