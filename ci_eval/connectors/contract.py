"""The generic agent contract spoken by the ``http`` and ``command`` connectors.

Request (one per user turn)::

    {"session_id": "ci-eval-…", "eval_set_id": "…", "eval_id": "…", "run": 1, "turn": 1,
     "message": "What is the weather in Paris?", "user_content": {genai Content},
     "state": {…session_input.state, on every turn…}}

and, for a trpc-agent-go case that has them, as its eval set gives them (trpc's own shapes):
``"context_messages"`` (the case's ``contextMessages`` then the turn's: messages the agent
should see before this one) and ``"tool_mock"`` (the turn's ``toolMock``). With ``--otlp``, a
``command`` agent's request also has ``"traceparent"``: the turn's W3C trace context, under
which its spans belong to the turn (``http`` agents get it as the ``traceparent`` header).

Reply::

    {"final_response": "It is sunny in Paris, 22 degrees.",
     "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "optional"}],
     "tool_results": [{"name": "get_weather", "response": {"temp_c": 22}, "id": "optional"}],
     "intermediate_responses": [{"author": "sub_agent", "text": "…"}],
     "usage": {"input_tokens": 1200, "output_tokens": 85, "cached_tokens": 1024, "model_calls": 2}}

or ``{"events": [ADK events]}`` for agents that already speak ADK's event JSON (their
``usageMetadata`` counted as ADK counts it, unless the reply has a ``usage`` object too).

``usage`` is optional, and so is each of its counts (absent or null: not reported, which is
not zero): what the agent's own model calls spent in the turn. Each count is a non-negative
integer (tokens at most 10^12, model calls at most 10^5); anything else makes the reply
malformed, the turn's error naming the field (``usage.input_tokens: …``), as for any other
field of the reply.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ci_eval.connectors.base import ActualTurn, AgentError, events_to_turn, shallow_enough
from ci_eval.connectors.usage import UsageReply
from ci_eval.dialects.trpc_write import EXT as TRPC_EXT
from ci_eval.io.validation import first_error
from ci_eval.model import Content, EvalCase, FunctionCall, FunctionResponse, Part


class _Edge(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Call(_Edge):
    name: str
    args: dict[str, Any] | None = None
    id: str | None = None


class _Result(_Edge):
    name: str | None = None
    response: Any = None
    id: str | None = None


class _Intermediate(_Edge):
    author: str = ""
    text: str


class Reply(_Edge):
    final_response: str | None = None
    tool_calls: list[_Call] = Field(default_factory=list)
    tool_results: list[_Result] = Field(default_factory=list)
    intermediate_responses: list[_Intermediate] = Field(default_factory=list)
    events: list[Any] | None = None
    author: str | None = None  # who answered (the simulated user sees "author: text")
    usage: UsageReply | None = None  # what the agent's own model calls spent


def request(
    case: EvalCase, eval_set_id: str, run: int, turn: int, session_id: str, user_content: Content
) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "eval_set_id": eval_set_id,
        "eval_id": case.eval_id,
        "run": run,
        "turn": turn,
        "message": user_content.text(),
        "user_content": user_content.model_dump(mode="json", exclude_none=True),
        "state": dict(case.session_input.state) if case.session_input else {},
        **trpc_inputs(case, turn),
    }


def trpc_inputs(case: EvalCase, turn: int) -> dict[str, Any]:
    """What a trpc-agent-go eval case gives its agent besides the user's message: context
    messages (the case's, then the turn's) and the turn's tool mock; nothing for other cases."""
    case_ext = case.extensions.get(TRPC_EXT) or {}
    static = case.conversation or []  # none for a simulated case
    inv_ext = (static[turn - 1].extensions.get(TRPC_EXT) or {}) if 0 < turn <= len(static) else {}
    out: dict[str, Any] = {}
    context = list(case_ext.get("contextMessages") or []) + list(
        inv_ext.get("contextMessages") or []
    )
    if context:
        out["context_messages"] = context
    if inv_ext.get("toolMock") is not None:
        out["tool_mock"] = inv_ext["toolMock"]
    return out


def new_session_id() -> str:
    return f"ci-eval-{uuid.uuid4()}"


def parse_reply(data: Any) -> ActualTurn:
    shallow_enough(data)
    try:
        reply = Reply.model_validate(data)
    except ValidationError as exc:
        raise AgentError(f"malformed reply: {first_error(exc)}") from None
    usage = reply.usage.to_usage() if reply.usage is not None else None
    if reply.events is not None:
        turn = events_to_turn(reply.events)
        if usage is not None:  # the agent's own account wins over what its events carry
            turn.usage = usage
        return turn
    return ActualTurn(
        final_response=(
            Content(role="model", parts=[Part(text=reply.final_response)])
            if reply.final_response is not None
            else None
        ),
        tool_uses=[FunctionCall(id=c.id, name=c.name, args=c.args) for c in reply.tool_calls],
        tool_responses=[
            FunctionResponse(
                id=r.id,
                name=r.name,
                response=r.response
                if isinstance(r.response, dict) or r.response is None
                else {"result": r.response},
            )
            for r in reply.tool_results
        ],
        intermediate_responses=[
            (i.author, [Part(text=i.text)]) for i in reply.intermediate_responses
        ],
        author=reply.author,
        usage=usage,
    )
