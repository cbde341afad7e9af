"""per_turn_user_simulator_quality_v1: ci-eval gives the scores google-adk's own evaluator
gives, for any conversation and any judge verdicts, without google-adk."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.simulation import per_turn_user_simulator_quality
from ci_eval.model import Content, Invocation
from ci_eval.model.metric_spec import MetricSpec

START = "What's the weather like?"
SCENARIO = {"starting_prompt": START, "conversation_plan": "Ask for the weather in Paris."}


class VerdictJudge:
    """Judges the user message under review by its words: BAD → invalid, ??? → no label."""

    def ask(self, prompt: str, sample: int = 0) -> str:
        reviewed = prompt.rsplit("# Generated User Response", 1)[1]
        if "???" in reviewed:
            return "I cannot tell."
        label = "false" if "BAD" in reviewed else "true"
        return '{"criteria": [], "is_valid": ' + label + "}"


def _conversation(users: list[str]) -> list[Invocation]:
    return [
        Invocation(
            invocation_id=f"sim-{n}",
            user_content=Content.from_text(text, "user"),
            final_response=Content.from_text(f"answer {n}", "model"),
        )
        for n, text in enumerate(users)
    ]


def _spec(stop: str) -> MetricSpec:
    criterion = {"judge_model_options": {"num_samples": 1}, "stop_signal": stop}
    return MetricSpec("per_turn_user_simulator_quality_v1", 1.0, criterion)


def _score(users: list[str], stop: str = "</finished>") -> tuple[float, list[float | None]]:
    ctx = ScoreContext(judge=VerdictJudge(), scenario=SCENARIO)
    actual = _conversation(users)
    score, per, _ = per_turn_user_simulator_quality(actual, actual, _spec(stop), ctx)
    return score, per


class _AsAdkLlm:
    """The same verdicts, as the model ADK's evaluator calls."""

    async def generate_content_async(
        self, request: Any, stream: bool = False
    ) -> AsyncGenerator[Any, None]:
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        answer = VerdictJudge().ask(request.contents[0].parts[0].text)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=answer)]))


def _adk_score(users: list[str], stop: str) -> tuple[float | None, list[float | None]]:
    from google.adk.evaluation.conversation_scenarios import ConversationScenario
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric
    from google.adk.evaluation.simulation.per_turn_user_simulator_quality_v1 import (
        PerTurnUserSimulatorQualityV1,
    )

    spec = _spec(stop)
    evaluator = PerTurnUserSimulatorQualityV1(
        EvalMetric(
            metric_name=spec.name,
            threshold=1.0,
            criterion=BaseCriterion(threshold=1.0, **spec.criterion),
        )
    )
    evaluator._llm = _AsAdkLlm()
    actual = [
        AdkInvocation.model_validate(i.model_dump(mode="json", exclude_none=True))
        for i in _conversation(users)
    ]
    result = asyncio.run(
        evaluator.evaluate_invocations(actual, None, ConversationScenario.model_validate(SCENARIO))
    )
    return result.overall_score, [r.score for r in result.per_invocation_results]


@pytest.fixture(scope="module")
def _adk() -> None:
    pytest.importorskip("google.adk")


turn = st.sampled_from(["Paris, please.", "BAD idea", "??? hmm", "Thanks!"])


@pytest.mark.usefixtures("_adk")
@settings(max_examples=40, deadline=None)
@given(
    first=st.sampled_from([START, f"  {START} ", "Hi"]),
    rest=st.lists(turn, max_size=4),
    stop=st.sampled_from(["</finished>", "BAD stop", "??? stop"]),
)
def test_ci_eval_scores_as_adks_evaluator(first: str, rest: list[str], stop: str) -> None:
    users = [first, *rest]
    assert _score(users, stop) == _adk_score(users, stop)


def test_the_first_turn_must_be_the_starting_prompt() -> None:
    assert _score(["Hi", "Paris, please."]) == (0.5, [0.0, 1.0])


def test_a_bad_stop_replaces_the_last_turns_verdict() -> None:
    assert _score([START, "Paris, please."], "BAD stop") == (0.5, [1.0, 0.0])


def test_a_turn_without_a_verdict_counts_as_not_passed() -> None:
    assert _score([START, "??? hmm"]) == (0.5, [1.0, None])


def test_a_stop_without_a_verdict_replaces_nothing() -> None:
    assert _score([START], "??? stop") == (1.0, [1.0])


def test_only_simulated_cases_have_a_scenario() -> None:
    spec = MetricSpec("per_turn_user_simulator_quality_v1")
    with pytest.raises(NotApplicable, match="conversation_scenario"):
        per_turn_user_simulator_quality([], _conversation([START]), spec, ScoreContext())
