"""google-adk 2.13's judge prompts, filled in as ADK fills them, byte for byte.

The prompts are ADK's own text, shipped in ``adk_judge_prompts/`` (see its NOTICE.md). What
goes into them — a turn's texts, its tool calls and their results, rubrics, the conversation
so far, the agent's instructions — is rendered from ci-eval's invocation models exactly as
ADK renders its own models of the same JSON: the same joins, the same ``json.dumps`` or
pydantic JSON (pydantic's encoder is ADK's), the same field order and the same "None" where a
value is missing. Each function names the ADK source it follows. Pure: the templates are read
once from the package, nothing else.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from pydantic.alias_generators import to_camel, to_snake
from pydantic_core import to_json

from ci_eval.metrics.base import NotApplicable
from ci_eval.model import (
    Content,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    Rubric,
)

NO_TOOLS = "Agent has no tools."
NO_STEPS = "No intermediate steps were taken."
NO_GROUNDING = "No grounding metadata was provided."
# google.genai's FunctionCall and FunctionResponse fields, in the order genai declares them:
# ADK dumps these models, so their JSON keys come in this order, snake_case
_CALL_FIELDS = ("id", "args", "name", "partial_args", "will_continue")
_RESPONSE_FIELDS = ("will_continue", "scheduling", "parts", "id", "name", "response")


@functools.cache
def template(name: str) -> str:
    """One of ADK's prompts as shipped (bytes as ADK's string holds them)."""
    shipped = resources.files("ci_eval.metrics").joinpath("adk_judge_prompts").joinpath(name)
    return shipped.read_bytes().decode("utf-8")


def content_text(content: Content | None) -> str | None:
    """llm_as_judge_utils.get_text_from_content of a Content: its text parts joined by
    newlines ("" when none has text), None when it has no parts."""
    if content is not None and content.parts:
        return "\n".join(p.text for p in content.parts if p.text)
    return None


def response_text(inv: Invocation, include_intermediate: bool) -> str | None:
    """get_text_from_content of an Invocation: the final response's text, or with
    ``include_intermediate_responses_in_final`` every intermediate text then the final one."""
    if not include_intermediate:
        return content_text(inv.final_response)
    parts: list[str] = []
    data = inv.intermediate_data
    if isinstance(data, InvocationEvents):
        texts = [content_text(event.content) for event in data.invocation_events]
    elif isinstance(data, IntermediateData):
        texts = [content_text(Content(parts=parts)) for _, parts in data.intermediate_responses]
    else:
        texts = []
    parts = [t for t in texts if t]
    final = content_text(inv.final_response)
    if final:
        parts.append(final)
    return "\n".join(parts) if parts else None


def genai_fields(value: FunctionCall | FunctionResponse) -> dict[str, Any]:
    """What ADK dumps of genai's model of this call or result: its fields in genai's order,
    snake_case, those without a value left out."""
    data = value.model_dump(exclude_none=True)
    order = _CALL_FIELDS if isinstance(value, FunctionCall) else _RESPONSE_FIELDS
    out: dict[str, Any] = {}
    for name in order:
        for key in (name, to_camel(name)):  # an undeclared field is kept as the file spelt it
            if data.get(key) is not None:
                out[name] = data[key]
                break
    return out


def _parts(data: IntermediateData | InvocationEvents | None, kind: str) -> list[Any]:
    """eval_case.get_all_tool_calls / get_all_tool_responses: from either shape, in order."""
    if isinstance(data, IntermediateData):
        return list(data.tool_uses if kind == "function_call" else data.tool_responses)
    if isinstance(data, InvocationEvents):
        return [
            getattr(part, kind)
            for event in data.invocation_events
            if event.content and event.content.parts
            for part in event.content.parts
            if getattr(part, kind) is not None
        ]
    return []


def tool_steps_json(data: IntermediateData | InvocationEvents | None) -> str:
    """llm_as_judge_utils.get_tool_calls_and_responses_as_json_str: every call with the result
    of the same id (the last such; a call without an id takes a result without one), or
    "None"; pydantic JSON indented by 2."""
    by_id = {r.id: r for r in _parts(data, "function_response")}
    calls = _parts(data, "function_call")
    if not calls:
        return NO_STEPS
    steps = []
    for step, call in enumerate(calls):
        result = by_id.get(call.id)
        steps.append(
            {
                "step": step,
                "tool_call": genai_fields(call),
                "tool_response": "None" if result is None else genai_fields(result),
            }
        )
    return to_json({"tool_calls_and_response": steps}, indent=2).decode()


def _snake(value: Any) -> Any:
    """A genai model as a file holds it (camelCase or snake_case keys) as genai dumps it:
    snake_case keys, nulls left out; the keys stay in the file's order (genai's own order when
    ADK or genai wrote the file)."""
    if isinstance(value, dict):
        return {to_snake(k): _snake(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_snake(v) for v in value]
    return value


def grounding_json(events: list[InvocationEvent] | None) -> str:
    """llm_as_judge_utils.get_grounding_metadata_as_json_str over these events (None: the
    invocation's data is not events): each event's grounding metadata with its index and
    author, pydantic JSON indented by 2."""
    entries = [
        {"step": step, "author": event.author, "grounding_metadata": _snake(metadata)}
        for step, event in enumerate(events or [])
        if (metadata := event.grounding_metadata) is not None
    ]
    if not entries:
        return NO_GROUNDING
    return to_json({"grounding_metadata": entries}, indent=2).decode()


def events_of(inv: Invocation) -> list[InvocationEvent] | None:
    data = inv.intermediate_data
    return list(data.invocation_events) if isinstance(data, InvocationEvents) else None


def agents(app_details: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """app_details.AppDetails.agent_details as ADK reads it (name → details, snake_case or
    camelCase); details ADK's model would refuse are not guessed at."""
    found = app_details.get("agent_details", app_details.get("agentDetails", {}))
    if not isinstance(found, dict) or not all(isinstance(d, dict) for d in found.values()):
        raise NotApplicable("app_details.agent_details is not ADK's AppDetails shape")
    out = {}
    for name, details in found.items():
        instructions = details.get("instructions", "")
        tools = details.get("tool_declarations", details.get("toolDeclarations", []))
        if not isinstance(instructions, str) or not isinstance(tools, list):
            raise NotApplicable(f"app_details.agent_details.{name} is not ADK's AgentDetails")
        out[name] = {"instructions": instructions, "tool_declarations": tools}
    return out


def tool_declarations_json(app_details: dict[str, Any]) -> str:
    """llm_as_judge_utils.get_tool_declarations_as_json_str: every agent's tool declarations
    by agent name, as recorded, pydantic JSON indented by 2."""
    by_agent = {name: d["tool_declarations"] for name, d in agents(app_details).items()}
    return to_json({"tool_declarations": by_agent}, indent=2).decode()


def instructions_of(app_details: dict[str, Any], agent: str) -> str:
    """AppDetails.get_developer_instructions, which refuses an agent it does not know."""
    known = agents(app_details)
    if agent not in known:
        raise NotApplicable(f"`{agent}` not found in the agentic system (app_details)")
    return str(known[agent]["instructions"])


def rubric_lines(rubrics: list[Rubric]) -> str:
    """The properties as the single-turn rubric prompts list them: ``*  [id: …] text``."""
    return "\n".join(f"*  [id: {r.rubric_id}] {r.rubric_content.text_property}" for r in rubrics)


def final_response_match_prompt(
    actual: Invocation, expected: Invocation, include_intermediate: bool
) -> str:
    """final_response_match_v2.py, FinalResponseMatchV2Evaluator.format_auto_rater_prompt."""
    return template("final_response_match_v2.txt").format(
        prompt=content_text(expected.user_content),
        response=response_text(actual, include_intermediate) or "",
        golden_response=response_text(expected, include_intermediate) or "",
    )


def final_response_quality_prompt(
    actual: Invocation, rubrics: list[Rubric], include_intermediate: bool
) -> str:
    """rubric_based_final_response_quality_v1.py, format_auto_rater_prompt: the developer
    instructions are those of the first event's author, else of the first agent."""
    instructions, declarations = "", NO_TOOLS
    app = actual.app_details
    if app is not None:
        events = events_of(actual)
        agent = events[0].author if events else next(iter(agents(app)), None)
        if agent:
            instructions = instructions_of(app, agent)
        declarations = tool_declarations_json(app)
    return template("rubric_based_final_response_quality_v1.txt").format(
        developer_instructions=instructions,
        tool_declarations=declarations,
        user_input=content_text(actual.user_content),
        response_steps=tool_steps_json(actual.intermediate_data),
        grounding_metadata=grounding_json(events_of(actual)),
        final_response=response_text(actual, include_intermediate) or "",
        rubrics=rubric_lines(rubrics),
    )


def tool_use_quality_prompt(actual: Invocation, rubrics: list[Rubric]) -> str:
    """rubric_based_tool_use_quality_v1.py, RubricBasedToolUseV1Evaluator."""
    app = actual.app_details
    return template("rubric_based_tool_use_quality_v1.txt").format(
        tool_declarations=NO_TOOLS if app is None else tool_declarations_json(app),
        user_input=content_text(actual.user_content),
        tool_usage=tool_steps_json(actual.intermediate_data),
        rubrics=rubric_lines(rubrics),
    )


def _texts(content: Content | None) -> list[str]:
    return [p.text for p in content.parts if p.text] if content and content.parts else []


def dialogue(actuals: list[Invocation]) -> str:
    """rubric_based_multi_turn_trajectory_evaluator.py, _assemble_dialogue_history: numbered
    turns, texts joined by spaces; tool calls and results only from events."""
    lines = []
    for n, inv in enumerate(actuals, 1):
        if texts := _texts(inv.user_content):
            lines.append(f"USER TURN {n}: {' '.join(texts)}")
        events = events_of(inv) or []
        for event in events:
            who = "USER" if event.author and event.author.lower() == "user" else None
            role = who or f"AGENT ({event.author})"
            if not (event.content and event.content.parts):
                continue
            if texts := _texts(event.content):
                lines.append(f"{role} TURN {n}: {' '.join(texts)}")
            for part in event.content.parts:
                if (call := part.function_call) is not None:
                    args = json.dumps(dict(call.args)) if call.args else "{}"
                    lines.append(f"{role} TURN {n} (tool call): {call.name}({args})")
                if (result := part.function_response) is not None:
                    out = json.dumps(dict(result.response)) if result.response else "{}"
                    lines.append(f"{role} TURN {n} (tool output): {result.name} -> {out}")
        if texts := _texts(inv.final_response):
            agent = events[0].author if events else "agent"
            lines.append(f"AGENT ({agent}) TURN {n}: {' '.join(texts)}")
    return "\n".join(lines)


def trajectory_prompt(actuals: list[Invocation], rubrics: list[Rubric]) -> str:
    """RubricBasedMultiTurnTrajectoryEvaluator: the whole dialogue, every agent's instructions
    and tools (each once), the properties as indented JSON."""
    instructions, tools = [], []
    for inv in actuals:
        for agent, details in agents(inv.app_details or {}).items():
            instructions.append(f"Agent {agent} Instructions:\n{details['instructions']}")
            tools.append(f"Agent: {agent}")
            if details["tool_declarations"]:
                # ADK reads each declaration as genai's Tool (``tool.function_declarations``);
                # one recorded as JSON is a dict, on which its evaluator stops with an error
                raise NotApplicable(
                    "google-adk 2.13's evaluator cannot read tool declarations recorded as "
                    f"JSON (app_details of agent {agent})"
                )
    properties = [
        {"id": r.rubric_id, "property": r.rubric_content.text_property}
        | ({"type": r.type} if r.type else {})
        for r in rubrics
    ]
    return template("rubric_based_multi_turn_trajectory_quality_v1.txt").format(
        user_agent_dialogue=dialogue(actuals),
        properties=json.dumps(properties, indent=2),
        agent_instructions="\n\n".join(dict.fromkeys(instructions)),
        agent_tool_definitions="\n".join(dict.fromkeys(tools)),
    )


def hallucination_context(inv: Invocation, events: list[InvocationEvent]) -> str:
    """hallucinations_v1.py, _create_context_for_step: instructions, prompt, tools, grounding,
    then each event's texts, tool calls and tool outputs (Python's json.dumps of genai's
    python-mode dump, indented by 2)."""
    instructions, declarations = "", NO_TOOLS
    if (app := inv.app_details) is not None:
        found = agents(app)
        instructions = "\n\n".join(
            f"{name}:\n{d['instructions']}" for name, d in found.items() if d["instructions"]
        )
        declarations = tool_declarations_json(app)
    parts = [
        f"Developer instructions:\n{instructions}\n",
        f"User prompt:\n{content_text(inv.user_content)}\n",
        "Tool definitions:",
        f"{declarations}\n",
        "Grounding metadata:",
        f"{grounding_json(events)}\n",
    ]
    for event in events:
        if not (event.content and event.content.parts):
            continue
        content_parts = event.content.parts
        calls = [genai_fields(p.function_call) for p in content_parts if p.function_call]
        results = [genai_fields(p.function_response) for p in content_parts if p.function_response]
        if texts := [p.text for p in content_parts if p.text]:
            parts.append("\n".join(texts) + "\n")
        if calls:
            parts += ["tool_calls:", json.dumps(calls, indent=2) + "\n"]
        if results:
            parts += ["tool_outputs:", json.dumps(results, indent=2) + "\n"]
    return "\n".join(parts)


def hallucination_steps(inv: Invocation, intermediate: bool) -> list[tuple[str, str]]:
    """hallucinations_v1.py, _get_steps_to_evaluate: (text, context) for each intermediate
    text when asked (the context: the events before it, plus its grounding), then the final
    response's (the context: all events)."""
    steps = []
    all_events = events_of(inv) or []
    before: list[InvocationEvent] = []
    if intermediate:
        for event in all_events:
            if texts := _texts(event.content):
                step_events = before
                if event.grounding_metadata is not None:
                    step_events = [*before, event.model_copy(update={"content": None})]
                context = hallucination_context(inv, step_events)
                steps += [(text, context) for text in texts]
            before.append(event)
    else:
        before = all_events
    if final := content_text(inv.final_response):
        steps.append((final, hallucination_context(inv, before)))
    return steps


def segmenter_prompt(response: str) -> str:
    return template("hallucinations_v1_segmenter.txt").format(response=response)


def validator_prompt(context: str, sentences: list[str]) -> str:
    listed = "\n".join(f"<sentence>{s}</sentence>" for s in sentences)
    return template("hallucinations_v1_validator.txt").format(context=context, sentences=listed)
