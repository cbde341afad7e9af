"""per_turn_user_simulator_quality_v1: ci-eval's own implementation (no google-adk) gives the
scores ADK's own evaluator gives, for any conversation and any judge verdicts."""

from __future__ import annotations

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
MARKERS = ("# Generated User Response", "# Latest user message")


class VerdictJudge:
    """Judges the user message under review by its words: BAD → invalid, ??? → no label."""

    def ask(self, prompt: str, sample: int = 0) -> str:
        reviewed = next(prompt.split(m, 1)[1] for m in MARKERS if m in prompt)
        reviewed = reviewed.split("Answer with JSON only")[0]
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


def _score(users: list[str], stop: str, prompts: str, monkeypatch: Any) -> Any:
    monkeypatch.setenv("CI_EVAL_JUDGE_PROMPTS", prompts)
    spec = MetricSpec(
        "per_turn_user_simulator_quality_v1",
        1.0,
        {"judge_model_options": {"num_samples": 1}, "stop_signal": stop},
    )
    ctx = ScoreContext(judge=VerdictJudge(), scenario=SCENARIO)
    actual = _conversation(users)
    score, per, _ = per_turn_user_simulator_quality(actual, actual, spec, ctx)
    return round(score, 9), per


turn = st.sampled_from(["Paris, please.", "BAD idea", "??? hmm", "Thanks!"])


@settings(max_examples=40, deadline=None)
@given(
    first=st.sampled_from([START, f"  {START} ", "Hi"]),
    rest=st.lists(turn, max_size=4),
    stop=st.sampled_from(["</finished>", "BAD stop", "??? stop"]),
)
def test_ci_eval_fallback_scores_as_adks_evaluator(
    first: str, rest: list[str], stop: str, monkeypatch_session: Any
) -> None:
    users = [first, *rest]
    assert _score(users, stop, "ci-eval", monkeypatch_session) == _score(
        users, stop, "adk", monkeypatch_session
    )


@pytest.fixture(scope="module")
def monkeypatch_session() -> Any:
    pytest.importorskip("google.adk")
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_the_first_turn_must_be_the_starting_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    score, per = _score(["Hi", "Paris, please."], "</finished>", "ci-eval", monkeypatch)
    assert per == [0.0, 1.0] and score == 0.5


def test_a_bad_stop_replaces_the_last_turns_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    score, per = _score([START, "Paris, please."], "BAD stop", "ci-eval", monkeypatch)
    assert per == [1.0, 0.0] and score == 0.5


def test_only_simulated_cases_have_a_scenario() -> None:
    spec = MetricSpec("per_turn_user_simulator_quality_v1")
    with pytest.raises(NotApplicable, match="conversation_scenario"):
        per_turn_user_simulator_quality([], _conversation([START]), spec, ScoreContext())
