"""google-adk 2.13's ``LlmBackedUserSimulator``, over ci-eval's chat-completions client.

Semantics, from ``google/adk/evaluation/simulation/llm_backed_user_simulator.py``:

* ``max_allowed_invocations`` (``user_simulator_config``, default 20; -1 = no limit) bounds the
  calls to ``next_turn``; the fixed starting prompt counts as one. At the limit: TURN_LIMIT_REACHED.
* The first turn is the scenario's ``starting_prompt`` verbatim, with no LLM call.
* Later turns: the instructions (plan, the conversation summarised as ``author: text``, stop
  signal, persona, ``custom_instructions``) go to the LLM as one user message; an answer holding
  ``</finished>`` (any case) is STOP_SIGNAL_DETECTED, an empty one an error.
* Only turns actually sent are recorded as the actual conversation (not the stop message).
"""

from __future__ import annotations

from typing import Any

from ci_eval.model import EvalCase
from ci_eval.net.llm import ChatClient, LlmError
from ci_eval.simulate import adk_prompts
from ci_eval.simulate.base import Event, NextTurn, SimulatorError, Status, turn_limit

DEFAULT_MAX_INVOCATIONS = 20  # LlmBackedUserSimulatorConfig.max_allowed_invocations


def unavailable(case: EvalCase, extras: dict[str, Any]) -> str | None:
    config = extras.get("user_simulator_config") or {}
    kind = config.get("type")
    if kind not in (None, "llm_backed"):
        return f"user_simulator_config type {kind!r}: ci-eval simulates llm_backed users only"
    scenario = case.conversation_scenario
    if scenario is not None and scenario.user_persona is not None and not adk_prompts._adk():
        return "a user_persona needs google-adk's persona registry: pip install 'ci-eval[adk]'"
    return None


class AdkScenarioUser:
    def __init__(
        self,
        case: EvalCase,
        config: dict[str, Any],
        client: ChatClient,
        default_max: int | None,
    ) -> None:
        assert case.conversation_scenario is not None
        self.scenario = case.conversation_scenario.model_dump(mode="json", exclude_none=True)
        self.config = config
        self.client = client
        limit = config.get("max_allowed_invocations")
        self.max_invocations = int(
            limit if limit is not None else (default_max or DEFAULT_MAX_INVOCATIONS)
        )
        self.include_function_calls = bool(config.get("include_function_calls", False))
        self.custom_instructions = config.get("custom_instructions")
        self.invocations = 0
        self.llm_calls = 0

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "adk LlmBackedUserSimulator",
            "instructions": adk_prompts.source(),
            "model": self.client.model,
            "max_allowed_invocations": self.max_invocations,
            "turn_limit": turn_limit(self.max_invocations),
            "stop_signal": adk_prompts.stop_signal(),
            "custom_instructions": self.custom_instructions is not None,
            "include_function_calls": self.include_function_calls,
        }

    def next_turn(self, events: list[Event]) -> NextTurn:
        limit = turn_limit(self.max_invocations)
        if self.invocations >= limit:
            return NextTurn(Status.TURN_LIMIT_REACHED)
        if self.invocations == 0:
            response = self.scenario["starting_prompt"]
        else:
            prompt = adk_prompts.user_simulator_prompt(
                self.scenario["conversation_plan"],
                adk_prompts.summarize(events, self.include_function_calls),
                self.custom_instructions,
                self.scenario,
            )
            try:
                response = self.client.complete([{"role": "user", "content": prompt}])
            except LlmError as exc:
                raise SimulatorError(f"user simulator: {exc}") from None
            self.llm_calls += 1
        self.invocations += 1
        stop = adk_prompts.stop_signal()
        if response and stop.lower() in response.lower():
            return NextTurn(Status.STOP_SIGNAL_DETECTED, said=response)
        if response:
            return NextTurn(Status.SUCCESS, response)
        raise SimulatorError(
            "user simulator: Failed to generate a user message: LLM returned empty response"
        )
