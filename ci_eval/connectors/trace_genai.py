"""Traces in OpenTelemetry's GenAI semantic conventions as ADK invocations, mapped as agentevals
0.11 maps them (agentevals-cli 0.11.0: ``genai/extract.py``, ``genai/overlay.py``,
``genai/messages.py``, ``genai/grouping.py``, ``adk_bridge.to_adk_invocation``).

google-adk 2.13's default telemetry writes these (``invoke_workflow`` / ``invoke_agent`` /
``generate_content`` / ``execute_tool`` spans, no ``call_llm``), and so does any framework that
follows the conventions:

- a span's kind is its ``gen_ai.operation.name`` (``chat`` / ``generate_content`` /
  ``text_completion``: a model call; ``invoke_agent`` / ``invoke_workflow``: an agent;
  ``execute_tool``: a tool), never its name; ADK's merged tool span is ignored;
- a turn (an invocation) is anchored on an agent span with no agent or tool above it (an agent
  inside a tool or agent is a delegate of that turn), or on a root span whose model calls no
  agent covers; an agent span with no model call, tool and messages is no turn, unless it
  failed (status error, or an ``error.type``);
- the messages of a span are ``gen_ai.input.messages`` / ``gen_ai.output.messages`` — the
  attribute, else the ``gen_ai.client.inference.operation.details`` event (span event, then log
  record), else the deprecated per-message events (``gen_ai.user.message``, ``gen_ai.choice``…),
  else ADK's ``gcp.vertex.agent.llm_request`` / ``llm_response`` on ADK spans, else
  OpenLLMetry's indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (genai_indexed.py);
- the user's message: the anchor's input messages, else the first model call's, their trailing
  user messages with text; the final response: the anchor's output messages, else the output of
  the last of the turn's own model calls (not a delegate's under a tool) that has text; the
  other calls' texts are intermediate responses;
- tool calls: the ``execute_tool`` spans (a tool span inside one of the same tool is the same
  call), ``gen_ai.tool.name`` / ``gen_ai.tool.call.id`` / ``gen_ai.tool.call.arguments`` /
  ``gen_ai.tool.call.result``, completed from the ``tool_call`` / ``tool_call_response`` message
  parts (by call id, else by name in order), plus the parts no span claims; without tool spans,
  the parts alone;
- turns group into conversations by ``agentevals.session_name`` (resource), else
  ``gen_ai.conversation.id``, else ``session.id`` (span, then resource), else their trace; a
  conversation is a traced session, its key the session id when it is an id.

Where agentevals is tolerant and ci-eval is not: a messages attribute that is not JSON, or not a
list of messages, is an input error naming its span's JSON path (agentevals skips it). A
provider-only turn that continues the one before it after a tool call is joined to it
(genai_join.py) only within one trace: agentevals also joins across the traces of one
conversation when it groups by conversation.

A turn with no message content anywhere (content capture off, ADK's default) keeps its tool
names but has no text: its invocation is marked :data:`NOT_CAPTURED`, and the metrics that
read what was not captured are not evaluated, saying why, rather than scored on empty text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ci_eval.connectors import genai_indexed as gi
from ci_eval.connectors import genai_join as gj
from ci_eval.connectors import genai_messages as gm
from ci_eval.connectors.genai_messages import Message
from ci_eval.connectors.trace_grouping import conversation_key
from ci_eval.connectors.trace_shapes import STATUS_ERROR, Span
from ci_eval.connectors.trace_shapes import error as _error

OPERATION = "gen_ai.operation.name"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
REQUEST_MODEL = "gen_ai.request.model"
ERROR_TYPE = "error.type"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
ADK_SCOPE_PREFIX = "gcp.vertex.agent."
ADK_TOOL_ARGS = "gcp.vertex.agent.tool_call_args"
ADK_TOOL_RESPONSE = "gcp.vertex.agent.tool_response"

INFERENCE, AGENT, TOOL, OTHER = "inference", "agent", "tool", "other"
_KINDS = {
    "chat": INFERENCE,
    "generate_content": INFERENCE,
    "text_completion": INFERENCE,
    "invoke_agent": AGENT,
    "invoke_workflow": AGENT,
    "execute_tool": TOOL,
}
TOOL_PLACEHOLDERS = frozenset({"<not specified>"})
WHY_NOT_CAPTURED = (
    "needs message content the trace did not capture (record with "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY)"
)

# the eval case a conversation names (agentevals 0.11, ``genai/matching.py``), as traces reads it
EVAL_CASE_ID = "agentevals.eval.case.id"
MAX_ANCESTORS = 1_000


@dataclass
class Conversation:
    """One conversation's turns as ADK ``Invocation`` JSON (traces makes it a TracedSession)."""

    session_id: str  # its gen_ai.conversation.id / session.id / session name; "" for a trace
    invocations: list[dict[str, Any]] = field(default_factory=list)
    case_id: str | None = None
    turn_traces: list[str] = field(default_factory=list)  # each invocation's trace
    named: bool = False  # grouped by agentevals.session_name, which always groups


# --- a span's view --------------------------------------------------------------------------


def _is_adk(span: Span) -> bool:
    return any(k.startswith(ADK_SCOPE_PREFIX) for k in span.attributes)


def _kind(span: Span) -> str | None:
    if span.name == "execute_tool (merged)" or span.attributes.get(TOOL_NAME) == "(merged tools)":
        return None
    operation = span.attributes.get(OPERATION)
    if isinstance(operation, str) and operation:
        return _KINDS.get(operation, OTHER)
    if _is_adk(span) and span.name in ("call_llm", "invocation"):
        return INFERENCE if span.name == "call_llm" else AGENT
    attrs = span.attributes
    records = any(
        k.startswith(("gen_ai.usage.", "gen_ai.prompt.", "gen_ai.completion."))
        or k in (INPUT_MESSAGES, OUTPUT_MESSAGES)
        for k in attrs
    )
    if (
        attrs.get(REQUEST_MODEL)
        and (attrs.get("gen_ai.system") or attrs.get("gen_ai.provider.name"))
        and records
    ):
        return INFERENCE
    return None


@dataclass
class _View:
    span: Span
    kind: str | None
    inputs: list[Message] | None
    outputs: list[Message] | None
    arguments: Any
    result: Any
    agent_name: str | None = None  # the agent it runs in
    covered: bool = False  # an agent or tool above it
    under_tool: bool = False
    inference_parent: str | None = None
    tool_parent: str | None = None
    anchor: str | None = None


def _view(span: Span, path: str) -> _View:
    attrs = span.attributes
    inputs = gm.messages_of(attrs.get(INPUT_MESSAGES), INPUT_MESSAGES, span, path)
    outputs = gm.messages_of(attrs.get(OUTPUT_MESSAGES), OUTPUT_MESSAGES, span, path)
    # the details event: the span's own first, then its log records
    details = [e for e in span.events if e.name == DETAILS_EVENT]
    for event in [e for e in details if e.body is None] + [
        e for e in details if e.body is not None
    ]:
        inputs = inputs or gm.messages_of(
            event.attributes.get(INPUT_MESSAGES), INPUT_MESSAGES, span, path
        )
        outputs = outputs or gm.messages_of(
            event.attributes.get(OUTPUT_MESSAGES), OUTPUT_MESSAGES, span, path
        )
    if not (inputs and outputs):
        legacy_in, legacy_out = gm.legacy_events(span)
        inputs, outputs = inputs or legacy_in or None, outputs or legacy_out or None
    arguments, result = attrs.get(TOOL_CALL_ARGUMENTS), attrs.get(TOOL_CALL_RESULT)
    if _is_adk(span):
        if not (inputs and outputs):
            adk_in, adk_out = gm.adk_messages(span, path)
            inputs, outputs = inputs or adk_in, outputs or adk_out
        legacy_args = attrs.get(ADK_TOOL_ARGS)
        if arguments is None and legacy_args is not None and legacy_args != "N/A":
            arguments = legacy_args
        legacy_result = gm.parsed(attrs.get(ADK_TOOL_RESPONSE))
        placeholder = (
            legacy_result in TOOL_PLACEHOLDERS
            if isinstance(legacy_result, str)
            else (
                isinstance(legacy_result, dict)
                and set(legacy_result) == {"result"}
                and legacy_result["result"] in TOOL_PLACEHOLDERS
            )
        )
        if result is None and legacy_result is not None and not placeholder:
            result = legacy_result
    inputs = inputs or gi.indexed_messages(attrs, gi.PROMPT)
    outputs = outputs or gi.indexed_messages(attrs, gi.COMPLETION)
    return _View(span, _kind(span), inputs, outputs, gm.parsed(arguments), gm.parsed(result))


# --- turns ----------------------------------------------------------------------------------


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _failed(span: Span) -> bool:
    """Its status is error or it records an ``error.type`` (a failed agent span is a turn)."""
    error_type = span.attributes.get(ERROR_TYPE)
    return span.status_code == STATUS_ERROR or isinstance(error_type, str | int | float)


@dataclass
class _Turn:
    anchor: _View
    members: list[_View]  # in start order

    def key(self) -> tuple[int, int]:
        return (self.anchor.span.start, self.anchor.span.order)


def _walk(views: dict[str, _View], children: dict[str, list[str]], roots: list[str]) -> list[_Turn]:
    """agentevals' ``analyze``: each span's kind, agent, covering and anchor, then the turns."""
    anchors: set[str] = set()
    stack = [(root, False, None, None, False, None) for root in reversed(roots)]
    while stack:
        sid, covered, inf_parent, agent, under_tool, tool_parent = stack.pop()
        view = views[sid]
        view.covered, view.inference_parent, view.under_tool = covered, inf_parent, under_tool
        view.tool_parent = tool_parent
        own = _string(view.span.attributes.get(AGENT_NAME))
        if view.kind == AGENT and own:
            agent = own
        view.agent_name = agent or (own if view.kind in (INFERENCE, TOOL) else None)
        if view.kind == AGENT and not covered:
            anchors.add(sid)
        breaks = view.kind in (AGENT, TOOL)
        child_inf = sid if view.kind == INFERENCE else None if breaks else inf_parent
        child_tool = (
            sid if view.kind == TOOL else None if view.kind in (AGENT, INFERENCE) else tool_parent
        )
        for child in reversed(children.get(sid, [])):
            stack.append(
                (
                    child,
                    covered or breaks,
                    child_inf,
                    agent,
                    under_tool or view.kind == TOOL,
                    child_tool,
                )
            )
    members: dict[str, list[_View]] = {}
    for root in roots:
        walk = [(root, None if root in anchors else root)]
        while walk:
            sid, current = walk.pop()
            current = sid if sid in anchors else current
            views[sid].anchor = current
            if current is not None:
                members.setdefault(current, []).append(views[sid])
            walk += [(child, current) for child in reversed(children.get(sid, []))]
    turns = []
    for anchor, found in members.items():
        kinds = {v.kind for v in found}
        view = views[anchor]
        if anchor in anchors:
            if kinds & {INFERENCE, TOOL} or view.inputs or view.outputs or _failed(view.span):
                turns.append(_Turn(view, found))
        elif INFERENCE in kinds:
            turns.append(_Turn(view, found))
    return turns


@dataclass
class _Call:
    """One logical model call: a leaf inference span with the single-leaf wrappers above it."""

    chain: list[_View]  # leaf first

    def first(self, read: Callable[[_View], Any]) -> Any:
        return next((value for value in map(read, self.chain) if value), None)

    @property
    def inputs(self) -> list[Message]:
        return self.first(lambda v: v.inputs) or []

    @property
    def outputs(self) -> list[Message]:
        return self.first(lambda v: v.outputs) or []

    @property
    def start(self) -> tuple[int, int]:
        return min((v.span.start, v.span.order) for v in self.chain)

    @property
    def delegated(self) -> bool:
        return self.chain[0].under_tool


def _calls(turn: _Turn) -> list[_Call]:
    inference = [v for v in turn.members if v.kind == INFERENCE]
    ids = {v.span.span_id for v in inference}
    children: dict[str, list[_View]] = {}
    tops = []
    for view in inference:
        if view.inference_parent in ids:
            children.setdefault(view.inference_parent, []).append(view)
        else:
            tops.append(view)
    calls: list[_Call] = []

    def leaves(view: _View) -> list[_View]:
        out, walk = [], [view]
        while walk:
            node = walk.pop()
            kids = children.get(node.span.span_id, [])
            out += [] if kids else [node]
            walk += kids
        return out

    pending = list(reversed(tops))
    while pending:
        node = pending.pop()
        found = leaves(node)
        if len(found) == 1:
            chain, current = [found[0]], found[0]
            parents = {c.span.span_id: p for p, cs in children.items() for c in cs}
            while current is not node:
                current = next(
                    v for v in inference if v.span.span_id == parents[current.span.span_id]
                )
                chain.append(current)
            calls.append(_Call(chain))
        else:
            pending += reversed(children.get(node.span.span_id, []))
    return sorted(calls, key=lambda c: c.start)


def _empty(value: Any) -> bool:
    return value is None or value in ({}, "", [])


def _span_tools(turn: _Turn) -> list[dict[str, Any]]:
    tools = [v for v in turn.members if v.kind == TOOL]
    by_id = {v.span.span_id: v for v in tools}
    outermost: dict[str, str] = {}
    chains: dict[str, list[_View]] = {}
    for view in tools:  # members are in walk order: an enclosing tool span comes first
        parent = by_id.get(view.tool_parent or "")
        same = parent is not None and (
            (_string(parent.span.attributes.get(TOOL_NAME)) or object())
            == view.span.attributes.get(TOOL_NAME)
            or (_string(parent.span.attributes.get(TOOL_CALL_ID)) or object())
            == view.span.attributes.get(TOOL_CALL_ID)
        )
        outermost[view.span.span_id] = (
            outermost[parent.span.span_id] if same and parent else view.span.span_id
        )
        chains.setdefault(outermost[view.span.span_id], []).append(view)
    out = []
    for chain in sorted(chains.values(), key=lambda c: (c[0].span.start, c[0].span.order)):
        name = next((n for v in chain if (n := _string(v.span.attributes.get(TOOL_NAME)))), None)
        if name is None:
            tokens = chain[0].span.name.split()
            name = (
                tokens[1]
                if len(tokens) >= 2 and tokens[0] == "execute_tool"
                else chain[0].span.name
            )
        call_id = next(
            (i for v in chain if (i := _string(v.span.attributes.get(TOOL_CALL_ID)))), None
        )
        if call_id in TOOL_PLACEHOLDERS:
            call_id = None
        out.append(
            {
                "name": name,
                "id": call_id,
                "arguments": next((v.arguments for v in chain if v.arguments is not None), None),
                "result": next((v.result for v in chain if v.result is not None), None),
            }
        )
    return out


def _part_tools(calls: list[_Call]) -> list[dict[str, Any]]:
    """Tool calls from ``tool_call`` parts, results from later calls' ``tool_call_response``
    parts: by id, else the next unclaimed one (by name when the response names one)."""
    responses: list[tuple[int, dict[str, Any]]] = []
    seen: set[Any] = set()
    for index, call in enumerate(calls):
        for response in gm.tool_responses_of(call.inputs):
            key = response["id"] or (response.get("name"), repr(response["response"]))
            if key not in seen:
                seen.add(key)
                responses.append((index, response))
    requested = [(i, tc) for i, call in enumerate(calls) for tc in gm.tool_calls_of(call.outputs)]
    call_ids = {tc["id"] for _, tc in requested if tc["id"]}
    claimed: set[int] = set()
    out = []
    for index, tc in requested:
        open_ = [(i, r) for i, (at, r) in enumerate(responses) if i not in claimed and at > index]
        match = next((i for i, r in open_ if tc["id"] and r["id"] == tc["id"]), None)
        if match is None:
            match = next(
                (
                    i
                    for i, r in open_
                    if r["id"] not in call_ids and r.get("name") in (None, tc["name"])
                ),
                None,
            )
        if match is not None:
            claimed.add(match)
        result = responses[match][1]["response"] if match is not None else None
        out.append(
            {"name": tc["name"], "id": tc["id"], "arguments": tc["arguments"], "result": result}
        )
    return out


def _tools(turn: _Turn, calls: list[_Call]) -> list[dict[str, Any]]:
    spans = _span_tools(turn)
    parts = _part_tools(calls)
    if not spans or not parts:
        return spans or parts
    claimed: dict[int, dict[str, Any]] = {}
    for tool in spans:
        match = next(
            (
                i
                for i, p in enumerate(parts)
                if i not in claimed and tool["id"] and p["id"] == tool["id"]
            ),
            None,
        )
        if match is None:
            match = next(
                (i for i, p in enumerate(parts) if i not in claimed and p["name"] == tool["name"]),
                None,
            )
        if match is None:
            continue
        claimed[match] = tool
        for key in ("arguments", "result"):
            if _empty(tool[key]) and not _empty(parts[match][key]):
                tool[key] = parts[match][key]
    out = list(spans)
    previous: dict[str, Any] | None = None
    for index, part in enumerate(parts):
        if index in claimed:
            previous = claimed[index]
            continue
        position = (
            next(i for i, t in enumerate(out) if t is previous) + 1 if previous is not None else 0
        )
        out.insert(position, part)
        previous = part
    return out


def _outcome(turn: _Turn, trace: str) -> gj.Outcome:
    """agentevals' ``_turn``: what the turn said and did."""
    calls = _calls(turn)
    anchor = turn.anchor
    if anchor.inputs:
        user = gm.user_turn(anchor.inputs) or anchor.inputs
    else:
        first = next((c for c in calls if c.inputs), None)
        user = gm.user_turn(first.inputs) if first else []
    own = [c for c in calls if not c.delegated] or calls
    speaking = [c for c in own if gm.texts(c.outputs)]
    final_call = max(speaking, key=lambda c: c.start) if speaking else None
    if anchor.outputs:
        final = anchor.outputs
        intermediate = [m for c in speaking for m in c.outputs if gm.texts([m])]
        if intermediate and gm.texts(intermediate[-1:]) == gm.texts(final):
            intermediate = intermediate[:-1]
    else:
        final = final_call.outputs if final_call else []
        intermediate = [
            m for c in speaking if c is not final_call for m in c.outputs if gm.texts([m])
        ]
    agent = _string(anchor.span.attributes.get(AGENT_NAME)) or next(
        (c.chain[0].agent_name for c in calls if c.chain[0].agent_name), None
    )
    captured = bool(anchor.inputs or anchor.outputs) or any(
        gm.has_content(c.inputs) or gm.has_content(c.outputs) for c in calls
    )
    # a failed agent span that holds nothing is a turn, and no sign content was not captured
    failure = not calls and not any(v.kind == TOOL for v in turn.members) and _failed(anchor.span)
    return gj.Outcome(
        turn,
        calls,
        _tools(turn, calls),
        user,
        final,
        intermediate,
        agent,
        root=anchor.kind != AGENT,
        captured=captured or failure,
        trace=trace,
    )


# --- conversations --------------------------------------------------------------------------


def genai_sessions(spans: list[Span], path: str) -> list[Conversation]:
    """The traced sessions of a file's GenAI semantic-convention spans: one per conversation
    (see the module's docstring), its invocations in start order; sessions in the order their
    first turn started."""
    by_id = {span.span_id: span for span in spans}
    ordered = sorted(spans, key=lambda s: (s.start, s.order))
    views = {span.span_id: _view(span, path) for span in ordered}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for span in ordered:
        if span.parent_id and span.parent_id in by_id and span.parent_id != span.span_id:
            children.setdefault(span.parent_id, []).append(span.span_id)
        else:
            roots.append(span.span_id)
    _acyclic(children, roots, by_id, path)
    traces: dict[str, list[Span]] = {}
    for span in ordered:
        traces.setdefault(span.trace_id or _root_of(span, by_id).span_id, []).append(span)
    groups: dict[str, tuple[str, list[_Turn], dict[str, None]]] = {}  # its traces, in order
    trace_of = {s.span_id: t for t, members in traces.items() for s in members}
    for turn in sorted(_walk(views, children, roots), key=_Turn.key):
        trace = trace_of[turn.anchor.span.span_id]
        key = conversation_key(traces[trace])
        group, session_id = (f"{key[0]}:{key[1]}", key[1]) if key else (f"trace:{trace}", "")
        found = groups.setdefault(group, (session_id, [], {}))
        found[1].append(turn)
        found[2][trace] = None
    sessions = []
    for group, (session_id, members, group_traces) in groups.items():
        outcomes = gj.joined(
            [_outcome(turn, trace_of[turn.anchor.span.span_id]) for turn in members], _tools
        )
        session = Conversation(
            session_id,
            [gj.invocation(outcome, WHY_NOT_CAPTURED) for outcome in outcomes],
            turn_traces=[outcome.trace for outcome in outcomes],
            named=group.startswith("name:"),
        )
        session.case_id = next(
            (
                str(value)
                for trace in group_traces
                for span in traces[trace]
                for attributes in (span.attributes, span.resource)
                if (value := attributes.get(EVAL_CASE_ID)) not in (None, "")
            ),
            None,
        )
        sessions.append(session)
    return sessions


def _root_of(span: Span, by_id: dict[str, Span]) -> Span:
    current = span
    for _ in range(MAX_ANCESTORS):
        parent = by_id.get(current.parent_id or "")
        if parent is None or parent is current:
            return current
        current = parent
    return current


def _acyclic(
    children: dict[str, list[str]], roots: list[str], by_id: dict[str, Span], path: str
) -> None:
    """Every span reachable from a root: a parent cycle (no root above it) is an input error."""
    seen: set[str] = set()
    walk = list(roots)
    while walk:
        sid = walk.pop()
        seen.add(sid)
        walk += children.get(sid, [])
    for sid, span in by_id.items():
        if sid not in seen:
            raise _error("parentSpanId: the span is its own ancestor (a cycle)", path, span.where)
