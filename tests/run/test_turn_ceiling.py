"""A simulated conversation has a ceiling of turns whatever its config says: ADK's
``max_allowed_invocations: -1`` with a simulator that never finishes made 532 LLM calls in
25 s and counting; it stops at 100 turns now, said in what the run records."""

from __future__ import annotations

from ci_eval.model import EvalCase
from ci_eval.simulate.adk_scenario import AdkScenarioUser
from ci_eval.simulate.base import HARD_MAX_TURNS, Status


class _Chatty:
    model = "m"

    def complete(self, messages: object) -> str:
        return "tell me more"  # never the stop signal


def test_a_conversation_without_a_limit_stops_at_the_ceiling() -> None:
    case = EvalCase.model_validate(
        {
            "eval_id": "c",
            "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "chat"},
        }
    )
    user = AdkScenarioUser(case, {"max_allowed_invocations": -1}, _Chatty(), None)  # type: ignore[arg-type]
    turns = 0
    while user.next_turn([]).status is Status.SUCCESS:
        turns += 1
        assert turns <= HARD_MAX_TURNS
    assert turns == HARD_MAX_TURNS == 100
    assert user.llm_calls == HARD_MAX_TURNS - 1  # the first turn is the starting prompt
    assert user.describe()["turn_limit"] == 100
