"""A GenAI turn's outcome as trace_genai maps it, the ADK ``Invocation`` JSON of it, and the
joining of provider-only traces' tool rounds into one turn (agentevals-cli 0.11.0,
``genai/extract.py`` ``_continues`` / ``_merge`` / ``_join_continuations``, and
``adk_bridge.to_adk_invocation``).

A turn anchored on a root span (no agent span) continues the turn before it when its first
model call's input ends with tool responses answering the tool calls the previous turn's last
model call asked for (by call id when both sides have ids, else any call asked): the two are one
turn — the first's user message, the second's answer when it has one (the first's answer then
an intermediate response), the model calls and tool calls of both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ci_eval.connectors import genai_messages as gm
from ci_eval.connectors.base import NOT_CAPTURED
from ci_eval.connectors.genai_messages import Message


class Call(Protocol):
    """A logical model call (trace_genai's ``_Call``)."""

    @property
    def inputs(self) -> list[Message]: ...
    @property
    def outputs(self) -> list[Message]: ...
    @property
    def start(self) -> tuple[int, int]: ...


Retool = Callable[[Any, list[Any]], list[dict[str, Any]]]  # (turn, its calls) -> tool calls


@dataclass
class Outcome:
    """What one turn (or joined tool rounds) said and did."""

    turn: Any  # trace_genai's _Turn; joined: the first's anchor, the members of both
    calls: list[Any]  # trace_genai's _Call (a Call), in start order
    tools: list[dict[str, Any]]  # {"name", "id", "arguments", "result"}
    user: list[Message]
    final: list[Message]
    intermediate: list[Message]
    agent: str | None
    root: bool  # anchored on a span that is no agent
    captured: bool  # any message content or tool arguments / results
    trace: str  # its anchor's trace


def ends_with_tool_response(messages: list[Message]) -> bool:
    """The last message returns tool results: role ``tool``, or only ``tool_call_response``
    parts."""
    if not messages:
        return False
    last = messages[-1]
    parts = last["parts"]
    return last["role"] == "tool" or (
        bool(parts) and all(p.get("type") == "tool_call_response" for p in parts)
    )


def continues(previous: Outcome, turn: Outcome) -> bool:
    if not turn.root or not turn.calls or not previous.calls:
        return False
    first: Call = turn.calls[0]
    last: Call = previous.calls[-1]
    if not ends_with_tool_response(first.inputs):
        return False
    requested = gm.tool_calls_of(last.outputs)
    requested_ids = {tc["id"] for tc in requested if tc["id"]}
    answered_ids = {r["id"] for r in gm.tool_responses_of(first.inputs) if r["id"]}
    if requested_ids and answered_ids:
        return bool(requested_ids & answered_ids)
    return bool(requested)


def merge(previous: Outcome, turn: Outcome, retool: Retool) -> Outcome:
    calls = sorted([*previous.calls, *turn.calls], key=lambda c: c.start)
    joined = replace(previous.turn, members=[*previous.turn.members, *turn.turn.members])
    if turn.final:
        final = turn.final
        intermediate = [*previous.intermediate, *previous.final, *turn.intermediate]
    else:
        final, intermediate = previous.final, [*previous.intermediate, *turn.intermediate]
    return replace(
        previous,
        turn=joined,
        calls=calls,
        tools=retool(joined, calls),
        user=previous.user or turn.user,
        final=final,
        intermediate=intermediate,
        agent=previous.agent or turn.agent,
        captured=previous.captured or turn.captured,
    )


def joined(outcomes: list[Outcome], retool: Retool) -> list[Outcome]:
    """Each turn that continues the one before it in the same trace merged into it."""
    out: list[Outcome] = []
    for outcome in outcomes:
        if out and out[-1].trace == outcome.trace and continues(out[-1], outcome):
            out[-1] = merge(out[-1], outcome, retool)
        else:
            out.append(outcome)
    return out


def _as_dict(value: Any, key: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    return {} if value is None else {key: value}


def invocation(outcome: Outcome, why_not_captured: str) -> dict[str, Any]:
    """agentevals' ``to_adk_invocation``: the outcome as ADK ``Invocation`` JSON, marked
    :data:`NOT_CAPTURED` when the turn holds no content and is no failure that holds nothing."""
    tools = outcome.tools
    user_text, final_text = gm.texts(outcome.user), gm.texts(outcome.final)
    out: dict[str, Any] = {
        "invocation_id": outcome.turn.anchor.span.span_id,
        "user_content": {"role": "user", "parts": [{"text": user_text or ""}]},
        "final_response": {"role": "model", "parts": [{"text": final_text}]}
        if final_text
        else None,
        "intermediate_data": {
            "tool_uses": [
                {"id": t["id"], "name": t["name"], "args": _as_dict(t["arguments"], "value")}
                for t in tools
            ],
            "tool_responses": [
                {"id": t["id"], "name": t["name"], "response": _as_dict(t["result"], "result")}
                for t in tools
                if t["result"] is not None
            ],
            "intermediate_responses": [
                [outcome.agent or "agent", [{"text": text}]]
                for text in (gm.texts([m]) for m in outcome.intermediate)
                if text
            ],
        },
    }
    captured = outcome.captured or any(
        t["arguments"] is not None or t["result"] is not None for t in tools
    )
    if not captured and why_not_captured:
        out[NOT_CAPTURED] = why_not_captured
    return out
