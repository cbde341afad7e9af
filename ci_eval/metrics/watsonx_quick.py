"""watsonx Orchestrate's quick eval (``orchestrate evaluations quick-eval``): reference-free
checks of every tool call, for datasets without expected tool calls (``goals`` ``{}``,
``goal_details`` ``[]``). ci-eval's own code after ibm-watsonx-orchestrate-evaluation-framework
1.6.9: ``agentops/quick_eval.py`` (``QuickEvalController``), ``agentops/referenceless_eval/
referenceless_eval.py`` (``ReferencelessEvaluation``) and its ``ReflectionPipeline``; the checks
themselves in ``watsonx_quick_checks``.

Each tool call of the conversation (not ``transfer_to*`` calls, nor calls of an agent named in
the ``agents`` option) is checked with the conversation before it as context:

* with tool specs (the metric's ``tools`` option: the path of a JSON file of OpenAI tool specs,
  such as the ``tool_spec.json`` IBM's quick eval writes, or a folder of them; relative to the
  working directory): IBM's static schema checks, then, when they pass, two LLM checks,
  ``general_hallucination_check`` and ``function_selection_appropriateness``;
* without: IBM's spec-free mode, the one LLM check ``general_conversation_grounded_correctness``.

A call succeeds when every check does. **quick_eval_successful_tool_calls** = successful calls /
calls checked (IBM reports the counts: Tool Calls, Successful Tool Calls, Tool Calls Failed due
to Schema Mismatch, … due to Hallucination; all four are in the details); 1 when no call was
made. The LLM checks go through ci-eval's judge, with IBM's prompts (its model was
llama-3-3-70b-instruct). **quick_eval_schema_valid_tool_calls** is the static part alone:
deterministic, no judge, but it needs the tool specs.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.judge_metrics import judge_of
from ci_eval.metrics.registry import register
from ci_eval.metrics.watsonx_messages import messages_of
from ci_eval.metrics.watsonx_quick_checks import (
    FUNCTION_SELECTION,
    GROUNDED,
    HALLUCINATION,
    inventory_summary,
    prompt_messages,
    static_failures,
    tool_specs,
    verdict_is_correct,
)
from ci_eval.metrics.watsonx_routing import agents_of
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

NO_SPECS = (
    'the static checks need the tool specs: give the metric a "tools" option, the path of a '
    "JSON file of OpenAI tool specs (such as IBM's quick-eval tool_spec.json)"
)


def is_referenceless(data: Any) -> bool:
    """A quick-eval dataset: IBM's ``ReferencelessTestCase``, without goals."""
    return isinstance(data, dict) and not data.get("goals") and not data.get("goal_details")


def tool_call_examples(
    messages: list[dict[str, Any]], agents: frozenset[str] = frozenset()
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """``ReferencelessEvaluation.fmt_msgs_referenceless``: (tool call, the messages before it)
    for every call but ``transfer_to*`` and collaborator-agent calls."""
    examples = []
    for n, message in enumerate(messages):
        if message["role"] != "assistant" or message["type"] != "tool_call":
            continue
        call = json.loads(message["content"])
        if call["name"].startswith("transfer_to") or call["name"] in agents:
            continue
        call_dict = {
            "id": call.get("id", "1"),
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
        }
        examples.append((call_dict, messages[:n]))
    return examples


@lru_cache(maxsize=32)
def _specs_at(path: str) -> str:
    target = Path(path)
    files = sorted(target.rglob("*.json")) if target.is_dir() else [target]
    specs: list[Any] = []
    for file in files:
        value = json.loads(file.read_text(encoding="utf-8"))
        specs.extend(value if isinstance(value, list) else [value])
    return json.dumps(specs)


def specs_of(spec: MetricSpec) -> list[dict[str, Any]] | None:
    """The metric's ``tools`` option as IBM's specs; None without one (spec-free mode)."""
    given = spec.criterion.get("tools")
    if given is None:
        return None
    if not isinstance(given, str):
        raise NotApplicable(NO_SPECS)
    try:
        loaded = json.loads(_specs_at(given))
    except (OSError, ValueError) as exc:
        raise NotApplicable(f"tools {given!r}: cannot read ({exc})") from None
    return tool_specs(loaded) or None


def _agents(spec: MetricSpec) -> frozenset[str]:
    """The collaborator agents whose calls are not checked: IBM's ``ResourceMap.all_agents``,
    the agents with a tool."""
    if spec.criterion.get("agents") is None:
        return frozenset()
    return frozenset(name for name, tools in agents_of(spec).items() if tools)


def _dataset(ctx: ScoreContext) -> dict[str, Any]:
    data = ctx.extensions.get("watsonx")
    if not is_referenceless(data):
        raise NotApplicable(
            "quick eval scores watsonx Orchestrate datasets without goals (goals {}, "
            "goal_details [])"
        )
    return data  # type: ignore[return-value]


def _static(specs: list[dict[str, Any]], call: dict[str, Any]) -> dict[str, str]:
    args = json.loads(call["function"]["arguments"])
    return static_failures(specs, call["function"]["name"], args)


def _semantic(
    ctx: ScoreContext,
    specs: list[dict[str, Any]] | None,
    call: dict[str, Any],
    context: list[dict[str, Any]],
) -> dict[str, bool]:
    """Check name → correct, asked of the judge (``SemanticChecker.run_sync``)."""
    judge = judge_of(ctx)
    name = call["function"]["name"]
    if specs is None:
        asks = {GROUNDED: {"conversation_context": context, "tool_call": call}}
    else:
        own = next((s for s in specs if s["name"] == name), {})
        asks = {
            HALLUCINATION: {
                "conversation_context": context,
                "tool_call": call,
                "tool_inventory": own,
            },
            FUNCTION_SELECTION: {
                "conversation_context": context,
                "tools_inventory": inventory_summary(specs),
                "proposed_tool_call": call,
                "selected_function": name,
            },
        }
    return {
        check: verdict_is_correct(check, judge.ask_json(prompt_messages(check, values)))
        for check, values in asks.items()
    }


def quick_eval(
    actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext, semantic: bool
) -> dict[str, Any]:
    """``QuickEvalController.compute_metrics`` over the conversation's tool calls."""
    _dataset(ctx)
    specs = specs_of(spec)
    if not semantic and specs is None:
        raise NotApplicable(NO_SPECS)
    if semantic:
        judge_of(ctx)  # no judge: NOT_EVALUATED before anything is asked
    calls = []
    for call, context in tool_call_examples(messages_of(actual), _agents(spec)):
        failed = _static(specs, call) if specs is not None else {}
        entry: dict[str, Any] = {"name": call["function"]["name"], "static_failures": failed}
        if semantic and not failed:
            verdicts = _semantic(ctx, specs, call, context)
            entry["semantic_failures"] = sorted(k for k, ok in verdicts.items() if not ok)
        calls.append(entry)
    return {
        "number_of_tool_calls": len(calls),
        "number_of_successful_tool_calls": sum(
            1 for c in calls if not c["static_failures"] and not c.get("semantic_failures")
        ),
        "number_of_static_failed_tool_calls": sum(1 for c in calls if c["static_failures"]),
        "number_of_semantic_failed_tool_calls": sum(1 for c in calls if c.get("semantic_failures")),
        "spec_free": specs is None,
        "tool_calls": calls,
    }


def quick_eval_successful_tool_calls(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    found = quick_eval(actual, spec, ctx, semantic=True)
    total = found["number_of_tool_calls"]
    score = found["number_of_successful_tool_calls"] / total if total else 1.0
    return score, [score], found


def quick_eval_schema_valid_tool_calls(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    found = quick_eval(actual, spec, ctx, semantic=False)
    total = found["number_of_tool_calls"]
    score = 1.0 - found["number_of_static_failed_tool_calls"] / total if total else 1.0
    return score, [score], found


register(
    Metric(
        "quick_eval_successful_tool_calls",
        "watsonx Orchestrate quick eval (no expected tool calls): share of the agent's tool "
        "calls that pass IBM's reference-free checks — the tool specs' schema (with the "
        '"tools" option) and its LLM checks through the judge; 1 when no call was made.',
        quick_eval_successful_tool_calls,
        needs_llm=True,
        default_threshold=1.0,
        origin="watsonx Orchestrate",
        needs_expected=False,
    )
)
register(
    Metric(
        "quick_eval_schema_valid_tool_calls",
        "watsonx Orchestrate quick eval: share of the agent's tool calls that pass IBM's static "
        'checks against the tool specs ("tools" option); no judge; 1 when no call was made.',
        quick_eval_schema_valid_tool_calls,
        default_threshold=1.0,
        origin="watsonx Orchestrate",
        needs_expected=False,
    )
)
