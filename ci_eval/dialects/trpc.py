"""trpc-agent-go eval sets (camelCase), generations 2 and 3; generation 1 is ADK-shaped.

Gen 2 invocations are genai-shaped (``userContent.parts``, ``intermediateData.toolUses``); gen 3
uses trpc's ``model.Message`` (``{role, content}``) and an invocation-level ``tools`` list of
``{id, name, arguments, result}``. Both load into the canonical (ADK) model; what ADK has no field
for (context messages, tool mocks, trace mode, rubric metric names) is kept as an extension under
``"trpc"`` so that writing trpc again loses nothing. trpc's ``assistant`` role is ADK's ``model``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ci_eval.dialects._common import LoadContext, check_unique_ids, validate
from ci_eval.jsonpos import JsonDocument
from ci_eval.model import (
    Content,
    ConversationScenario,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    Part,
    Rubric,
    RubricContent,
    SessionInput,
    SourceRef,
)

EXT = "trpc"
# trpc's case fields that ADK has no place for; kept verbatim
_CASE_EXTRAS = ("evalMode", "expectedRunnerEnabled", "contextMessages", "actualConversation")
_INV_EXTRAS = ("contextMessages", "toolMock", "executionTrace")
_SCENARIO_EXTRAS = ("driver", "stopSignal", "maxAllowedInvocations")


class _Go(BaseModel):
    """Go's encoding/json: camelCase keys, unknown keys ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=False, extra="ignore")


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str | None = None
    content: str | None = None


class _Tool(_Go):
    id: str | None = None
    name: str
    arguments: Any = None
    result: Any = None


class _Scenario(_Go):
    starting_prompt: str = ""
    conversation_plan: str = ""


class _RubricContent(_Go):
    text: str | None = None


class _Rubric(_Go):
    metric_name: str | None = None
    id: str
    content: _RubricContent = Field(default_factory=_RubricContent)
    description: str | None = None
    type: str | None = None


class _SessionInput(_Go):
    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = Field(default_factory=dict)


class _Case(_Go):
    eval_id: str
    conversation: list[dict[str, Any]] | None = None
    conversation_scenario: _Scenario | None = None
    session_input: _SessionInput | None = None
    rubrics: list[_Rubric] | None = None
    creation_timestamp: float = 0.0


class _Set(_Go):
    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[dict[str, Any]] = Field(default_factory=list)
    creation_timestamp: float = 0.0


class _Inv3(_Go):
    invocation_id: str = ""
    user_content: _Message | None = None
    final_response: _Message | None = None
    tools: list[_Tool] = Field(default_factory=list)
    intermediate_responses: list[_Message] = Field(default_factory=list)
    creation_timestamp: float = 0.0


def _from_trpc_role(role: str | None) -> str | None:
    return "model" if role == "assistant" else role


def _to_trpc_role(role: str | None) -> str | None:
    return "assistant" if role == "model" else role


def _is_gen2(inv: dict[str, Any]) -> bool:
    user = inv.get("userContent")
    return "intermediateData" in inv or (isinstance(user, dict) and "parts" in user)


class TrpcDialect:
    name = "trpc"
    label = "trpc-agent-go eval set"

    def sniff(self, data: Any) -> bool:
        return isinstance(data, dict) and ("evalCases" in data or "evalSetId" in data)

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        raw = validate(_Set, doc.data, doc)
        # the document's own dicts (not pydantic's copies) carry the source positions
        items = doc.data.get("evalCases") or []
        cases = [self._case(doc, ctx, item, i) for i, item in enumerate(items)]
        eval_set = EvalSet(
            eval_set_id=raw.eval_set_id,
            name=raw.name,
            description=raw.description,
            eval_cases=cases,
            creation_timestamp=raw.creation_timestamp,
        )
        check_unique_ids(eval_set, doc, items, "evalId", ["evalCases"])
        return eval_set

    def _case(self, doc: JsonDocument, ctx: LoadContext, item: Any, i: int) -> EvalCase:
        loc = ["evalCases", i]
        if not isinstance(item, dict):
            raise doc.error("expected an eval case object", loc)
        raw = validate(_Case, item, doc, base=item, base_loc=loc)
        ext: dict[str, Any] = {k: item[k] for k in _CASE_EXTRAS if k in item}
        conversation = None
        trace = None
        if item.get("evalMode") == "trace" and item.get("actualConversation"):
            if not isinstance(item["actualConversation"], list):
                raise doc.error("actualConversation must be a list", [*loc, "actualConversation"])
            trace = [
                self._invocation(doc, a, [*loc, "actualConversation", n])
                for n, a in enumerate(item["actualConversation"])
            ]
        if raw.conversation is not None:
            conversation = [
                self._invocation(doc, inv, [*loc, "conversation", n])
                for n, inv in enumerate(item["conversation"])
            ]
        elif trace is not None:
            # trace mode without an expected conversation: the user turns are all we expect
            conversation = [
                Invocation(invocation_id=inv.invocation_id, user_content=inv.user_content)
                for inv in trace
            ]
            ext["expectedFromActual"] = True
        scenario = None
        if raw.conversation_scenario is not None:
            scenario = ConversationScenario(
                starting_prompt=raw.conversation_scenario.starting_prompt,
                conversation_plan=raw.conversation_scenario.conversation_plan,
            )
            extras = {
                k: item["conversationScenario"][k]
                for k in _SCENARIO_EXTRAS
                if k in item["conversationScenario"]
            }
            if extras:
                ext["conversationScenario"] = extras
        rubrics = None
        if raw.rubrics is not None:
            rubrics = [
                Rubric(
                    rubric_id=r.id,
                    rubric_content=RubricContent(text_property=r.content.text),
                    description=r.description,
                    type=r.type,
                )
                for r in raw.rubrics
            ]
            if any(r.metric_name for r in raw.rubrics):
                ext["rubricMetricNames"] = [r.metric_name for r in raw.rubrics]
        session_input = None
        if raw.session_input is not None:
            session_input = SessionInput(
                app_name=raw.session_input.app_name,
                user_id=raw.session_input.user_id,
                state=raw.session_input.state,
            )
        try:
            case = EvalCase(
                eval_id=raw.eval_id,
                conversation=conversation,
                conversation_scenario=scenario,
                session_input=session_input,
                rubrics=rubrics,
                creation_timestamp=raw.creation_timestamp,
            )
        except ValueError:
            raise doc.error(
                "a case needs exactly one of conversation and conversationScenario"
                ' (or evalMode "trace" with actualConversation)',
                loc,
            ) from None
        case._source = SourceRef(ctx.rel_path, doc.line_of(item))
        if ext:
            case.extensions[EXT] = ext
        if trace is not None:
            case.set_trace_actuals(trace)
        return case

    def _invocation(self, doc: JsonDocument, item: Any, loc: list[Any]) -> Invocation:
        if not isinstance(item, dict):
            raise doc.error("expected an invocation object", loc)
        ext: dict[str, Any] = {k: item[k] for k in _INV_EXTRAS if k in item}
        if _is_gen2(item):
            gen2 = {k: v for k, v in item.items() if k not in _INV_EXTRAS}
            inv = validate(Invocation, gen2, doc, base=item, base_loc=loc)
            for content in (inv.user_content, inv.final_response):
                if content is not None:
                    content.role = _from_trpc_role(content.role)
            ext["generation"] = 2
        else:
            inv = self._gen3(doc, item, loc, ext)
        inv._extensions.update({EXT: ext} if ext else {})
        return inv

    def _gen3(
        self, doc: JsonDocument, item: dict[str, Any], loc: list[Any], ext: dict[str, Any]
    ) -> Invocation:
        raw = validate(_Inv3, item, doc, base=item, base_loc=loc)
        if raw.user_content is None:
            raise doc.error("required field 'userContent' is missing", loc)
        uses, responses, wrapped = [], [], []
        for n, tool in enumerate(raw.tools):
            if tool.arguments is not None and not isinstance(tool.arguments, dict):
                raise doc.error(
                    "tool arguments must be a JSON object (ADK's FunctionCall.args is an object)",
                    [*loc, "tools", n, "arguments"],
                )
            uses.append(FunctionCall(id=tool.id, name=tool.name, args=tool.arguments))
            if tool.result is not None:
                response = tool.result
                if not isinstance(response, dict):
                    response = {"result": response}
                    wrapped.append(n)
                responses.append(FunctionResponse(id=tool.id, name=tool.name, response=response))
        if wrapped:
            ext["wrappedResults"] = wrapped
        extras = {}
        for key, msg in (("userContent", raw.user_content), ("finalResponse", raw.final_response)):
            if msg is not None and msg.model_extra:
                extras[key] = dict(msg.model_extra)
        if extras:
            ext["messageExtras"] = extras
        data = None
        if "tools" in item or "intermediateResponses" in item:
            # ADK reads a missing intermediate_data as "no tool calls", as trpc reads no tools
            data = IntermediateData(
                tool_uses=uses,
                tool_responses=responses,
                intermediate_responses=[
                    ("", _content(m).parts or []) for m in raw.intermediate_responses
                ],
            )
        return Invocation(
            invocation_id=raw.invocation_id,
            user_content=_content(raw.user_content),
            final_response=_content(raw.final_response) if raw.final_response else None,
            intermediate_data=data,
            creation_timestamp=raw.creation_timestamp,
        )

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        warnings: set[str] = set()
        out: dict[str, Any] = {"evalSetId": eval_set.eval_set_id}
        if eval_set.name is not None:
            out["name"] = eval_set.name
        if eval_set.description is not None:
            out["description"] = eval_set.description
        if eval_set.creation_timestamp:
            out["creationTimestamp"] = eval_set.creation_timestamp
        out["evalCases"] = [_dump_case(case, warnings) for case in eval_set.eval_cases]
        return out, sorted(warnings)


def _content(msg: _Message) -> Content:
    parts = [Part(text=msg.content)] if msg.content is not None else []
    return Content(role=_from_trpc_role(msg.role), parts=parts)


def _message(content: Content, warnings: set[str], what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    role = _to_trpc_role(content.role)
    if role is not None:
        out["role"] = role
    if content.role == "assistant":
        warnings.add("trpc has one assistant role: 'assistant' is read back as ADK's 'model'")
    parts = content.parts or []
    texts = [p.text for p in parts if p.text is not None]
    if any(
        p.function_call
        or p.function_response
        or p.thought
        or any(v is not None for v in (p.model_extra or {}).values())
        for p in parts
    ):
        warnings.add(f"trpc messages hold text only: non-text parts of {what} are not written")
    if len(texts) > 1:
        warnings.add(f"trpc messages hold one text: text parts of {what} are joined by newlines")
    if texts:
        out["content"] = "\n".join(texts)
    return out


def _dump_invocation(inv: Invocation, warnings: set[str]) -> dict[str, Any]:
    ext = dict(inv.extensions.get(EXT, {}))
    out: dict[str, Any] = {}
    if inv.invocation_id:
        out["invocationId"] = inv.invocation_id
    extras = ext.get("messageExtras", {})
    out["userContent"] = {
        **_message(inv.user_content, warnings, "user content"),
        **extras.get("userContent", {}),
    }
    if inv.final_response is not None:
        out["finalResponse"] = {
            **_message(inv.final_response, warnings, "final responses"),
            **extras.get("finalResponse", {}),
        }
    data = inv.intermediate_data
    if data is not None and not isinstance(data, IntermediateData):
        warnings.add("invocation_events are written as trpc tools (function calls only)")
    calls = inv.tool_calls()
    responses = list(data.tool_responses) if isinstance(data, IntermediateData) else []
    wrapped = set(ext.get("wrappedResults", []))
    tools = []
    for n, call in enumerate(calls):
        tool: dict[str, Any] = {}
        if call.id is not None:
            tool["id"] = call.id
        tool["name"] = call.name or ""
        if call.args is not None:
            tool["arguments"] = call.args
        response = _pair(call, responses)
        if response is not None and response.response is not None:
            tool["result"] = response.response.get("result") if n in wrapped else response.response
        tools.append(tool)
    if responses:
        warnings.add("tool responses that match no tool call by id or position are not written")
    if data is not None:
        out["tools"] = tools
    if isinstance(data, IntermediateData) and data.intermediate_responses:
        if any(author for author, _ in data.intermediate_responses):
            warnings.add("trpc intermediate responses have no author: authors are not written")
        out["intermediateResponses"] = [
            _message(Content(role="model", parts=parts), warnings, "intermediate responses")
            for _, parts in data.intermediate_responses
        ]
    if inv.creation_timestamp:
        out["creationTimestamp"] = inv.creation_timestamp
    for key in _INV_EXTRAS:
        if key in ext:
            out[key] = ext[key]
    lost = [
        name
        for name in ("duration", "model_duration", "tool_duration", "rubrics", "app_details")
        if getattr(inv, name) is not None
    ]
    for name in lost:
        warnings.add(f"trpc invocations have no {name}: it is not written")
    return out


def _pair(
    call: FunctionCall,
    responses: list[FunctionResponse],
) -> FunctionResponse | None:
    """The response with the call's id (the next id-less response for an id-less call)."""
    for i, response in enumerate(responses):
        if response.id == call.id:
            return responses.pop(i)
    return None


def _dump_case(case: EvalCase, warnings: set[str]) -> dict[str, Any]:
    ext = case.extensions.get(EXT, {})
    out: dict[str, Any] = {"evalId": case.eval_id}
    for key in ("evalMode", "expectedRunnerEnabled", "contextMessages"):
        if key in ext:
            out[key] = ext[key]
    if case.conversation is not None and not ext.get("expectedFromActual"):
        out["conversation"] = [_dump_invocation(inv, warnings) for inv in case.conversation]
    if case.conversation_scenario is not None:
        scenario = case.conversation_scenario
        out["conversationScenario"] = {
            "startingPrompt": scenario.starting_prompt,
            "conversationPlan": scenario.conversation_plan,
            **ext.get("conversationScenario", {}),
        }
        if scenario.user_persona is not None:
            warnings.add("trpc scenarios have no user_persona: it is not written")
    if "actualConversation" in ext:
        out["actualConversation"] = ext["actualConversation"]
    elif case.trace_actuals is not None:  # trpc-agent-python's snake_case trace mode
        out["evalMode"] = "trace"
        out["actualConversation"] = [_dump_invocation(i, warnings) for i in case.trace_actuals]
    if case.session_input is not None:
        si = case.session_input
        out["sessionInput"] = {"appName": si.app_name, "userId": si.user_id}
        if si.state:
            out["sessionInput"]["state"] = si.state
        if si.session_id is not None or si.model_extra:
            warnings.add("trpc session input has only appName, userId and state")
    if case.rubrics is not None:
        names = ext.get("rubricMetricNames", [None] * len(case.rubrics))
        out["rubrics"] = [
            _dump_rubric(r, name) for r, name in zip(case.rubrics, names, strict=False)
        ]
    if case.creation_timestamp:
        out["creationTimestamp"] = case.creation_timestamp
    if case.final_session_state:
        warnings.add("trpc cases have no final_session_state: it is not written")
    extra = set(case.model_extra or {})
    if case.trace_actuals is not None:
        extra -= {"eval_mode", "evalMode", "actual_conversation", "actualConversation"}
    if extra:
        warnings.add("extra case fields are not written to trpc")
    return out


def _dump_rubric(rubric: Rubric, metric_name: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if metric_name:
        out["metricName"] = metric_name
    out["id"] = rubric.rubric_id
    out["content"] = (
        {"text": rubric.rubric_content.text_property}
        if rubric.rubric_content.text_property is not None
        else {}
    )
    if rubric.description is not None:
        out["description"] = rubric.description
    if rubric.type is not None:
        out["type"] = rubric.type
    return out
