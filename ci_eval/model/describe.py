"""What every reporter says about a case, computed once: why it failed, and the expected-vs-
actual tool calls and responses of its invocations. Pure functions over results."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from json.encoder import encode_basestring  # json's C escaper, as json.dumps uses
from typing import Any

from ci_eval.model import FunctionCall, Invocation
from ci_eval.model.results import CaseRecord, InvocationRecord, RunRecord
from ci_eval.model.status import Status
from ci_eval.text.inert import strip_ansi


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


def _arg(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, by the same C escaper for the common kinds."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is int:
        return int.__repr__(value)
    return json.dumps(value, ensure_ascii=False)


# characters of one agent text (a reply, a turn's tool calls) that a plain-text report shows;
# the results file keeps them all
TEXT_LIMIT = 4000


def shorten(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text``, or its first ``limit`` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit:,} characters; the results file has them all)"


def fmt_call(call: FunctionCall) -> str:
    args = ", ".join(f"{k}={_arg(v)}" for k, v in _clean(call.args or {}).items())
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
    # the calls' names and arguments as values: arguments in another key order are the same
    # call, though their text differs
    same_calls: bool | None = None
    # --otlp: "spans" when the actual calls came from the agent's spans, "reply" from its
    # reply; None without --otlp. ``spans_note``: what the spans said otherwise (a
    # disagreement with the reply, spans that could not be read, a wait that ended first)
    calls_from: str | None = None
    spans_note: str | None = None

    @property
    def calls_differ(self) -> bool:
        if self.actual_calls is None:
            return False
        if self.same_calls is not None:
            return not self.same_calls
        return self.actual_calls != self.expected_calls


def _response(inv: Invocation | None) -> str | None:
    if inv is None:
        return None
    return inv.final_response.text() if inv.final_response is not None else ""


def _diff(n: int, record: InvocationRecord) -> InvocationDiff:
    # each read of a compacted record's invocation rebuilds it: read each once
    expected, actual = record.expected, record.actual
    wanted = expected.tool_calls()
    got = None if actual is None else actual.tool_calls()
    return InvocationDiff(
        n,
        expected.user_content.text(),
        [fmt_call(c) for c in wanted],
        None if got is None else [fmt_call(c) for c in got],
        _response(expected),
        _response(actual),
        record.error,
        None if got is None else _calls(got) == _calls(wanted),
        *_trajectory(record),
    )


def _trajectory(record: InvocationRecord) -> tuple[str | None, str | None]:
    """Where the turn's calls came from and what its spans said besides (--otlp)."""
    t = record.trajectory
    if t is None:
        return None, None
    if t.disagreement:
        note = f"the agent's spans disagree, the reply's calls are scored: {t.disagreement}"
    elif t.unread:
        note = f"the agent's spans could not be read: {t.unread}"
    elif t.spans and not t.complete:
        note = f"{t.spans} spans had come when the wait ended; the agent's top span had not"
    elif not t.spans:
        note = "no span came from the agent for this turn"
    else:
        note = None
    return str(t.source), note


def _calls(calls: list[FunctionCall]) -> list[tuple[str | None, Any]]:
    return [(c.name, c.args or {}) for c in calls]


def invocation_diffs(run: RunRecord) -> list[InvocationDiff]:
    kept = _KEPT.get()
    found = kept.get(id(run)) if kept is not None else None
    if found is not None and found[0] is run:
        return list(found[1])
    diffs = [_diff(n, i) for n, i in enumerate(run.invocations, 1)]
    if kept is not None:
        kept[id(run)] = (run, list(diffs))
    return diffs


# while the reports render a run's results, scrubbed and no longer changing (see diffs_kept)
_KEPT: ContextVar[dict[int, tuple[RunRecord, list[InvocationDiff]]] | None] = ContextVar(
    "diffs_kept", default=None
)


@contextlib.contextmanager
def diffs_kept() -> Iterator[None]:
    """Each run's diffs worked out once while this lasts (the terminal's reason, JUnit's body and
    the summary read the same failing runs): only around reports of results that no longer
    change, redacted already. Held on the calling thread's context (a worker thread sees none)."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def shown_run(case: CaseRecord) -> RunRecord | None:
    """The run worth showing: the first errored or failing one, else the first."""
    for run in case.runs:
        if run.error or any(m.status in (Status.FAILED, Status.ERROR) for m in run.metrics):
            return run
    return case.runs[0] if case.runs else None


def failing_metrics(case: CaseRecord) -> list[str]:
    return [
        _against(m.name, m.score, m.threshold, m.reason)
        for m in case.metrics
        if m.status == Status.FAILED
    ]


def _against(
    name: str, score: float | None, threshold: float | None, reason: str | None = None
) -> str:
    """A failing metric against its threshold: ``score < threshold``, or the other side when
    the metric's own verdict failed it there (an ADK custom metric's cost over its limit;
    adk-rs's turn below the threshold); then the metric's reason, where it gives one (a trpc
    criterion's field that differs)."""
    if score is not None and threshold is not None and score >= threshold:
        side = f"{name} {fmt(score)} {'>' if score > threshold else '='} {fmt(threshold)}"
    else:
        side = f"{name} {fmt(score)} < {fmt(threshold)}"
    return f"{side} ({reason})" if reason else side


def with_run(case: CaseRecord, run: RunRecord, text: str) -> str:
    """``run 2 of 3, turn 1: …`` — which run, when there were several."""
    if len(case.runs) < 2:
        return text
    label = f"run {run.run} of {len(case.runs)}"
    if text.startswith("turn "):
        return f"{label}, {text}"
    return f"{label}: {text}"


def run_outcome(run: RunRecord) -> str:
    """PASSED, FAILED or ERROR for one run."""
    if run.error or any(m.status == Status.ERROR for m in run.metrics):
        return Status.ERROR
    if any(m.status == Status.FAILED for m in run.metrics):
        return Status.FAILED
    return Status.PASSED


def run_reason(run: RunRecord) -> str:
    if run.error:
        return run.error
    errors = [f"{m.name}: {m.reason}" for m in run.metrics if m.status == Status.ERROR]
    failing = [
        _against(m.name, m.score, m.threshold, m.reason)
        for m in run.metrics
        if m.status == Status.FAILED
    ]
    return "; ".join(errors + failing) or "passed"


def error_reason(case: CaseRecord) -> str:
    if case.error:
        run = next(r for r in case.runs if r.error)
        return with_run(case, run, case.error)
    for m in case.metrics:
        if m.status == Status.ERROR:
            return f"{m.name}: {m.reason}"
    return "error"


def by_reason(named: list[tuple[str, str]], joint: str = ": ") -> list[str]:
    """``(name, reason)`` pairs, the metrics that share a reason said once: ``a, b: reason``
    (a trace without content: every metric for the same reason)."""
    grouped: dict[str, list[str]] = {}
    for name, reason in named:
        grouped.setdefault(reason, []).append(name)
    return [f"{', '.join(names)}{joint}{reason}" for reason, names in grouped.items()]


def not_evaluated_reason(case: CaseRecord) -> str:
    reasons = [
        (m.informational, m.name, m.reason)
        for m in case.metrics
        if m.status == Status.NOT_EVALUATED and m.reason
    ]
    # an informational metric never decides a case: its reason only when no other is given
    said = [(n, why) for informational, n, why in reasons if not informational] or [
        (n, why) for _, n, why in reasons
    ]
    return "; ".join(by_reason(said)) or "no metric could be evaluated"


def trajectory_counts(cases: Iterable[CaseRecord]) -> dict[str, int]:
    """The turns of ``cases`` by where their tool calls came from (``--otlp``: spans, reply,
    none), in that order; turns without a record of it (not answered) are not counted."""
    counts = dict.fromkeys(("spans", "reply", "none"), 0)
    for case in cases:
        for run in case.runs:
            for record in run.invocations:
                if record.trajectory is not None:
                    counts[str(record.trajectory.source)] += 1
    return counts


def trajectory_line(counts: Mapping[str, int]) -> str:
    """``trajectory_counts`` in words: "from the agent's spans in 4 turns, from its replies in
    1; 1 turn called no tool"."""

    def turns(n: int) -> str:
        return f"{n:,} turn{'' if n == 1 else 's'}"

    line = (
        f"from the agent's spans in {turns(counts.get('spans', 0))}, from its replies in "
        f"{turns(counts.get('reply', 0))}"
    )
    none = counts.get("none", 0)
    return line + (f"; {turns(none)} called no tool" if none else "")
