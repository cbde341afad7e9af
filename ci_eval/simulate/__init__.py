"""Simulated users: an LLM plays the user of eval cases that script no user turns.

Two kinds, chosen by the eval set's dialect:

* Google ADK ``conversation_scenario`` cases: google-adk 2.13's ``LlmBackedUserSimulator``
  (``adk_scenario.py``): the starting prompt first, then an LLM told the plan and the
  conversation so far, until it says ``</finished>`` or ``max_allowed_invocations`` is reached.
* IBM watsonx Orchestrate datasets: a user agent that plays the ``story``
  (``orchestrate_story.py``), opens with ``starting_sentence``, stops when it says it is done
  or at the turn limit.

``conversation.py`` runs the loop against any connector: ask the simulator, send the turn,
record it, repeat, in one agent session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ci_eval.errors import InputError
from ci_eval.model import EvalCase
from ci_eval.settings import JudgeConfig, SimulatorConfig, api_key
from ci_eval.simulate.base import Event, NextTurn, SimulatorError, Status, UserSimulator

if TYPE_CHECKING:
    from ci_eval.net.llm import ChatClient

NEEDS_SIMULATOR = "needs a user simulator"
# how to give one: said once per run in the terminal, in full in JUnit and the results file
SIMULATOR_HOW = (
    "set [simulator] base_url and model (or [judge]) in ci-eval.toml, "
    "or --simulator-url and --simulator-model (an OpenAI-compatible endpoint)"
)
NO_SIMULATOR = f"{NEEDS_SIMULATOR}: {SIMULATOR_HOW}"


def scenario_of(case: EvalCase, dialect: str) -> dict[str, Any] | None:
    """The simulated user's brief when the case's user turns are simulated, else None.

    ADK ``conversation_scenario`` cases, and every watsonx Orchestrate dataset: Orchestrate
    always drives the agent with a user agent playing the ``story`` (its ``starting_sentence``
    is only the first turn), so replaying the first sentence alone would be a guess.
    """
    if case.conversation_scenario is not None:
        return case.conversation_scenario.model_dump(mode="json", exclude_none=True)
    data = case.extensions.get("watsonx")
    if dialect == "watsonx" and isinstance(data, dict) and data.get("story"):
        return {
            "starting_prompt": data.get("starting_sentence") or "",
            "conversation_plan": data["story"],
        }
    return None


@dataclass
class SimulatorFactory:
    """Makes a simulated user per (case, run) from the [simulator] settings."""

    config: SimulatorConfig
    client: ChatClient
    _makers: dict[str, Callable[..., UserSimulator]] = field(default_factory=dict)

    def unavailable(self, case: EvalCase, dialect: str, extras: dict[str, Any]) -> str | None:
        """Why this case cannot be simulated here (None when it can)."""
        if dialect == "watsonx":
            return None
        from ci_eval.simulate import adk_scenario

        return adk_scenario.unavailable(case, extras)

    def make(self, case: EvalCase, dialect: str, extras: dict[str, Any]) -> UserSimulator:
        if dialect == "watsonx":
            from ci_eval.simulate.orchestrate_story import StoryUser

            return StoryUser(case, self.client, self.config.max_turns)
        from ci_eval.simulate.adk_scenario import AdkScenarioUser

        return AdkScenarioUser(
            case, extras.get("user_simulator_config") or {}, self.client, self.config.max_turns
        )


def build_simulator(
    config: SimulatorConfig, judge: JudgeConfig, env: Mapping[str, str] | None = None
) -> SimulatorFactory | None:
    """The simulator the settings describe, or None when no endpoint is configured; its key
    is read from ``env`` (default: the process's environment)."""
    env = os.environ if env is None else env
    resolved = config.resolved(judge)
    if not resolved.base_url and not resolved.model:
        return None
    if not resolved.base_url or not resolved.model:
        raise InputError("the user simulator needs both a base URL and a model ([simulator])")
    if resolved.max_turns is not None and resolved.max_turns < 1:
        raise InputError("[simulator] max_turns must be at least 1")
    key = api_key(env, resolved.api_key_env, "the simulator's")
    from ci_eval.net.llm import ChatClient

    client = ChatClient(
        resolved.base_url,
        resolved.model,
        key,
        resolved.timeout or 60.0,
        3 if resolved.retries is None else resolved.retries,
        resolved.temperature or 0.0,
    )
    return SimulatorFactory(resolved, client)


__all__ = [
    "NEEDS_SIMULATOR",
    "NO_SIMULATOR",
    "SIMULATOR_HOW",
    "Event",
    "NextTurn",
    "SimulatorError",
    "SimulatorFactory",
    "Status",
    "UserSimulator",
    "build_simulator",
    "scenario_of",
]
