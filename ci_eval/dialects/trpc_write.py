"""Writing trpc-agent-go eval sets (generation 3, camelCase) from the canonical model, with what
it cannot represent named. The loader (``trpc.py``) keeps what ADK has no field for under the
``"trpc"`` extension; it is written back from there, so a trpc file round-trips."""

from __future__ import annotations

from typing import Any

from ci_eval.model import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    Rubric,
)

EXT = "trpc"
# trpc's invocation fields that ADK has no place for; kept verbatim
INV_EXTRAS = ("contextMessages", "toolMock", "executionTrace")


def to_trpc_role(role: str | None) -> str | None:
    return "assistant" if role == "model" else role


def dump_eval_set(eval_set: EvalSet) -> tuple[Any, list[str]]:
    """trpc's JSON for ``eval_set`` and what it could not represent."""
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


def _message(content: Content, warnings: set[str], what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    role = to_trpc_role(content.role)
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
    for key in INV_EXTRAS:
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
