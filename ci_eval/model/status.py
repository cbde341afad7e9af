"""Every status a case or a metric can have, in one place."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A case's or a metric's status. A ``StrEnum``: it is its name in JSON, in templates and
    in f-strings, and compares equal to that string (results files and custom templates keep
    reading ``"PASSED"``)."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    NOT_EVALUATED = "NOT_EVALUATED"
    SKIPPED = "SKIPPED"  # a case that was not run
    COMPLETED = "COMPLETED"  # a case that ran and is not scored yet
    INFO = "INFO"  # an informational metric: reported, never failing


#: what a case can end as, and what the results file counts (``totals``)
CASE_STATUSES = (
    Status.PASSED,
    Status.FAILED,
    Status.ERROR,
    Status.NOT_EVALUATED,
    Status.SKIPPED,
    Status.COMPLETED,
)
#: what a metric can end as
METRIC_STATUSES = (Status.PASSED, Status.FAILED, Status.NOT_EVALUATED, Status.ERROR, Status.INFO)
