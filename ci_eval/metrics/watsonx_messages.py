"""A conversation as watsonx Orchestrate records it, and its step counts.

IBM's metrics read a flat message list (``agentops.type.Message``: ``role``, ``content``,
``type`` text | tool_call | tool_response), not ADK invocations. ``messages_of`` lays ci-eval's
invocations out the same way: per turn the user's text, each tool call (its ``content`` the JSON
object the Orchestrate runtime writes, ``{"type": "tool_call", "name", "args", "id"}``, as in
``agentops/runtime_adapter/wxo_v2_wire.py``) followed by its response, the agent's intermediate
texts and its final answer, then the interaction (widget) the turn ended asking for, if its
invocation records one (the ``"watsonx_interaction"`` extension, an IBM ``Interaction``): an
assistant message of type ``interaction`` whose content is the prompt, as IBM's
``EvaluationController`` appends it.

Step counts are IBM's ``agentops.metrics.steps.StepMetrics`` (ibm-watsonx-orchestrate-evaluation-
framework 1.6.9; the "Total Steps" / "LLM Steps" columns of ``summary_metrics.csv``): every
message, and the assistant's text and tool-call messages. ``total_tool_calls`` is IBM's
"Total Tool Calls" (``agentops/metrics/tool_calling.py``: every tool-call message, routing calls
included). All three are counts, reported and never failing.
"""

from __future__ import annotations

import json
from typing import Any

from ci_eval.dialects.watsonx import INTERACTION
from ci_eval.metrics.base import Metric, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.evalset import IntermediateData
from ci_eval.model.metric_spec import MetricSpec

LLM_STEP_TYPES = ("text", "tool_call", "conversational_search")


def _call_message(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    payload = {"type": "tool_call", "name": name, "args": args, "id": call_id}
    return {"role": "assistant", "content": json.dumps(payload), "type": "tool_call"}


def _response_message(name: str, response: Any, call_id: str) -> dict[str, Any]:
    payload = {
        "type": "tool_response",
        "content": json.dumps(response),
        "name": name,
        "tool_call_id": call_id,
    }
    return {"role": "assistant", "content": json.dumps(payload), "type": "tool_response"}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text, "type": "text"}


def _turn(inv: Invocation, n: int) -> list[dict[str, Any]]:
    data = inv.intermediate_data
    out: list[dict[str, Any]] = []
    if isinstance(data, IntermediateData):
        responses = list(data.tool_responses)
        for k, call in enumerate(data.tool_uses):
            call_id = call.id or f"call-{n}-{k}"
            out.append(_call_message(call.name or "", call.args or {}, call_id))
            match = next((r for r in responses if call.id and r.id == call.id), None)
            if match is None and responses and not responses[0].id:
                match = responses[0]
            if match is not None:
                responses.remove(match)
                out.append(_response_message(match.name or "", match.response, call_id))
        for _author, parts in data.intermediate_responses:
            text = "\n".join(p.text for p in parts if p.text and not p.thought)
            if text:
                out.append(_text("assistant", text))
    elif data is not None:  # ADK's event shape: in the order the events came
        for k, event in enumerate(data.invocation_events):
            for part in (event.content.parts or []) if event.content else []:
                if part.function_call:
                    call = part.function_call
                    call_id = call.id or f"call-{n}-{k}"
                    out.append(_call_message(call.name or "", call.args or {}, call_id))
                elif part.function_response:
                    resp = part.function_response
                    out.append(_response_message(resp.name or "", resp.response, resp.id or ""))
                elif part.text and not part.thought and event.author != "user":
                    out.append(_text("assistant", part.text))
    return out


def messages_of(actual: list[Invocation]) -> list[dict[str, Any]]:
    """The conversation as IBM's ``Message`` list (``role``, ``content``, ``type``)."""
    messages: list[dict[str, Any]] = []
    for n, inv in enumerate(actual):
        said = inv.user_content.text() if inv.user_content else ""
        if said:
            messages.append(_text("user", said))
        messages.extend(_turn(inv, n))
        if inv.final_response is not None and inv.final_response.text():
            messages.append(_text("assistant", inv.final_response.text()))
        interaction = inv.extensions.get(INTERACTION)
        if isinstance(interaction, dict):
            messages.append(
                {
                    "role": "assistant",
                    "content": str(interaction.get("prompt") or ""),
                    "type": "interaction",
                    "interaction": interaction,
                }
            )
    return messages


def step_counts(messages: list[dict[str, Any]]) -> dict[str, int]:
    """``StepMetrics`` and ``ToolCalling``'s total over IBM-shaped messages."""
    return {
        "total_steps": len(messages),
        "llm_steps": sum(
            1 for m in messages if m["role"] == "assistant" and m["type"] in LLM_STEP_TYPES
        ),
        "total_tool_calls": sum(1 for m in messages if m["type"] == "tool_call"),
    }


def _count(key: str):  # type: ignore[no-untyped-def]
    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        counts = step_counts(messages_of(actual))
        per_turn = [float(step_counts(messages_of([inv]))[key]) for inv in actual]
        return float(counts[key]), per_turn, counts

    return scorer


for _name, _text_of_metric in (
    ("total_steps", "watsonx Orchestrate: every message of the conversation (IBM's Total Steps)."),
    (
        "llm_steps",
        "watsonx Orchestrate: the agent's text and tool-call messages (IBM's LLM Steps).",
    ),
    (
        "total_tool_calls",
        "watsonx Orchestrate: tool-call messages, routing calls included (IBM's Total Tool Calls).",
    ),
):
    register(
        Metric(
            _name,
            _text_of_metric,
            _count(_name),
            value_range="[0, ∞)",
            informational=True,
            origin="watsonx Orchestrate",
            needs_expected=False,
            score_is_invocation_mean=False,
        )
    )
