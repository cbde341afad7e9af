"""A trpc-agent-go criterion that fails says which one and what differs — the field, what was
expected and what came — in the metric's reason, which every report shows beside the score
(terminal, JUnit, summary); the scores stay trpc's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.trpc import final_response_match, trajectory_match
from ci_eval.metrics.trpc_criteria import Mismatch, json_match, rouge_match, text_match
from ci_eval.model import Invocation
from tests.helpers import run_replay
from tests.judge_server import JudgeServer

# --- through the CLI -------------------------------------------------------------------------

EXPECTED_CALL = {
    "id": "t1",
    "name": "get_weather",
    "arguments": {"city": "Paris"},
    "result": {"temp": 20},
}


def _invocation(tools: list[dict[str, Any]], reply: str) -> dict[str, Any]:
    return {
        "invocationId": "i1",
        "userContent": {"role": "user", "content": "weather in Paris?"},
        "finalResponse": {"role": "assistant", "content": reply},
        "tools": tools,
    }


def _trpc_set(
    tmp_path: Path,
    actual_tools: list[dict[str, Any]],
    reply: str,
    metrics: list[dict[str, Any]] | None = None,
) -> Path:
    """A trpc-agent-go set of one case (its metrics file beside it) and a recording of the
    agent's answer, as trpc-agent-go writes its result files."""
    data = tmp_path / "data" / "app"
    data.mkdir(parents=True)
    case = {"evalId": "paris", "conversation": [_invocation([EXPECTED_CALL], "20 degrees")]}
    (data / "weather.evalset.json").write_text(
        json.dumps({"evalSetId": "weather", "evalCases": [case]})
    )
    metrics = metrics or [
        {"metricName": "tool_trajectory_avg_score", "threshold": 1, "criterion": {}},
        {
            "metricName": "final_response_avg_score",
            "threshold": 1,
            "criterion": {"finalResponse": {"text": {"matchStrategy": "contains"}}},
        },
    ]
    (data / "weather.metrics.json").write_text(json.dumps(metrics))
    output = tmp_path / "output" / "app"
    output.mkdir(parents=True)
    result = {
        "evalSetResultId": "app_weather_1",
        "evalSetId": "weather",
        "evalCaseResults": [
            {
                "evalSetId": "weather",
                "evalId": "paris",
                "evalMetricResultPerInvocation": [
                    {"actualInvocation": _invocation(actual_tools, reply)}
                ],
            }
        ],
    }
    (output / "app_weather_1.evalset_result.json").write_text(json.dumps(result))
    return tmp_path


NO_RESULT = (
    'turn 1, call 1 get_weather: result differs: expected {"temp": 20}, got nothing '
    "(the agent sent no tool result)"
)


def test_a_tool_result_the_agent_did_not_send_is_named_in_the_terminal(tmp_path: Path) -> None:
    call = {k: v for k, v in EXPECTED_CALL.items() if k != "result"}
    base = _trpc_set(tmp_path, [call], "It is 20 degrees.")
    proc = run_replay("data", replay="output", cwd=base)
    assert proc.returncode == 1
    assert f"tool_trajectory_avg_score 0 < 1 ({NO_RESULT})" in proc.stdout
    # the calls and replies read alike: the reason is the one place the cause is said
    assert "turn 1: expected" not in proc.stdout


def test_the_reason_is_in_the_junit_file_and_the_summary(tmp_path: Path) -> None:
    call = {k: v for k, v in EXPECTED_CALL.items() if k != "result"}
    base = _trpc_set(tmp_path, [call], "It is 20 degrees.")
    proc = run_replay(
        "data", "--junit", "j.xml", "--summary", "s.md", "--results", "r.json",
        replay="output", cwd=base,
    )  # fmt: skip
    assert proc.returncode == 1
    junit = (base / "j.xml").read_text()
    assert "result differs: expected {&quot;temp&quot;: 20}, got nothing" in junit
    assert "(the agent sent no tool result)" in junit
    assert (
        "result differs: expected {&quot;temp&quot;: 20}, got nothing"
        in (base / "s.md").read_text()
    )
    metric = json.loads((base / "r.json").read_text())["sets"][0]["cases"][0]["metrics"][0]
    assert metric["score"] == 0.0
    assert metric["reason"] == NO_RESULT


def test_an_argument_that_differs_is_named_with_its_key(tmp_path: Path) -> None:
    call = {**EXPECTED_CALL, "arguments": {"city": "Lyon"}}
    base = _trpc_set(tmp_path, [call], "It is 20 degrees.")
    proc = run_replay("data", replay="output", cwd=base)
    assert (
        "tool_trajectory_avg_score 0 < 1 (turn 1, call 1 get_weather: arguments.city differs: "
        'expected "Paris", got "Lyon")' in proc.stdout
    )


def test_a_final_response_text_criterion_names_its_rule(tmp_path: Path) -> None:
    base = _trpc_set(tmp_path, [EXPECTED_CALL], "It is sunny.")
    proc = run_replay("data", replay="output", cwd=base)
    assert (
        "final_response_avg_score 0 < 1 (turn 1: final response text differs: expected "
        '"20 degrees", got "It is sunny." (must contain the expected text))' in proc.stdout
    )
    assert "tool_trajectory_avg_score" not in proc.stdout.split("BLOCKING")[1]


def test_a_trpc_judge_s_low_verdict_is_said_with_its_reason(tmp_path: Path) -> None:
    judged = [{"metricName": "llm_final_response", "threshold": 1, "criterion": {"llmJudge": {}}}]
    base = _trpc_set(tmp_path, [EXPECTED_CALL], "It is sunny.", judged)
    answer = "reasoning: the reply gives no temperature\nis_the_agent_response_valid: invalid"
    with JudgeServer(lambda prompt, n: answer) as server:
        proc = run_replay("data", "--judge-url", server.url, "--judge-model", "m",
                          replay="output", cwd=base)  # fmt: skip
    assert (
        "llm_final_response 0 < 1 (turn 1: judged 0 (the reply gives no temperature))"
        in proc.stdout
    )


def test_trpc_agent_go_s_own_example_without_tool_results(corpus: Path, tmp_path: Path) -> None:
    example = corpus / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation/local"
    shutil.copytree(example, tmp_path, dirs_exist_ok=True)
    for file in (tmp_path / "output").rglob("*.evalset_result.json"):
        data = json.loads(file.read_text())
        for case in data["evalCaseResults"]:
            for turn in case["evalMetricResultPerInvocation"]:
                for tool in turn["actualInvocation"]["tools"]:
                    del tool["result"]
        file.write_text(json.dumps(data))
    proc = run_replay("data", replay="output", cwd=tmp_path)
    assert proc.returncode == 1
    assert (
        "calc_add: tool_trajectory_avg_score 0 < 1 (turn 1, call 1 calculator: result differs: "
        'expected {"a": 2, "b": 3, "operation": "add", "result": 5}, got nothing '
        "(the agent sent no tool result))" in proc.stdout
    )


def test_trpc_agent_go_s_length_bound_says_the_length(corpus: Path, tmp_path: Path) -> None:
    example = corpus / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation/caseaggregation"
    proc = run_replay(str(example / "data"), replay=str(example / "output"), cwd=tmp_path)
    assert "max_six_chars 0 < 1 (turn 1: final response text is too long: 137 characters" in (
        proc.stdout
    )


# --- each criterion's reason -----------------------------------------------------------------


def _tool(name: str, arguments: Any = None, result: Any = None) -> dict[str, Any]:
    return {"id": name, "name": name, "arguments": arguments, "result": result}


def _reason(crit: dict[str, Any], actual: list[dict], expected: list[dict]) -> str:
    with pytest.raises(Mismatch) as caught:
        trajectory_match(crit, actual, expected)
    return str(caught.value)


def test_tool_name() -> None:
    assert _reason({}, [_tool("get_time")], [_tool("get_weather")]) == (
        'call 1 get_weather: name differs: expected "get_weather", got "get_time" (exact match)'
    )


def test_tool_name_among_several_calls() -> None:
    assert _reason({}, [_tool("a"), _tool("b")], [_tool("a"), _tool("c")]) == (
        'call 2 c: name differs: expected "c", got only a, b'
    )


def test_tool_name_by_a_regex_strategy() -> None:
    crit = {"defaultStrategy": {"name": {"matchStrategy": "regex"}}}
    assert _reason(crit, [_tool("search")], [_tool("get_.*")]) == (
        'call 1 get_.*: name differs: expected "get_.*", got "search" '
        "(must match the expected RE2 pattern)"
    )


def test_tool_arguments_key_missing_and_extra() -> None:
    assert _reason({}, [_tool("f", {})], [_tool("f", {"city": "SH"})]) == (
        'call 1 f: arguments.city differs: expected "SH", got no such key'
    )
    assert _reason({}, [_tool("f", {"city": "SH", "x": 1})], [_tool("f", {"city": "SH"})]) == (
        "call 1 f: arguments.x differs: expected no such key, got 1"
    )


def test_tool_arguments_number_beyond_the_tolerance() -> None:
    assert _reason({}, [_tool("f", {"n": 1.5})], [_tool("f", {"n": 1})]) == (
        "call 1 f: arguments.n differs: expected 1, got 1.5"
    )
    crit = {"defaultStrategy": {"arguments": {"numberTolerance": 0.1}}}
    assert _reason(crit, [_tool("f", {"n": 1.5})], [_tool("f", {"n": 1})]) == (
        "call 1 f: arguments.n differs: expected 1, got 1.5 (tolerance 0.1)"
    )


def test_tool_arguments_array_item() -> None:
    assert _reason({}, [_tool("f", {"l": [1, 3]})], [_tool("f", {"l": [1, 2]})]) == (
        "call 1 f: arguments.l[1] differs: expected 2, got 3"
    )


def test_tool_result_the_agent_did_not_send() -> None:
    assert _reason({}, [_tool("f", result=None)], [_tool("f", result={"temp": 20})]) == (
        'call 1 f: result differs: expected {"temp": 20}, got nothing '
        "(the agent sent no tool result)"
    )


def test_tool_result_field() -> None:
    assert _reason({}, [_tool("f", result={"temp": 21})], [_tool("f", result={"temp": 20})]) == (
        "call 1 f: result.temp differs: expected 20, got 21"
    )


def test_generation_2_response_is_named_response() -> None:
    crit = {"orderInsensitive": False, "defaultStrategy": {"response": {}}}
    assert _reason(crit, [_tool("f", result=1)], [_tool("f", result=2)]) == (
        "call 1 f: response differs: expected 2, got 1"
    )


def test_number_of_calls() -> None:
    assert _reason({}, [_tool("a"), _tool("b")], [_tool("a")]) == (
        "number of tool calls differs: expected 1, got 2 (a, b)"
    )
    assert _reason({"subsetMatching": True}, [], [_tool("a")]) == (
        "number of tool calls differs: expected at least 1, got 0"
    )


def test_ordered_calls_name_the_call_compared() -> None:
    crit = {"orderSensitive": True}
    assert _reason(
        crit, [_tool("a", {"x": 2}), _tool("b")], [_tool("a", {"x": 1}), _tool("b")]
    ) == ("call 1 a: arguments.x differs: expected 1, got 2")


def test_unordered_compares_with_the_call_of_its_name() -> None:
    actual = [_tool("b"), _tool("a", {"x": 2})]
    assert _reason({}, actual, [_tool("a", {"x": 1}), _tool("b")]) == (
        "call 1 a: arguments.x differs: expected 1, got 2 (against the agent's call 2)"
    )


def test_unordered_a_call_taken_by_another_expected_call() -> None:
    assert _reason({}, [_tool("a"), _tool("b")], [_tool("a"), _tool("a")]) == (
        "call 2 a: the agent's calls that match it (1) are matched to other expected calls"
    )


def test_text_exact_case_insensitive() -> None:
    with pytest.raises(Mismatch) as caught:
        text_match("Rain", "sun", {"caseInsensitive": True}, "final response text")
    assert str(caught.value) == (
        'final response text differs: expected "sun", got "Rain" (exact match, case-insensitive)'
    )


def test_text_length_bounds() -> None:
    with pytest.raises(Mismatch, match=r"^text is too short: 2 characters, min 3 \(got \"ab\"\)"):
        text_match("ab", "", {"matchStrategy": "skip", "length": {"min": 3}})


def test_json_object_against_a_string() -> None:
    with pytest.raises(Mismatch) as caught:
        json_match("x", {"a": 1}, {}, "final response json")
    assert str(caught.value) == (
        'final response json differs: expected {"a": 1}, got "x" '
        "(one is an object, the other is not)"
    )


def test_json_only_tree_key_missing() -> None:
    with pytest.raises(Mismatch) as caught:
        json_match({}, {"a": 1}, {"onlyTree": {"a": True}}, "result")
    assert str(caught.value) == "result.a differs: expected 1, got no such key (onlyTree names it)"


def test_a_long_value_is_cut() -> None:
    with pytest.raises(Mismatch) as caught:
        json_match("x" * 500, "y", {}, "result")
    assert len(str(caught.value)) < 200
    assert "…" in str(caught.value)


def test_rouge_names_the_measure_below_its_threshold() -> None:
    pytest.importorskip("rouge_score")
    crit = {"rougeType": "rouge1", "threshold": {"f1": 0.9}}
    with pytest.raises(Mismatch) as caught:
        rouge_match("the cat sat", "a dog ran", crit, set(), "final response rouge")
    assert str(caught.value).startswith(
        "final response rouge (rouge1) below its threshold: f1 0.000 < 0.9 "
        '(precision 0.000, recall 0.000, f1 0.000; got "the cat sat")'
    )


def _reply(text: str | None) -> Invocation:
    reply = None if text is None else {"role": "model", "parts": [{"text": text}]}
    return Invocation.model_validate(
        {"user_content": {"role": "user", "parts": [{"text": "q"}]}, "final_response": reply}
    )


def test_a_final_response_the_agent_did_not_send() -> None:
    with pytest.raises(Mismatch) as caught:
        final_response_match({"text": {}}, _reply(None), _reply("20 degrees"), set())
    assert str(caught.value) == (
        'final response differs: expected "20 degrees", got nothing '
        "(the agent sent no final response)"
    )


def test_a_final_response_that_is_not_json() -> None:
    with pytest.raises(Mismatch) as caught:
        final_response_match({"json": {}}, _reply("sunny"), _reply('{"a": 1}'), set())
    assert str(caught.value) == (
        "final response json: the agent's final response is not JSON (Expecting value)"
    )


def test_every_failing_criterion_of_a_final_response_is_said() -> None:
    crit = {"json": {}, "text": {}}
    with pytest.raises(Mismatch) as caught:
        final_response_match(crit, _reply('{"a": 2}'), _reply('{"a": 1}'), set())
    assert str(caught.value) == (
        "final response json.a differs: expected 1, got 2; "
        'final response text differs: expected "{\\"a\\": 1}", got "{\\"a\\": 2}" (exact match)'
    )
