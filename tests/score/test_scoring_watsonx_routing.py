"""watsonx Orchestrate's agent routing F1, tool parameter F1, step counts and quick eval
(ibm-watsonx-orchestrate-evaluation-framework 1.6.9): worked examples, and a quick-eval dataset
through ``ci-eval run`` with a loopback judge. IBM's own code: test_watsonx_ibm_parity_routing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval import pipeline
from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.judge_metrics import NO_JUDGE
from ci_eval.metrics.watsonx_messages import messages_of, step_counts
from ci_eval.metrics.watsonx_quick import (
    quick_eval_schema_valid_tool_calls,
    quick_eval_successful_tool_calls,
)
from ci_eval.metrics.watsonx_quick_checks import prompt_messages, verdict_is_correct
from ci_eval.metrics.watsonx_routing import agent_routing_f1, parameter_f1, tool_parameter_f1
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation
from ci_eval.model.evalset import EvalCase, EvalSet
from ci_eval.model.metric_spec import MetricSpec, defaults_dialect
from ci_eval.settings import RunSettings
from tests.conftest import SAMPLES
from tests.judge_server import JudgeServer
from tests.simulated_user import scripted_user

AGENTS = [
    {"name": "hr_agent", "tools": ["get_assignment_id", "get_timeoff"]},
    {"name": "payroll_agent", "tools": ["get_pay"]},
    {"name": "manager", "tools": [], "collaborators": ["hr_agent", "payroll_agent"]},
]
DATASET: dict[str, Any] = {
    "agent": "manager",
    "story": "s",
    "goals": {"get_assignment_id-1": ["get_timeoff-1"], "get_timeoff-1": []},
    "goal_details": [
        {
            "type": "tool_call",
            "name": "get_assignment_id-1",
            "tool_name": "get_assignment_id",
            "args": {"username": "nwaters"},
        },
        {
            "type": "tool_call",
            "name": "get_timeoff-1",
            "tool_name": "get_timeoff",
            "args": {"id": "15778303", "start": "2025-01-01", "note": "x"},
            "arg_matching": {"start": "fuzzy", "note": "ignore"},
        },
    ],
}
QUICK: dict[str, Any] = {"agent": "weather_agent", "goals": {}, "goal_details": [], "story": "s"}


def _turn(*calls: tuple[str, dict[str, Any]]) -> Invocation:
    return Invocation(
        user_content=Content.from_text("hi", "user"),
        final_response=Content.from_text("done", "model"),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(id=f"c{n}", name=n_, args=a) for n, (n_, a) in enumerate(calls)]
        ),
    )


def _score(scorer: Any, turns: list[Invocation], data: dict[str, Any] = DATASET, **opts: Any):
    ctx = ScoreContext(
        extensions={"watsonx": data}, set_dialect="watsonx", judge=opts.pop("judge", None)
    )
    return scorer([], turns, MetricSpec("x", None, opts), ctx)


def test_routing_f1_over_the_agents_that_own_the_expected_tools() -> None:
    right = _turn(("hr_agent", {}), ("get_assignment_id", {"username": "nwaters"}))
    assert _score(agent_routing_f1, [right], agents=AGENTS)[0] == 1.0
    # routed to hr_agent (expected) and payroll_agent (not): tp 1, fp 1 → 2/3
    both = _turn(("chat_with_collaborator_hr_agent", {}), ("payroll_agent", {}))
    score, _, details = _score(agent_routing_f1, [both], agents=AGENTS)
    assert score == 0.67 and details["false_positives"] == 1
    # nothing routed: IBM's 1
    assert _score(agent_routing_f1, [_turn(("get_timeoff", {}))], agents=AGENTS)[0] == 1.0


def test_routing_reads_agent_spec_files_and_needs_the_agents(tmp_path: Path) -> None:
    for agent in AGENTS:
        (tmp_path / f"{agent['name']}.json").write_text(json.dumps(agent))
    wrong = _turn(("payroll_agent", {}))
    assert _score(agent_routing_f1, [wrong], agents=str(tmp_path))[0] == 0.0
    with pytest.raises(NotApplicable, match="agents"):
        _score(agent_routing_f1, [wrong])


def test_parameter_f1_gives_partial_credit_and_keeps_the_latest_call() -> None:
    assert parameter_f1({"a": 1, "b": "X"}, {"a": "1.0", "b": "x"}, {}, "<IGNORE>") == 1.0
    # one of two right, one extra: 2·1 / (2·1 + 1 + 1)
    assert parameter_f1({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 0}, {}, "<IGNORE>") == 0.5
    assert parameter_f1(None, {}, {}, "<IGNORE>") != parameter_f1(None, {}, {}, "<IGNORE>")  # NaN
    calls = [
        ("get_assignment_id", {"username": "nobody"}),
        ("get_assignment_id", {"username": "NWaters"}),  # the latest counts: 1.0
        ("get_timeoff", {"id": 15778303, "start": "Jan 1, 2025"}),  # fuzzy date; note ignored
    ]
    score, _, details = _score(tool_parameter_f1, [_turn(*calls)])
    assert details["individual_f1_scores"] == {"get_assignment_id-1": 1.0, "get_timeoff-1": 1.0}
    assert score == 1.0
    assert _score(tool_parameter_f1, [_turn(("other", {}))])[0] == 0.0


def test_step_counts_are_ibms_messages() -> None:
    turns = [_turn(("hr_agent", {}), ("get_pay", {})), _turn()]
    messages = messages_of(turns)
    assert [m["type"] for m in messages] == [
        "text",
        "tool_call",
        "tool_call",
        "text",
        "text",
        "text",
    ]
    assert step_counts(messages) == {"total_steps": 6, "llm_steps": 4, "total_tool_calls": 2}


SPECS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def test_quick_eval_schema_checks_need_no_judge(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(SPECS))
    turns = [_turn(("get_weather", {"city": "Paris"}), ("get_weather", {"town": 1}))]
    score, _, details = _score(quick_eval_schema_valid_tool_calls, turns, QUICK, tools=str(tools))
    assert score == 0.5
    assert sorted(details["tool_calls"][1]["static_failures"]) == [
        "missing_required_parameter",
        "non_existent_parameter",
    ]
    with pytest.raises(NotApplicable, match="tools"):
        _score(quick_eval_schema_valid_tool_calls, turns, QUICK)
    with pytest.raises(NotApplicable, match="without goals"):
        _score(quick_eval_schema_valid_tool_calls, turns, DATASET, tools=str(tools))


def test_quick_eval_llm_checks_need_the_judge() -> None:
    with pytest.raises(NotApplicable) as caught:
        _score(quick_eval_successful_tool_calls, [_turn(("get_weather", {}))], QUICK)
    assert str(caught.value) == NO_JUDGE


def test_ibms_prompt_frame_and_verdict_rule() -> None:
    call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = prompt_messages(
        "general_conversation_grounded_correctness", {"conversation_context": [], "tool_call": call}
    )
    assert messages[0]["role"] == "system" and "threshold_low" not in messages[0]["content"]
    assert messages[-1]["content"].startswith("Conversation context:\n[]\n\nProposed tool call:")
    assert len(messages) == 2 + 2 * 5  # five few-shot examples, each a user/assistant pair
    check = "function_selection_appropriateness"  # output thresholds 3–5, confidence 0–1
    assert verdict_is_correct(check, {"output": 3, "confidence": 0.9})
    assert not verdict_is_correct(check, {"output": 2, "confidence": 0.9})
    assert verdict_is_correct(check, {"output": 1, "confidence": 1.5})  # "not important"


def test_a_dataset_without_goals_defaults_to_quick_eval() -> None:
    case = EvalCase(eval_id="q", conversation=[])
    case.extensions["watsonx"] = QUICK
    quick = EvalSet(eval_set_id="q", eval_cases=[case])
    assert defaults_dialect("watsonx", quick) == "watsonx-quick"
    case.extensions["watsonx"] = DATASET
    assert defaults_dialect("watsonx", quick) == "watsonx"


def _judge(prompt: str, n: int) -> str:
    if "Proposed tool call:" in prompt:  # IBM's quick-eval check
        return '{"evidence": "", "explanation": "", "output": 5, "confidence": 0.9}'
    return scripted_user()(prompt, n)


def test_a_quick_eval_dataset_is_scored_with_the_judge(tmp_path: Path) -> None:
    dataset = tmp_path / "quick.json"
    dataset.write_text(json.dumps({**QUICK, "starting_sentence": "Weather in Paris?"}))
    settings = RunSettings(paths=[str(dataset)], results=str(tmp_path / "r.json"))
    settings.agent.kind = "command"
    settings.agent.command = f"python {SAMPLES / 'agents/weather_agent/command_agent.py'}"
    settings.baseline = str(tmp_path / "no-baseline.json")
    with JudgeServer(_judge) as llm:
        settings.judge.base_url, settings.judge.model = llm.url, "loopback"
        outcome = pipeline.run(settings)
        checks = [p for p in llm.prompts if "Proposed tool call:" in p]
    [case] = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"]
    metrics = {m["name"]: (m["score"], m["status"]) for m in case["metrics"]}
    assert metrics["quick_eval_successful_tool_calls"] == (1.0, "PASSED"), case
    assert len(checks) == 1 and '"function": {"name": "get_weather"' in checks[0]
    assert case["status"] == "PASSED" and outcome.exit_code == 0
