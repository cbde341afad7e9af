"""What every reporter says about a case, computed once: why it failed, and the expected-vs-
actual tool calls and responses of its invocations. Pure functions over results."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ci_eval.metrics.adk import text_of
from ci_eval.model import FunctionCall, Invocation
from ci_eval.results import CaseRecord, RunRecord

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _clean(value: Any) -> Any:
    """ANSI codes out of every string in a JSON value (json.dumps would spell them out)."""
    if isinstance(value, str):
        return strip_ansi(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def fmt_call(call: FunctionCall) -> str:
    args = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in _clean(call.args or {}).items()
    )
    return f"{strip_ansi(call.name or '')}({args})"


@dataclass
class InvocationDiff:
    number: int
    user: str
    expected_calls: list[str]
    actual_calls: list[str] | None  # None: the agent did not answer this turn
    expected_response: str
    actual_response: str | None
    error: str | None = None

    @property
    def calls_differ(self) -> bool:
        return self.actual_calls is not None and self.actual_calls != self.expected_calls


def _text(inv: Invocation | None) -> str | None:
    return None if inv is None else text_of(inv.final_response)


def invocation_diffs(run: RunRecord) -> list[InvocationDiff]:
    return [
        InvocationDiff(
            n,
            text_of(i.expected.user_content),
            [fmt_call(c) for c in i.expected.tool_calls()],
            None if i.actual is None else [fmt_call(c) for c in i.actual.tool_calls()],
            text_of(i.expected.final_response),
            _text(i.actual),
            i.error,
        )
        for n, i in enumerate(run.invocations, 1)
    ]


def shown_run(case: CaseRecord) -> RunRecord | None:
    """The run worth showing: the first errored or failing one, else the first."""
    for run in case.runs:
        if run.error or any(m.status in ("FAILED", "ERROR") for m in run.metrics):
            return run
    return case.runs[0] if case.runs else None


def failing_metrics(case: CaseRecord) -> list[str]:
    return [
        f"{m.name} {fmt(m.score)} < {fmt(m.threshold)}"
        for m in case.metrics
        if m.status == "FAILED"
    ]


def error_reason(case: CaseRecord) -> str:
    if case.error:
        return case.error
    for m in case.metrics:
        if m.status == "ERROR":
            return f"{m.name}: {m.reason}"
    return "error"


def not_evaluated_reason(case: CaseRecord) -> str:
    reasons = [
        f"{m.name}: {m.reason}" for m in case.metrics if m.status == "NOT_EVALUATED" and m.reason
    ]
    return "; ".join(reasons) or "no metric could be evaluated"


def scores(case: CaseRecord) -> dict[str, Any]:
    return {m.name: m.score for m in case.metrics}
