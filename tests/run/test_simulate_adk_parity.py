"""ADK parity: google-adk's own LlmBackedUserSimulator, pointed at the same loopback LLM through
LiteLLM (``openai/…`` with ``OPENAI_API_BASE``), and ci-eval's simulator are given the same
scenario and the same conversation: the prompts they send and the turns they produce agree."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ci_eval.model import ConversationScenario, EvalCase
from ci_eval.net.llm import ChatClient
from ci_eval.simulate.adk_scenario import AdkScenarioUser
from tests.judge_server import JudgeServer
from tests.simulated_user import scripted_user


@pytest.fixture(autouse=True, scope="module")
def _adk_installed() -> None:
    """google-adk, imported by the tests that use it rather than at collection (where every
    test process would pay for it)."""
    pytest.importorskip("google.adk")
    pytest.importorskip("litellm")


PLAN = "Ask for the weather. When asked which city, say Paris. Then end the conversation."
START = "What's the weather like?"
AGENT_TURNS = ["Which city would you like the weather for?", "It is sunny in Paris, 22 degrees."]


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    with JudgeServer(scripted_user()) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "loopback-key")
        monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        yield server


def _events(upto: int) -> list[dict[str, Any]]:
    """The conversation after ``upto`` agent replies, as ADK events."""
    events: list[dict[str, Any]] = []
    users = [START, "Paris, please."]
    for n in range(upto):
        events.append(
            {"author": "user", "content": {"role": "user", "parts": [{"text": users[n]}]}}
        )
        events.append(
            {
                "author": "weather_agent",
                "content": {"role": "model", "parts": [{"text": AGENT_TURNS[n]}]},
            }
        )
    return events


def _prompt_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, list):  # LiteLLM may send OpenAI content parts
        return "".join(p.get("text", "") for p in content)
    return content


def _adk_turns(llm: JudgeServer) -> tuple[list[tuple[str, str | None]], list[str]]:
    from google.adk.evaluation.conversation_scenarios import (
        ConversationScenario as AdkScenario,
    )
    from google.adk.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulator,
        LlmBackedUserSimulatorConfig,
    )
    from google.adk.events.event import Event

    simulator = LlmBackedUserSimulator(
        config=LlmBackedUserSimulatorConfig(model="openai/loopback", max_allowed_invocations=5),
        conversation_scenario=AdkScenario(starting_prompt=START, conversation_plan=PLAN),
    )
    before = len(llm.bodies)
    turns = []
    for n in range(3):
        events = [Event.model_validate(e) for e in _events(n)]
        nxt = asyncio.run(simulator.get_next_user_message(events))
        text = "".join(p.text or "" for p in nxt.user_message.parts) if nxt.user_message else None
        turns.append((nxt.status.value, text))
    return turns, [_prompt_text(b) for b in llm.bodies[before:]]


def _our_turns(llm: JudgeServer) -> tuple[list[tuple[str, str | None]], list[str]]:
    case = EvalCase(
        eval_id="c",
        conversation_scenario=ConversationScenario(starting_prompt=START, conversation_plan=PLAN),
    )
    user = AdkScenarioUser(
        case, {"max_allowed_invocations": 5}, ChatClient(llm.url, "loopback"), None
    )
    before = len(llm.bodies)
    turns = []
    for n in range(3):
        nxt = user.next_turn(_events(n))
        turns.append((nxt.status.value, nxt.text))
    return turns, [_prompt_text(b) for b in llm.bodies[before:]]


def test_adk_and_ci_eval_simulators_send_the_same_prompts_and_say_the_same(
    llm: JudgeServer,
) -> None:
    adk_turns, adk_prompts = _adk_turns(llm)
    our_turns, our_prompts = _our_turns(llm)
    assert adk_turns == [
        ("success", START),
        ("success", "Paris, please."),
        ("stop_signal_detected", None),
    ]
    assert our_turns == adk_turns
    assert len(our_prompts) == len(adk_prompts) == 2  # the starting prompt costs no call
    assert our_prompts == adk_prompts
    assert "weather_agent: Which city would you like the weather for?" in our_prompts[0]
