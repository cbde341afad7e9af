"""The exit codes (part of the interface), the ``fail_on`` choices, and the quality gate that
picks an exit code from the :class:`~ci_eval.gate.verdict.Verdict` every reporter renders."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_eval.errors import EXIT_GATE, EXIT_INFRA, EXIT_INPUT, EXIT_OK, InputError  # noqa: F401
from ci_eval.gate.verdict import Verdict, verdict  # noqa: F401

if TYPE_CHECKING:
    from ci_eval.results.file import RunResults


def gate(results: RunResults) -> int:
    return verdict(results).exit_code
