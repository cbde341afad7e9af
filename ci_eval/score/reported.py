"""Scores a source tool's report gave for a run (an adk-rs report replayed): used as they are,
instead of scoring a conversation the report does not hold."""

from __future__ import annotations

from typing import Any

from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.results import MetricResult
from ci_eval.model.status import Status

NOT_REPORTED = "the replayed report has no score for this metric"
_REPORTED = {"PASSED": Status.PASSED, "FAILED": Status.FAILED, "ERROR": Status.ERROR}


def from_report(specs: list[MetricSpec], reported: dict[str, Any]) -> list[MetricResult]:
    """A run's metrics as a source tool's report gave them (adk-rs's: score, status and
    details per metric): its verdicts stand, ci-eval's thresholds are shown beside them. A
    metric of the set the report does not score is NOT_EVALUATED; one the report adds is kept,
    at the threshold its details name, if any."""
    out = []
    thresholds = {s.name: s.threshold for s in specs}
    names = [*thresholds, *(n for n in reported if n not in thresholds)]
    for name in names:
        entry = reported.get(name)
        if not isinstance(entry, dict):
            out.append(
                MetricResult(
                    name, Status.NOT_EVALUATED, threshold=thresholds.get(name), reason=NOT_REPORTED
                )
            )
            continue
        details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
        threshold = thresholds.get(name, details.get("threshold"))
        per_invocation = details.get("per_invocation")
        reason = details.get("reason") if isinstance(details.get("reason"), str) else None
        score = entry["score"]
        at_or_over = (
            isinstance(score, int | float)
            and isinstance(threshold, int | float)
            and score >= threshold
        )
        if entry["status"] == "FAILED" and reason is None and at_or_over:
            reason = "FAILED in the replayed report"  # the score alone does not say why
        out.append(
            MetricResult(
                name,
                _REPORTED[entry["status"]],
                entry["score"],
                threshold if isinstance(threshold, int | float) else None,
                list(per_invocation) if isinstance(per_invocation, list) else [],
                reason,
                {"reported": True},
            )
        )
    return out
