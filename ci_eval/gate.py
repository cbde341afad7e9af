"""The exit codes (part of the interface), the ``fail_on`` choices, and the quality gate that
picks an exit code from the :class:`~ci_eval.verdict.Verdict` every reporter renders."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_eval.errors import EXIT_GATE, EXIT_INFRA, EXIT_INPUT, EXIT_OK, InputError  # noqa: F401
from ci_eval.verdict import Verdict, verdict  # noqa: F401

if TYPE_CHECKING:
    from ci_eval.results import RunResults

FAIL_ON = ("failure", "regression", "error", "not-evaluated")


def gate(results: RunResults) -> int:
    return verdict(results).exit_code


def parse_fail_on(values: list[str], name: str = "--fail-on") -> tuple[str, ...]:
    """``--fail-on`` values (repeated or comma-separated), checked against :data:`FAIL_ON`;
    ``name`` is how the user named the setting (in messages)."""
    items = tuple(x.strip() for v in values for x in v.split(",") if x.strip())
    unknown = [x for x in items if x not in FAIL_ON]
    if unknown:
        raise InputError(f"{name}: unknown {', '.join(unknown)}; choose from " + ", ".join(FAIL_ON))
    return items
