"""ADK's LLM-judged metrics scored as a replayed recording scored them, when no judge is
configured: the recording holds the judge's scores, which are better than none.

The metric's status is the recorded score against today's threshold (PASSED iff score ≥
threshold, as ADK decides it); its reason names the file, and its details say
``as_recorded``. With a judge configured the metric is judged as ever; a metric the recording
holds no score of stays NOT_EVALUATED.
"""

from __future__ import annotations

import math
from typing import Any

from ci_eval.connectors.base import RECORDED_SCORES
from ci_eval.metrics import not_computed_reason
from ci_eval.metrics.base import Metric
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.results import MetricResult
from ci_eval.model.status import Status


def judged(name: str, metric: Metric | None, dialect: str) -> bool:
    """An ADK metric whose score needs a model ci-eval has not got: an LLM judge, or (the
    metrics ci-eval does not compute, such as ``safety_v1``) Vertex AI's evaluation service."""
    if dialect != "adk":
        return False
    return metric.needs_llm if metric is not None else not_computed_reason(name) is not None


def of(
    spec: MetricSpec, metric: Metric | None, dialect: str, actual: list[Invocation]
) -> MetricResult | None:
    """The run's result of ``spec`` as recorded, when it is a judged ADK metric the actual
    invocations' recording scored; None otherwise (it is scored as ever)."""
    if not judged(spec.evaluator or spec.name, metric, dialect):
        return None
    threshold = spec.threshold
    if threshold is None and metric is not None:
        threshold = metric.default_threshold
    return result(spec.name, threshold, actual)


def result(name: str, threshold: float | None, actual: list[Invocation]) -> MetricResult | None:
    """The metric as the actual invocations' recording scored it; None when it holds no score
    of it (or the run has no threshold to hold a score against)."""
    marks: list[dict[str, Any]] = [
        m for inv in actual if isinstance(m := inv.extensions.get(RECORDED_SCORES), dict)
    ]
    if threshold is None or not marks or len(marks) != len(actual):
        return None
    per_invocation: list[float | None] = [m["invocation"].get(name) for m in marks]
    known = [s for s in per_invocation if s is not None]
    score = marks[0]["case"].get(name)
    if score is None:  # no case score recorded: its invocations' mean, as ADK's is
        if not known:
            return None
        score = sum(known) / len(known)
    elif known and not math.isclose(score, sum(known) / len(known), abs_tol=1e-9):
        # not the mean of its invocations (a rubric metric's): the case's score stands alone,
        # as the run's aggregate then reads it
        per_invocation = []
    return MetricResult(
        name,
        Status.PASSED if score >= threshold else Status.FAILED,
        score,
        threshold,
        per_invocation if known else [],
        f"as recorded in {marks[0]['file']} (no judge configured)",
        {"as_recorded": True},
    )
