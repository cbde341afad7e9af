"""watsonx Orchestrate metrics, as ibm-watsonx-orchestrate-evaluation-framework 1.5.2
(``agentops``) computes them: worked examples named after the functions they follow."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.watsonx import (
    arguments_match,
    is_topological,
    journey_completion,
    journey_success,
    tool_call_precision,
    tool_call_recall,
)
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.settings import JudgeConfig
from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.judge_server import JudgeServer
from tests.simulated_user import scripted_user

# the corpus's examples/evaluations/evaluate/data_simple.json, inline so the test stands alone
DATA_SIMPLE: dict[str, Any] = {
    "agent": "hr_agent",
    "goals": {
        "get_assignment_id_hr_agent": ["get_timeoff_schedule_hr_agent"],
        "get_timeoff_schedule_hr_agent": ["summarize"],
    },
    "goal_details": [
        {
            "type": "tool_call",
            "name": "get_assignment_id_hr_agent",
            "tool_name": "get_assignment_id_hr_agent",
            "args": {"username": "nwaters"},
        },
        {
            "type": "tool_call",
            "name": "get_timeoff_schedule_hr_agent",
            "tool_name": "get_timeoff_schedule_hr_agent",
            "args": {
                "assignment_id": "15778303",
                "start_date": "2025-01-01",
                "end_date": "2025-03-03",
            },
        },
        {
            "type": "text",
            "name": "summarize",
            "response": "Your timeoff schedule for 20250101 to 20250303 is: 20250105",
            "keywords": ["20250105"],
        },
    ],
    "story": "My username is nwaters.",
    "starting_sentence": "I want to know my timeoff schedule for a certain period.",
}
RIGHT = [
    ("get_assignment_id_hr_agent", {"username": "nwaters"}),
    (
        "get_timeoff_schedule_hr_agent",
        {"assignment_id": "15778303", "start_date": "2025-01-01", "end_date": "2025-03-03"},
    ),
]


def _actual(
    calls: list[tuple[str, dict[str, Any]]], text: str = "Your time off: 20250105"
) -> list[Invocation]:
    return [
        Invocation(
            user_content=Content(role="user", parts=[Part(text="q")]),
            final_response=Content(role="model", parts=[Part(text=text)]),
            intermediate_data=IntermediateData(
                tool_uses=[FunctionCall(name=n, args=a) for n, a in calls]
            ),
        )
    ]


def _ctx(data: dict[str, Any] = DATA_SIMPLE, judge: Judge | None = None) -> ScoreContext:
    return ScoreContext(extensions={"watsonx": data}, judge=judge)


def _score(
    fn: Any, calls: list, data: dict[str, Any] = DATA_SIMPLE, judge: Judge | None = None
) -> float:
    return fn([], _actual(calls), MetricSpec("m"), _ctx(data, judge))[0]


@pytest.mark.parametrize(
    ("expected", "actual", "strategies", "ok"),
    [
        ({"username": "nwaters"}, {"username": "NWaters"}, {}, True),  # lower-cased str()
        ({"n": 10}, {"n": "10"}, {}, True),  # str(10) == "10"
        ({"n": 10.0}, {"n": 10}, {}, True),  # 1.6.9's normalize_args: 10.0 → "10" (1.5.2: no)
        ({"l": ["b", "a"]}, {"l": ["a", "b"]}, {}, True),  # 1.6.9 sorts lists
        ({"q": {"x": "A", "y": 1}}, {"q": {"x": "a", "y": 2}}, {"q.y": "ignore"}, True),  # paths
        ({"b": True}, {"b": "true"}, {}, False),  # str(True) is "True", not lower-cased
        ({"a": 1}, {"a": 1, "extra": 2}, {}, True),  # extra actual args are allowed
        ({"a": 1}, {}, {}, False),
        ({"a": "<IGNORE>"}, {"a": "anything"}, {}, True),
        ({"IGNORE": None}, {"whatever": 1}, {}, True),
        (None, {}, {}, True),
        (None, {"a": 1}, {}, False),
        ({"a": 1}, {}, {"a": "optional"}, True),  # optional and absent: skipped
        ({"a": "X"}, {"a": "x"}, {"a": "optional"}, False),  # optional and present: raw equality
        ({"a": 1}, {"a": 2}, {"a": "ignore"}, True),
    ],
)
def test_argument_matching(expected: Any, actual: dict, strategies: dict, ok: bool) -> None:
    assert arguments_match(expected, actual, strategies) is ok


def test_tool_calling_recall_and_precision() -> None:
    calls = [*RIGHT, ("get_weather", {"city": "Paris"})]  # one irrelevant call
    assert _score(tool_call_recall, calls) == 1.0
    assert _score(tool_call_precision, calls) == 0.67  # round(2 / 3, 2)
    wrong_args = [RIGHT[0], ("get_timeoff_schedule_hr_agent", {"assignment_id": "1"})]
    assert _score(tool_call_recall, wrong_args) == 0.5
    assert _score(tool_call_precision, []) == 0.0


def test_recall_is_not_applicable_without_expected_tool_calls() -> None:
    data = {
        **DATA_SIMPLE,
        "goals": {"summarize": []},
        "goal_details": [DATA_SIMPLE["goal_details"][2]],
    }
    with pytest.raises(NotApplicable):
        _score(tool_call_recall, RIGHT, data)


def test_journey_success_is_topological_sort_in_strict_mode() -> None:
    goals = DATA_SIMPLE["goals"]
    order = ["get_assignment_id_hr_agent", "get_timeoff_schedule_hr_agent", "summarize"]
    assert is_topological(copy.deepcopy(goals), order)
    assert not is_topological(copy.deepcopy(goals), order[::-1])
    assert not is_topological(copy.deepcopy(goals), order[:2])  # the text goal is missing
    assert not is_topological(copy.deepcopy(goals), [])


def test_text_goals_need_the_judge() -> None:
    with pytest.raises(NotApplicable, match="judge"):
        _score(journey_success, RIGHT)


def test_journey_with_the_judge_checking_text_goals() -> None:
    with JudgeServer(lambda prompt, n: "true") as server:
        judge = Judge(JudgeConfig(server.url, "judge-model"))
        assert _score(journey_success, RIGHT, judge=judge) == 1.0
        assert _score(journey_completion, RIGHT, judge=judge) == 1.0
        # the second tool call has the wrong arguments: no success, 2 of 3 goals reached
        wrong = [RIGHT[0], ("get_timeoff_schedule_hr_agent", {"assignment_id": "9"})]
        assert _score(journey_success, wrong, judge=judge) == 0.0
        assert _score(journey_completion, wrong, judge=judge) == round(2 / 3, 2)
    with JudgeServer(lambda prompt, n: "false") as server:
        judge = Judge(JudgeConfig(server.url, "judge-model"))
        assert _score(journey_success, RIGHT, judge=judge) == 0.0


def test_journey_completion_without_text_goals_is_recall() -> None:
    data = {
        **DATA_SIMPLE,
        "goals": {"get_assignment_id_hr_agent": ["get_timeoff_schedule_hr_agent"]},
        "goal_details": DATA_SIMPLE["goal_details"][:2],
    }
    assert _score(journey_completion, [RIGHT[0]], data) == 0.5
    assert _score(journey_completion, RIGHT, data) == 1.0


def test_an_orchestrate_dataset_through_ci_eval_run(tmp_path: Path) -> None:
    """The story is played by a simulated user (a loopback LLM that ends at once)."""
    out = tmp_path / "r.json"
    with JudgeServer(scripted_user()) as llm:
        proc = _run_story(tmp_path, out, llm.url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [case] = json.loads(out.read_text())["sets"][0]["cases"]
    metrics = {m["name"]: (m["score"], m["status"]) for m in case["metrics"]}
    assert metrics["journey_success"] == (1.0, "PASSED")  # "paris" == str("Paris").lower()
    assert metrics["tool_call_precision"] == (1.0, "INFO")
    assert metrics["tool_call_recall"] == (1.0, "INFO")
    assert case["status"] == "PASSED"
    assert len(case["runs"][0]["invocations"]) == 1  # the agent answered at once; the user ENDed


def _run_story(tmp_path: Path, out: Path, llm_url: str) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "run",
        str(SAMPLES / "orchestrate/weather_paris.json"),
        "--agent",
        "command",
        "--agent-command",
        f"python {SAMPLES / 'agents/weather_agent/command_agent.py'}",
        "--results",
        str(out),
        "--simulator-url",
        llm_url,
        "--simulator-model",
        "loopback",
        cwd=tmp_path,
    )


def test_the_ignore_keyword_is_read_from_the_environment_when_scoring(monkeypatch) -> None:
    """IBM's RESERVED_KEYWORD_FOR_GROUND_TRUTH_ARGS, as the run's environment has it."""
    assert not arguments_match({"a": "<ANY>"}, {"a": "anything"}, {})
    monkeypatch.setenv("RESERVED_KEYWORD_FOR_GROUND_TRUTH_ARGS", "<ANY>")
    assert arguments_match({"a": "<ANY>"}, {"a": "anything"}, {})
