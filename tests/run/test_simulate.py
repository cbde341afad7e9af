"""Simulated users end to end: an ADK conversation_scenario case and an Orchestrate story
against the sample agent (which asks for the city before calling its tool), with a loopback
chat-completions server playing the user and the judge; without a simulator they are SKIPPED."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ci_eval import pipeline
from ci_eval.gate.decision import EXIT_OK
from ci_eval.report.markdown import render_summary
from ci_eval.results.file import read_results
from ci_eval.settings import RunSettings
from ci_eval.simulate import NO_SIMULATOR, adk_prompts
from ci_eval.simulate.orchestrate_story import END
from tests.conftest import SAMPLES
from tests.helpers import run_sample_agent
from tests.judge_server import JudgeServer
from tests.loopback_agent import LoopbackAgent
from tests.simulated_user import scripted_user

COMMAND = f"python {SAMPLES / 'agents/weather_agent/command_agent.py'}"
SCENARIOS = SAMPLES / "evals/scenarios"
STORY = SAMPLES / "orchestrate/weather_clarify.json"
WHICH_CITY = "Which city would you like the weather for?"


@pytest.fixture
def llm() -> Iterator[JudgeServer]:
    with JudgeServer(scripted_user()) as server:
        yield server


def _settings(tmp_path: Path, *paths: Path, llm: JudgeServer | None = None) -> RunSettings:
    settings = RunSettings(paths=[str(p) for p in paths], results=str(tmp_path / "r.json"))
    settings.agent.kind = "command"
    settings.agent.command = COMMAND
    settings.baseline = str(tmp_path / "no-baseline.json")
    if llm is not None:
        settings.judge.base_url, settings.judge.model = llm.url, "loopback"
    return settings


def _case(results_path: Path, eval_id: str) -> dict[str, Any]:
    data = json.loads(results_path.read_text())
    return next(c for s in data["sets"] for c in s["cases"] if c["eval_id"] == eval_id)


def _turns(case: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    [run] = case["runs"]
    out = []
    for inv in run["invocations"]:
        actual = inv["actual"]
        said = "".join(p.get("text", "") for p in actual["user_content"]["parts"])
        answer = "".join(p.get("text", "") for p in actual["final_response"]["parts"])
        calls = [c["name"] for c in actual["intermediate_data"].get("tool_uses", [])]
        out.append((said, answer, calls))
    return out


def test_an_adk_scenario_is_a_recorded_multi_turn_conversation(
    tmp_path: Path, llm: JudgeServer
) -> None:
    outcome = pipeline.run(_settings(tmp_path, SCENARIOS, llm=llm))
    assert outcome.exit_code == EXIT_OK
    case = _case(tmp_path / "r.json", "weather_without_a_city")
    assert _turns(case) == [
        ("What's the weather like?", WHICH_CITY, []),
        ("Paris, please.", "It is sunny in Paris, 22 degrees.", ["get_weather"]),
    ]
    [run] = case["runs"]
    assert run["simulation"]["ended"] == "stop_signal_detected"
    assert run["simulation"]["llm_calls"] == 2  # the starting prompt costs no call
    assert run["simulation"]["max_allowed_invocations"] == 6  # from user_simulator_config
    metrics = {m["name"]: (m["score"], m["status"]) for m in case["metrics"]}
    assert metrics["per_turn_user_simulator_quality_v1"] == (1.0, "PASSED")
    assert case["status"] == "PASSED"
    assert case["conversation_scenario"]["starting_prompt"] == "What's the weather like?"


def test_the_simulator_sees_the_conversation_so_far(tmp_path: Path, llm: JudgeServer) -> None:
    pipeline.run(_settings(tmp_path, SCENARIOS, llm=llm))
    simulator = [b for b in llm.bodies if "# Conversation" in b["messages"][-1]["content"]]
    simulator = [
        b for b in simulator if "Generated User Response" not in b["messages"][0]["content"]
    ]
    first, second = (b["messages"][0]["content"] for b in simulator)
    assert first.rstrip().endswith(
        "user: What's the weather like?\n\nweather_agent: " + WHICH_CITY
    ) or first.rstrip().endswith("user: What's the weather like?\n\nagent: " + WHICH_CITY)
    assert "Paris, please." in second and "It is sunny in Paris" in second
    assert all(b["model"] == "loopback" for b in llm.bodies)


def test_the_orchestrate_story_reaches_the_goal_in_two_turns(
    tmp_path: Path, llm: JudgeServer
) -> None:
    outcome = pipeline.run(_settings(tmp_path, STORY, llm=llm))
    assert outcome.exit_code == EXIT_OK
    [case] = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"]
    assert _turns(case) == [
        ("What's the weather like?", WHICH_CITY, []),
        ("Paris, please.", "It is sunny in Paris, 22 degrees.", ["get_weather"]),
    ]
    [run] = case["runs"]
    assert run["simulation"]["ended"] == "stop_signal_detected"
    assert run["simulation"]["last_message"] == END
    assert run["simulation"]["max_user_turns"] == 6
    metrics = {m["name"]: (m["score"], m["status"]) for m in case["metrics"]}
    assert metrics["journey_success"] == (1.0, "PASSED")
    assert metrics["tool_call_recall"] == (1.0, "INFO")
    assert metrics["tool_call_precision"] == (1.0, "INFO")


def test_a_story_that_never_ends_stops_at_the_turn_limit(tmp_path: Path) -> None:
    with JudgeServer(lambda prompt, n: "What's the weather like?") as server:
        outcome = pipeline.run(_settings(tmp_path, STORY, llm=server))
    [case] = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"]
    [run] = case["runs"]
    assert run["simulation"]["ended"] == "turn_limit_reached"
    assert len(run["invocations"]) == 6  # the dataset's max_user_turns
    assert outcome.exit_code == 1  # the agent never got a city: the journey failed


def test_without_a_simulator_scenario_cases_are_skipped_with_the_reason(tmp_path: Path) -> None:
    outcome = pipeline.run(_settings(tmp_path, SCENARIOS, STORY))
    assert outcome.exit_code == 1  # the gate: nothing was evaluated, which is no pass
    results = read_results(tmp_path / "r.json")
    skipped = [c for _, c in results.cases()]
    assert [c.status for c in skipped] == ["SKIPPED", "SKIPPED"]
    assert all(c.skipped == NO_SIMULATOR for c in skipped)
    assert "[simulator]" in NO_SIMULATOR


def test_replay_rescores_a_simulated_conversation_without_any_llm_or_agent(
    tmp_path: Path, llm: JudgeServer
) -> None:
    pipeline.run(_settings(tmp_path, STORY, llm=llm))
    calls = len(llm.bodies)
    settings = _settings(tmp_path, STORY)
    settings.results = str(tmp_path / "again.json")
    settings.agent.kind, settings.agent.replay = "replay", [str(tmp_path / "r.json")]
    outcome = pipeline.run(settings)
    assert outcome.exit_code == EXIT_OK and len(llm.bodies) == calls
    replayed = _case(tmp_path / "again.json", "weather_clarify")
    assert _turns(replayed) == _turns(_case(tmp_path / "r.json", "weather_clarify"))
    assert replayed["runs"][0]["simulation"]["kind"] == "replay"
    assert replayed["status"] == "PASSED"


def test_metrics_that_need_an_expected_conversation_are_not_evaluated(
    tmp_path: Path, llm: JudgeServer
) -> None:
    settings = _settings(tmp_path, SCENARIOS, llm=llm)
    settings.metric = ["response_match_score", "tool_trajectory_avg_score", "tool_call_count_v1"]
    outcome = pipeline.run(settings)
    case = _case(tmp_path / "r.json", "weather_without_a_city")
    metrics = {m["name"]: m for m in case["metrics"]}
    for name in ("response_match_score", "tool_trajectory_avg_score"):
        assert metrics[name]["status"] == "NOT_EVALUATED"
        assert "expected conversation" in metrics[name]["reason"]
    assert metrics["tool_call_count_v1"]["score"] == 0.5
    assert case["status"] == "NOT_EVALUATED" and outcome.exit_code == 1  # nothing evaluated


@pytest.mark.parametrize("kind", ["http", "command"])
def test_every_contract_connector_keeps_the_session_across_simulated_turns(
    tmp_path: Path, llm: JudgeServer, kind: str
) -> None:
    with LoopbackAgent() as agent:
        settings = _settings(tmp_path, SCENARIOS, STORY, llm=llm)
        if kind == "http":
            settings.agent.kind, settings.agent.url = "http", agent.url
        outcome = pipeline.run(settings)
    assert outcome.exit_code == EXIT_OK
    for eval_id in ("weather_without_a_city", "weather_clarify"):
        turns = _turns(_case(tmp_path / "r.json", eval_id))
        assert [t[2] for t in turns] == [[], ["get_weather"]]


@pytest.mark.parametrize("prompts", ["adk", "ci-eval"])
def test_a_judge_that_rejects_the_turns_fails_the_quality_metric(
    tmp_path: Path, prompts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same verdicts whichever instructions played the user (the judge is ADK's)."""
    monkeypatch.setenv("CI_EVAL_JUDGE_PROMPTS", prompts)
    with JudgeServer(scripted_user(verdict="false")) as server:
        outcome = pipeline.run(_settings(tmp_path, SCENARIOS, llm=server))
    case = _case(tmp_path / "r.json", "weather_without_a_city")
    summary = render_summary(read_results(tmp_path / "r.json"))
    # the details show the simulated conversation, turn by turn
    assert "user turns written by adk LlmBackedUserSimulator (loopback), 2 turns" in summary
    assert "**Turn 2:** Paris, please." in summary
    assert "Expected response" not in summary  # a simulated case has none
    [metric] = [m for m in case["metrics"] if m["name"] == "per_turn_user_simulator_quality_v1"]
    # turn 1 equals the starting prompt; turn 2 judged invalid; the stop verdict also invalid
    assert metric["score"] == 0.5 and metric["status"] == "FAILED"
    assert outcome.exit_code == 1


def test_the_cli_says_why_scenario_cases_were_skipped(tmp_path: Path) -> None:
    proc = run_sample_agent(str(SCENARIOS), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # nothing was evaluated: the gate does not pass
    assert "SKIPPED weather_without_a_city" in proc.stdout and "[simulator]" in proc.stdout


@pytest.mark.parametrize("prompts", ["adk", "ci-eval"])
def test_results_say_whose_prompts_were_used(
    tmp_path: Path, llm: JudgeServer, prompts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI_EVAL_JUDGE_PROMPTS", prompts)
    outcome = pipeline.run(_settings(tmp_path, SCENARIOS, llm=llm))
    expected = "ci-eval" if prompts == "ci-eval" else adk_prompts.source()
    data = json.loads((tmp_path / "r.json").read_text())
    # the judges: always ci-eval's copy of ADK's prompts and rules; the simulator: as set
    assert data["settings"]["adk_prompts"] == "ci-eval's copy of google-adk 2.13.0"
    case = _case(tmp_path / "r.json", "weather_without_a_city")
    assert case["runs"][0]["simulation"]["instructions"] == expected
    assert outcome.exit_code == EXIT_OK  # the same conversation and verdicts either way
    assert len(_turns(case)) == 2
    ours = "You play the user of an AI agent" in llm.bodies[0]["messages"][0]["content"]
    assert ours == (prompts == "ci-eval" or adk_prompts.adk_version() is None)


@pytest.mark.parametrize("kind", ["adk", "adk-http"])
def test_adk_connectors_play_the_simulated_conversations(
    tmp_path: Path, llm: JudgeServer, kind: str, request: pytest.FixtureRequest
) -> None:
    pytest.importorskip("google.adk")
    settings = _settings(tmp_path, SCENARIOS, STORY, llm=llm)
    settings.agent.kind = kind
    if kind == "adk":
        settings.agent.module = str(SAMPLES / "agents/weather_agent")
    else:
        settings.agent.url = request.getfixturevalue("adk_server")
        settings.agent.app_name = "weather_agent"
    outcome = pipeline.run(settings)
    assert outcome.exit_code == EXIT_OK
    for eval_id in ("weather_without_a_city", "weather_clarify"):
        case = _case(tmp_path / "r.json", eval_id)
        assert _turns(case) == [
            ("What's the weather like?", WHICH_CITY, []),
            ("Paris, please.", "It is sunny in Paris, 22 degrees.", ["get_weather"]),
        ]
        assert case["status"] == "PASSED"
    # ADK's agent events carry its name: the simulated user sees "weather_agent: …"
    simulator = [b["messages"][0]["content"] for b in llm.bodies]
    assert any("weather_agent: " + WHICH_CITY in p for p in simulator)


def _said(role: str, text: str) -> Any:
    from ci_eval.model import Content, Invocation

    content = Content.model_validate({"role": role, "parts": [{"text": text}]})
    return Invocation(user_content=content) if role == "user" else content


def test_a_replayed_conversation_keeps_what_its_recording_expected_of_each_turn() -> None:
    from ci_eval.simulate.conversation import replay_simulated

    turn = _said("user", "Plan my trip")
    turn.final_response = _said("model", "Where from?")
    reference = _said("user", "Plan my trip")
    reference.final_response = _said("model", "Which city are you leaving from?")

    expected = replay_simulated([turn], 1, None, [reference]).invocations[0].expected
    bare = replay_simulated([turn], 1).invocations[0].expected

    assert expected.final_response == reference.final_response  # trpc's expected runner's
    assert (bare.user_content, bare.final_response) == (turn.user_content, None)
