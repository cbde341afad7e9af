"""A turn's trajectory from its agent's spans, and the rule that sets it beside the reply's.

The spans are read by the canonical trace → invocations mapping a trace file is read by
(:func:`ci_eval.connectors.traces.sessions_of`: ADK's ``call_llm`` schema, else the GenAI
semantic conventions), so a live span means what the same span in a file means. The rule:

- the reply has tool calls: they are the turn's (the reply wins); where the spans' calls differ
  (names and arguments, in order), that is said on the turn;
- the reply has none and the spans have some: the spans' tool calls, their responses, and their
  intermediate responses where the reply has none, are the turn's;
- neither has any: the turn called no tool (its source: none).

Pure: spans and a turn in, the turn out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ci_eval.connectors.base import ActualTurn
from ci_eval.connectors.trace_shapes import Span
from ci_eval.connectors.traces import sessions_of
from ci_eval.errors import InputError
from ci_eval.model import FunctionCall, FunctionResponse, IntermediateData, Part
from ci_eval.model.describe import fmt_call, shorten
from ci_eval.model.results import Trajectory, TrajectorySource

NOTE_LIMIT = 300  # characters of a disagreement said on a turn (the cut says what it left out)


@dataclass
class SpanTrajectory:
    """What a turn's spans say it did; ``invocations`` 0 when no span anchors a turn (an
    HTTP server's span alone is no agent's turn)."""

    invocations: int = 0
    tool_uses: list[FunctionCall] = field(default_factory=list)
    tool_responses: list[FunctionResponse] = field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = field(default_factory=list)


def read(spans: list[Span]) -> SpanTrajectory | str:
    """The trajectory of one turn's spans, or why they cannot be read (one line)."""
    try:
        sessions = sessions_of(spans, "the turn's spans")
    except InputError as exc:
        at = f" at {exc.json_path}" if exc.json_path else ""
        return f"{exc.message}{at}"
    out = SpanTrajectory()
    for session in sessions:
        for invocation in session.invocations:
            data = IntermediateData.model_validate(invocation.get("intermediate_data") or {})
            out.invocations += 1
            out.tool_uses += data.tool_uses
            out.tool_responses += data.tool_responses
            out.intermediate_responses += data.intermediate_responses
    return out


def _calls(calls: list[FunctionCall]) -> list[tuple[str | None, Any]]:
    return [(c.name, c.args or {}) for c in calls]


def _listed(calls: list[FunctionCall]) -> str:
    return ", ".join(fmt_call(c) for c in calls) or "no tool call"


def merged(
    turn: ActualTurn, spans: list[Span], dropped: int = 0, complete: bool = True
) -> ActualTurn:
    """``turn`` with its trajectory taken as the module's rule says, and where it came from
    recorded (``turn.trajectory``)."""
    found = read(spans) if spans else SpanTrajectory()
    unread = found if isinstance(found, str) else None
    seen = found if isinstance(found, SpanTrajectory) else SpanTrajectory()
    disagreement = None
    if turn.tool_uses:
        source = TrajectorySource.REPLY
        if seen.invocations and _calls(seen.tool_uses) != _calls(turn.tool_uses):
            disagreement = shorten(
                f"the spans show {_listed(seen.tool_uses)}; the reply {_listed(turn.tool_uses)}",
                NOTE_LIMIT,
            )
    elif seen.tool_uses:
        source = TrajectorySource.SPANS
        turn.tool_uses = seen.tool_uses
        turn.tool_responses = turn.tool_responses or seen.tool_responses
        turn.intermediate_responses = turn.intermediate_responses or seen.intermediate_responses
    else:
        source = TrajectorySource.NONE
    turn.trajectory = Trajectory(source, len(spans), dropped, complete, disagreement, unread)
    return turn
