"""Recorded OpenTelemetry traces of ADK agents as recordings ``--agent replay`` replays.

A team that exports its agent's traces (Jaeger's JSON, or OTLP JSON as the OpenTelemetry
collector's file exporter writes it) can gate on them without calling the agent: each ADK
invocation in the trace becomes an actual invocation, read from the span attributes
agentevals reads (agentevals-dev/agentevals bf9fe11b, ``src/agentevals/converter.py`` and
``trace_attrs.py``), which google-adk writes in its legacy telemetry schema
(``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``; google-adk 2.13.0,
``google/adk/telemetry/tracing.py``, ``trace_call_llm`` and ``trace_tool_call``):

- ``call_llm`` spans: ``gcp.vertex.agent.invocation_id`` and ``gcp.vertex.agent.session_id``
  group them into invocations and sessions; the first one's ``gcp.vertex.agent.llm_request``
  (its ``contents``) holds the user's message, the last one's ``gcp.vertex.agent.llm_response``
  (its ``content``) the final response;
- ``execute_tool <name>`` spans: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gcp.vertex.agent.tool_call_args`` and ``gcp.vertex.agent.tool_response`` (or
  ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``, which the semconv-aligned schema
  writes when content capture is on) are the tool calls and their responses, in start order;
  without them, the ``function_call`` parts of the ``call_llm`` responses (as agentevals does).

A span belongs to the invocation of the nearest ancestor that leads to a ``call_llm``. One
session (all its invocations, in start order) is one recording; which eval case it replays is
decided when the case opens (:func:`matches`): the case's ``session_input.session_id``, else its
first user message, compared as agentevals compares them (stripped, lower-cased).

Pure: JSON values in, JSON values of ADK invocations out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ci_eval.connectors import trace_genai
from ci_eval.connectors.trace_shapes import Span, shape_of, spans_of
from ci_eval.connectors.trace_shapes import error as _error
from ci_eval.errors import InputError
from ci_eval.io.jsonpos import parse_json

__all__ = ["SessionIndex", "Span", "TracedSession", "is_trace_file", "matches", "read_sessions"]

INVOCATION_ID = "gcp.vertex.agent.invocation_id"
SESSION_ID = "gcp.vertex.agent.session_id"
LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
TOOL_CALL_ARGS = "gcp.vertex.agent.tool_call_args"
TOOL_RESPONSE = "gcp.vertex.agent.tool_response"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
CONVERSATION_ID = "gen_ai.conversation.id"

MAX_ANCESTORS = 1_000


# the eval case a traced conversation is of, when its producer says so (agentevals 0.11,
# ``genai/matching.py``): on the conversation's resource or on one of its spans
EVAL_CASE_ID = "agentevals.eval.case.id"


@dataclass
class TracedSession:
    """One ADK session's invocations, as JSON values of ADK ``Invocation``s."""

    session_id: str
    invocations: list[dict[str, Any]] = field(default_factory=list)
    case_id: str | None = None  # the eval case it names (EVAL_CASE_ID), if any
    turn_traces: list[str] = field(default_factory=list)  # each invocation's trace id
    named: bool = False  # grouped by agentevals.session_name: never split (see by_trace)
    marked: list[Any] = field(default_factory=list)  # each invocation's mark (replay's)
    path: str = ""  # the file it was read from

    def first_user_text(self) -> str | None:
        if not self.invocations:
            return None
        parts = self.invocations[0]["user_content"]["parts"]
        return "\n".join(p["text"] for p in parts if p.get("text"))


def is_trace_file(data: Any) -> bool:
    """A trace file of one of the shapes :mod:`trace_shapes` reads (Jaeger, OTLP JSON and its
    variants, bare spans)."""
    return shape_of(data) is not None


def _json_attribute(span: Span, key: str, path: str) -> Any:
    """A span attribute holding JSON text, parsed (bounded as every JSON file is)."""
    value = span.attributes.get(key)
    if not isinstance(value, str):
        return None
    try:
        return parse_json(value, path, positions_wanted=False).data
    except InputError as exc:
        raise _error(f"{key}: not JSON ({exc.message})", path, span.where) from None


def _text_parts(content: Any) -> list[dict[str, Any]]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [
        {"text": p["text"]}
        for p in parts or []
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]


def _user_content(span: Span, path: str) -> dict[str, Any]:
    """The request's last user content with text: the message of this invocation (the
    request's earlier contents are the session's history)."""
    request = _json_attribute(span, LLM_REQUEST, path)
    contents = request.get("contents") if isinstance(request, dict) else None
    for content in reversed(contents if isinstance(contents, list) else []):
        if isinstance(content, dict) and content.get("role") == "user":
            parts = _text_parts(content)
            if parts:
                return {"role": "user", "parts": parts}
    raise _error(f"{LLM_REQUEST}: no user message in its contents", path, span.where)


def _response_content(span: Span, path: str) -> dict[str, Any] | None:
    response = _json_attribute(span, LLM_RESPONSE, path)
    content = response.get("content") if isinstance(response, dict) else None
    return content if isinstance(content, dict) else None


def _tool_call(span: Span, path: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    name = span.attributes.get(TOOL_NAME)
    if not isinstance(name, str):
        raise _error(f"{TOOL_NAME}: expected a string", path, span.where)
    call_id = span.attributes.get(TOOL_CALL_ID)
    call_id = call_id if isinstance(call_id, str) else None
    key = TOOL_CALL_ARGS if TOOL_CALL_ARGS in span.attributes else TOOL_CALL_ARGUMENTS
    args = _json_attribute(span, key, path)
    if args is not None and not isinstance(args, dict):
        raise _error(f"{key}: expected a JSON object", path, span.where)
    call = {"name": name, "args": args, "id": call_id}
    key = TOOL_RESPONSE if TOOL_RESPONSE in span.attributes else TOOL_CALL_RESULT
    result = _json_attribute(span, key, path)
    if result is None:
        return call, None
    response = result if isinstance(result, dict) else {"result": result}
    return call, {"name": name, "response": response, "id": call_id}


def _invocation_of(spans: dict[str, Span], span: Span, owner: dict[str, str]) -> str | None:
    """The invocation of the nearest ancestor (or the span) a ``call_llm`` leads to."""
    current: Span | None = span
    for _ in range(MAX_ANCESTORS):
        if current is None:
            return None
        if current.span_id in owner:
            return owner[current.span_id]
        current = spans.get(current.parent_id) if current.parent_id else None
    return None


def read_sessions(data: Any, path: str) -> list[TracedSession]:
    """The ADK sessions a trace file records (any of :mod:`trace_shapes`' shapes), each
    invocation as ADK's ``Invocation`` JSON; sessions in the order their first invocation
    started."""
    return sessions_of(spans_of(data, path), path)


def sessions_of(found: list[Span], path: str) -> list[TracedSession]:
    """The sessions of a file's spans: ADK's legacy schema (``call_llm`` spans), else the GenAI
    semantic conventions' (see trace_genai)."""
    if not any(span.name == "call_llm" for span in found):
        genai = trace_genai.genai_sessions(found, path)
        return [
            TracedSession(c.session_id, c.invocations, c.case_id, c.turn_traces, c.named)
            for c in genai
        ]
    by_id = {span.span_id: span for span in found}
    ordered = sorted(found, key=lambda s: (s.start, s.order))
    llm_calls: dict[str, list[Span]] = {}
    session_of: dict[str, str] = {}
    owner: dict[str, str] = {}  # span id → the invocation its call_llm descendants are of
    for span in ordered:
        if span.name != "call_llm":
            continue
        invocation = span.attributes.get(INVOCATION_ID)
        if not isinstance(invocation, str) or not invocation:
            raise _error(f"{INVOCATION_ID}: expected a non-empty string", path, span.where)
        llm_calls.setdefault(invocation, []).append(span)
        session = span.attributes.get(SESSION_ID)
        session_of.setdefault(invocation, session if isinstance(session, str) else "")
        current: Span | None = span
        for _ in range(MAX_ANCESTORS):
            if current is None or current.span_id in owner:
                break
            owner[current.span_id] = invocation
            current = by_id.get(current.parent_id) if current.parent_id else None
    tools: dict[str, list[Span]] = {}
    for span in ordered:
        if span.name.startswith("execute_tool") and span.name != "execute_tool (merged)":
            invocation = _invocation_of(by_id, span, owner)
            if invocation is not None:
                tools.setdefault(invocation, []).append(span)
    sessions: dict[str, TracedSession] = {}
    read: dict[str, dict[str, Any] | None] = {}  # each call_llm's response, parsed once

    def llm_response(llm: Span) -> dict[str, Any] | None:
        if llm.span_id not in read:
            read[llm.span_id] = _response_content(llm, path)
        return read[llm.span_id]

    for invocation, calls in llm_calls.items():  # in the order they started
        uses, responses = [], []
        for tool in tools.get(invocation, []):
            call, response = _tool_call(tool, path)
            uses.append(call)
            if response is not None:
                responses.append(response)
        if not tools.get(invocation):
            for llm in calls:
                content = llm_response(llm) or {}
                uses += [
                    {
                        "name": p["function_call"].get("name"),
                        "args": p["function_call"].get("args"),
                        "id": p["function_call"].get("id"),
                    }
                    for p in content.get("parts") or []
                    if isinstance(p, dict) and isinstance(p.get("function_call"), dict)
                ]
        final_parts = _text_parts(llm_response(calls[-1]))
        session = sessions.setdefault(session_of[invocation], TracedSession(session_of[invocation]))
        session.case_id = session.case_id or _case_id(by_id, calls[0])
        session.turn_traces.append(calls[0].trace_id)
        session.invocations.append(
            {
                "invocation_id": invocation,
                "user_content": _user_content(calls[0], path),
                "final_response": {"role": "model", "parts": final_parts} if final_parts else None,
                "intermediate_data": {"tool_uses": uses, "tool_responses": responses},
            }
        )
    return list(sessions.values())


def _case_id(spans: dict[str, Span], span: Span) -> str | None:
    """The eval case the span, an ancestor or their resource names (EVAL_CASE_ID)."""
    current: Span | None = span
    for _ in range(MAX_ANCESTORS):
        if current is None:
            return None
        for attributes in (current.attributes, current.resource):
            value = attributes.get(EVAL_CASE_ID)
            if value not in (None, ""):
                return str(value)
        current = spans.get(current.parent_id) if current.parent_id else None
    return None


_SPACES = re.compile(r"\s+")


def by_trace(sessions: list[TracedSession]) -> list[TracedSession]:
    """The sessions split into one per trace, as agentevals 0.11 groups traces (``group_by``
    auto) when no eval case has more than one turn and no trace names a session
    (``agentevals.session_name``): each trace is then evaluated on its own. A session none of
    whose turns names a trace stays whole."""
    if any(session.named for session in sessions):
        return sessions
    split: list[TracedSession] = []
    for session in sessions:
        traces = session.turn_traces
        if len(traces) != len(session.invocations) or len(set(traces)) <= 1 or "" in traces:
            split.append(session)
            continue
        marked = session.marked or [None] * len(traces)
        for trace in dict.fromkeys(traces):
            at = [i for i, t in enumerate(traces) if t == trace]
            part = TracedSession(session.session_id, [session.invocations[i] for i in at])
            part.case_id, part.turn_traces, part.path = (
                session.case_id,
                [trace] * len(at),
                session.path,
            )
            part.marked = [marked[i] for i in at]
            split.append(part)
    return split


def normalized(text: str | None) -> str | None:
    """A user message as agentevals 0.11 compares them to pick a case (``normalize_text``:
    white space collapsed, stripped, case-folded)."""
    return _SPACES.sub(" ", text).strip().casefold() if text is not None else None


def matches(
    session: TracedSession,
    session_id: str | None,
    first_user_text: str | None,
    case_id: str | None = None,
) -> bool:
    """Whether a traced session is a recording of the case with this id, session id and first
    user message. A session that names its case is that case's, and only its."""
    if session.case_id is not None:
        return session.case_id == case_id
    if session_id and session.session_id:
        return session.session_id == session_id
    return first_user_text is not None and normalized(session.first_user_text()) == normalized(
        first_user_text
    )


class SessionIndex:
    """The traced sessions by what :func:`matches` compares — session id and first user text —
    built in one pass: a case finds its recordings by lookup, not by comparing it with every
    session (1,000 cases against 24,000 sessions were 24 million comparisons). The same
    recordings, in the same order, as :func:`matches` over the list."""

    def __init__(self, sessions: list[TracedSession]) -> None:
        self.by_case: dict[str, list[int]] = {}  # the sessions that name their case
        self.by_id: dict[str, list[int]] = {}
        self.by_text: dict[str, list[int]] = {}  # every other session
        self.unnamed_by_text: dict[str, list[int]] = {}  # those without an id
        for i, session in enumerate(sessions):
            if session.case_id is not None:
                self.by_case.setdefault(session.case_id, []).append(i)
                continue
            if session.session_id:
                self.by_id.setdefault(session.session_id, []).append(i)
            text = normalized(session.first_user_text())
            if text is None:
                continue
            self.by_text.setdefault(text, []).append(i)
            if not session.session_id:
                self.unnamed_by_text.setdefault(text, []).append(i)

    def find(
        self, session_id: str | None, first_user_text: str | None, case_id: str | None = None
    ) -> list[int]:
        """The positions of the sessions that match, in order."""
        named = self.by_case.get(case_id, []) if case_id is not None else []
        return sorted(named + self._find(session_id, first_user_text))

    def _find(self, session_id: str | None, first_user_text: str | None) -> list[int]:
        text = normalized(first_user_text)
        if not session_id:
            return list(self.by_text.get(text, [])) if text is not None else []
        named = self.by_id.get(session_id, [])
        unnamed = self.unnamed_by_text.get(text, []) if text is not None else []
        return sorted(named + unnamed) if unnamed else list(named)
