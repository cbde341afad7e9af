"""watsonx Orchestrate parity: ci-eval's tool-call precision/recall and journey success against
IBM's own code (``agentops`` from ibm-watsonx-orchestrate-evaluation-framework: the
ExpectedToolExtractor, the ToolCalling metric and the journey's topological-sort check) on the
same conversations.

The framework is not a test dependency (installing it beside google-adk downgrades pandas,
jsonschema and tenacity and moves opentelemetry; see docs/reference.md), so this test skips unless
``agentops`` is importable, e.g. ``pip install --target DIR ibm-watsonx-orchestrate-evaluation-
framework`` and ``CI_EVAL_IBM_PATH=DIR``. Tool-call goals only: text goals need IBM's LLM checks.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.watsonx import (
    journey_success,
    tool_analysis,
    tool_call_precision,
    tool_call_recall,
)
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation
from ci_eval.model.metric_spec import MetricSpec
from tests import ibm_framework

ibm_framework.importable()


class _NoLlm:
    """IBM's extractor wants an LLM client for fuzzy argument matching; these datasets never
    use fuzzy, so any call is a test failure."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"IBM's code asked its LLM client for {name}")


def _ibm(dataset: dict[str, Any], conversation: list[Invocation]) -> dict[str, Any]:
    from agentops.extractors.expected_tool_extractor import ExpectedToolExtractor
    from agentops.metrics.metrics import ToolCallAndRoutingMetrics
    from agentops.metrics.traversal_utils import is_topological_sort
    from agentops.operator.operator_base import OperatorBase
    from agentops.type import ContentType, Function, Message, TestCase, ToolCall

    messages = []
    for n, inv in enumerate(conversation):
        messages.append(Message(role="user", content=inv.user_content.text(), type="text"))
        for k, call in enumerate(inv.tool_calls()):
            messages.append(
                Message(
                    role="assistant",
                    content=json.dumps({"name": call.name, "args": call.args}),
                    type=ContentType.tool_call,
                    tool_calls=[
                        ToolCall(
                            id=f"c{n}{k}",
                            function=Function(
                                name=call.name or "", arguments=json.dumps(call.args)
                            ),
                        )
                    ],
                )
            )
        if inv.final_response:
            messages.append(
                Message(role="assistant", content=inv.final_response.text(), type="text")
            )
    truth = TestCase.model_validate(dataset)
    context: dict[str, Any] = {"extractor": {}, "metric": {}}
    extractor = ExpectedToolExtractor(llm_client=_NoLlm())
    extractor.extract(messages=messages, ground_truth=truth, metadata={}, extracted_context=context)
    found = context["extractor"][OperatorBase.key(extractor)]
    correct = list(found["correct_tool_calls"].value)
    tool_goals = [g for g in truth.goal_details if g.type == ContentType.tool_call]
    counts = ToolCallAndRoutingMetrics(
        total_tool_calls=sum(1 for m in messages if m.type == ContentType.tool_call),
        expected_tool_calls=len(tool_goals),
        correct_tool_calls=len(correct),
        relevant_tool_calls=len(found["relevant_tool_call_idx"].value),
        tool_calls_with_incorrect_parameter=len(found["incorrect_param_tool_idx"].value),
    )
    return {
        "precision": counts.tool_call_precision,
        "recall": counts.tool_call_recall,
        "success": is_topological_sort(dataset["goals"], correct, is_strict=True),
    }


def _ours(dataset: dict[str, Any], conversation: list[Invocation]) -> dict[str, Any]:
    ctx = ScoreContext(extensions={"watsonx": dataset}, set_dialect="watsonx")
    spec = MetricSpec("x")
    return {
        "precision": tool_call_precision([], conversation, spec, ctx)[0],
        "recall": tool_call_recall([], conversation, spec, ctx)[0],
        "success": journey_success([], conversation, spec, ctx)[0] == 1.0,
    }


CITIES = ["paris", "Paris", "PARIS", "london", "tokyo"]


def _dataset(rng: random.Random) -> dict[str, Any]:
    goals = []
    for n in range(rng.randint(1, 3)):
        tool = rng.choice(["get_weather", "get_time"])
        args: dict[str, Any] = {"city": rng.choice(CITIES)}
        matching = {}
        if rng.random() < 0.3:
            args["units"] = rng.choice(["metric", "<IGNORE>"])
            matching["units"] = rng.choice(["strict", "optional", "ignore"])
        goal = {"type": "tool_call", "name": f"{tool}-{n}", "tool_name": tool, "args": args}
        if matching:
            goal["arg_matching"] = matching
        goals.append(goal)
    names = [g["name"] for g in goals]
    dag = {name: ([names[i + 1]] if i + 1 < len(names) else []) for i, name in enumerate(names)}
    return {
        "agent": "a",
        "story": "s",
        "starting_sentence": "hi",
        "goals": dag,
        "goal_details": goals,
    }


def _conversation(rng: random.Random) -> list[Invocation]:
    turns = []
    for _ in range(rng.randint(1, 3)):
        calls = [
            FunctionCall(
                name=rng.choice(["get_weather", "get_time", "other"]),
                args={"city": rng.choice(CITIES)}
                | ({"units": "metric"} if rng.random() < 0.3 else {}),
            )
            for _ in range(rng.randint(0, 3))
        ]
        turns.append(
            Invocation(
                user_content=Content.from_text("q", "user"),
                final_response=Content.from_text("a", "model"),
                intermediate_data=IntermediateData(tool_uses=calls),
            )
        )
    return turns


def test_tool_calls_and_journey_agree_with_ibm_on_random_conversations() -> None:
    rng = random.Random(15)
    differences = []
    for _ in range(400):
        dataset, conversation = _dataset(rng), _conversation(rng)
        ours, ibm = _ours(dataset, conversation), _ibm(dataset, conversation)
        if ours != ibm:
            differences.append((dataset, [c.model_dump() for c in conversation], ours, ibm))
    assert not differences, differences[:3]


def test_analysis_counts_relevant_and_incorrect_calls_like_ibm() -> None:
    dataset = {
        "agent": "a",
        "story": "s",
        "goals": {"get_weather-1": []},
        "goal_details": [
            {
                "type": "tool_call",
                "name": "get_weather-1",
                "tool_name": "get_weather",
                "args": {"city": "paris"},
            }
        ],
    }
    conversation = _conversation(random.Random(1))
    assert _ours(dataset, conversation) == _ibm(dataset, conversation)
    assert tool_analysis(dataset, conversation)["expected_tool_calls"] == 1
