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

from ci_eval.dialects.base import LoadContext, check_unique_ids
from ci_eval.dialects.trpc_write import EXT, INV_EXTRAS, dump_eval_set
from ci_eval.io.jsonpos import JsonDocument
from ci_eval.io.validation import validate
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

# trpc's case fields that ADK has no place for; kept verbatim
_CASE_EXTRAS = ("evalMode", "expectedRunnerEnabled", "contextMessages", "actualConversation")
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


def _is_gen2(inv: dict[str, Any]) -> bool:
    user = inv.get("userContent")
    return "intermediateData" in inv or (isinstance(user, dict) and "parts" in user)


class TrpcDialect:
    name = "trpc"
    tool = "trpc-agent-go"
    # whose metrics a set takes without a sidecar: trpc-agent-go scores none without the set's
    # .metrics.json (its local metric manager lists none), so ci-eval applies ADK's defaults
    defaults = "ADK defaults: trpc-agent-go scores no metric without a .metrics.json"

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
                invocation(doc, a, [*loc, "actualConversation", n])
                for n, a in enumerate(item["actualConversation"])
            ]
        if raw.conversation is not None:
            conversation = [
                invocation(doc, inv, [*loc, "conversation", n])
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

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        return dump_eval_set(eval_set)


def _content(msg: _Message) -> Content:
    parts = [Part(text=msg.content)] if msg.content is not None else []
    return Content(role=_from_trpc_role(msg.role), parts=parts)


def invocation(doc: JsonDocument, item: Any, loc: list[Any]) -> Invocation:
    """One trpc invocation (generation 2 or 3) at ``loc`` of ``doc``, in the canonical model."""
    if not isinstance(item, dict):
        raise doc.error("expected an invocation object", loc)
    ext: dict[str, Any] = {k: item[k] for k in INV_EXTRAS if k in item}
    if _is_gen2(item):
        gen2 = {k: v for k, v in item.items() if k not in INV_EXTRAS}
        inv = validate(Invocation, gen2, doc, base=item, base_loc=loc)
        for content in (inv.user_content, inv.final_response):
            if content is not None:
                content.role = _from_trpc_role(content.role)
        ext["generation"] = 2
    else:
        inv = _gen3(doc, item, loc, ext)
    inv._extensions.update({EXT: ext} if ext else {})
    return inv


def _gen3(
    doc: JsonDocument, item: dict[str, Any], loc: list[Any], ext: dict[str, Any]
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


def recorded_runs(
    doc: JsonDocument, data: dict[str, Any]
) -> dict[tuple[str, str], list[tuple[list[Invocation], list[Invocation] | None]]]:
    """The actual invocations a trpc-agent-go result file recorded, per (eval set id, case id),
    one list per recorded run (what ``--agent replay`` replays), each with the expected
    invocations trpc recorded beside them when every one has a final response (a simulated
    case's expected runner answered them: the reference its critics judge against)."""
    runs: dict[tuple[str, str], list[tuple[list[Invocation], list[Invocation] | None]]] = {}
    for i, result in enumerate(data.get("evalCaseResults") or []):
        key = (result.get("evalSetId") or data.get("evalSetId") or "", result["evalId"])
        # (index in the file, the recorded pair) of each pair with an actual invocation
        per = [
            (n, p)
            for n, p in enumerate(result.get("evalMetricResultPerInvocation") or [])
            if p.get("actualInvocation")
        ]
        where = ["evalCaseResults", i, "evalMetricResultPerInvocation"]
        invocations = [
            invocation(doc, p["actualInvocation"], [*where, n, "actualInvocation"]) for n, p in per
        ]
        expected: list[Invocation] | None = None
        if per and all((p.get("expectedInvocation") or {}).get("finalResponse") for _, p in per):
            expected = [
                invocation(doc, p["expectedInvocation"], [*where, n, "expectedInvocation"])
                for n, p in per
            ]
        runs.setdefault(key, []).append((invocations, expected))
    return runs
