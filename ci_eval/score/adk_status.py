"""A case's status as ADK gives it, kept beside ci-eval's where the two differ.

ADK skips a metric that was not evaluated (google-adk 2.13 ``evaluation/local_eval_service.py``,
``LocalEvalService._generate_final_eval_status``), so it passes a case whose other metrics pass;
ci-eval's :func:`ci_eval.score.scorer.case_status` leaves that case NOT_EVALUATED, as the gate
never passes what was not measured. The ADK user reads both. Pure logic.
"""

from __future__ import annotations

from ci_eval.dialects import DIALECTS
from ci_eval.model.results import CaseMetric
from ci_eval.model.status import Status


def adk_case_status(metrics: list[CaseMetric]) -> Status:
    """ADK's fold over a case's metrics: a FAILED one fails the case, else a PASSED one passes
    it; a NOT_EVALUATED or informational one is skipped (NOT_EVALUATED when all are)."""
    statuses = [m.status for m in metrics if not m.informational and m.status != Status.INFO]
    if Status.FAILED in statuses:
        return Status.FAILED
    if Status.PASSED in statuses:
        return Status.PASSED
    return Status.NOT_EVALUATED


def _adks(set_dialect: str) -> bool:
    """Whether a set of this dialect holds ADK's files (in any of their shapes)."""
    return any(d.name == set_dialect and getattr(d, "tool", None) == "ADK" for d in DIALECTS)


def adk_status_beside(
    status: Status, metrics: list[CaseMetric], dialect: str, set_dialect: str
) -> Status | None:
    """ADK's status for an ADK case scored with ADK's metrics (``dialect``), where it is not
    ``status``, else None. Only a case left NOT_EVALUATED for a metric not evaluated differs:
    ci-eval's other verdicts are ADK's fold too, or say what ADK does not score (an agent's
    error, a skipped case, a metric's ERROR)."""
    if status != Status.NOT_EVALUATED or dialect != "adk" or not _adks(set_dialect):
        return None
    own = adk_case_status(metrics)
    return own if own != status else None
