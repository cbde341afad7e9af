"""The exit codes (part of the interface) and the quality gate that picks one."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ci_eval.results import RunResults

EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INFRA = 0, 1, 2, 3
FAIL_ON = ("failure", "regression", "error")


def gate(results: RunResults) -> int:
    """Exit code per --fail-on: 3 when errors kept cases from being scored, 1 when a case
    failed its thresholds or regressed, else 0."""
    fail_on = set(results.fail_on)
    if "error" in fail_on and (results.count("ERROR") or results.interrupted):
        return EXIT_INFRA
    if "failure" in fail_on and results.count("FAILED"):
        return EXIT_GATE
    if "regression" in fail_on and results.comparison and results.comparison.regressions:
        return EXIT_GATE
    return EXIT_OK
