"""adk-rs's own numbers: final_response_match_v1 (word recall) and its trajectory rule."""

from __future__ import annotations

import pytest

from ci_eval.metrics.adk import tool_trajectory
from ci_eval.metrics.adk_rs import final_response_match_v1, unigram_recall
from ci_eval.metrics.base import ScoreContext
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec


@pytest.mark.parametrize(
    ("expected", "actual", "score"),
    [
        ("It is sunny in Paris", "it is SUNNY in paris today", 1.0),
        ("sunny in Paris", "rainy in Paris", 2 / 3),
        ("", "anything", 1.0),  # nothing expected
        ("Paris Paris", "Paris", 1.0),  # every expected occurrence found
    ],
)
def test_unigram_recall(expected: str, actual: str, score: float) -> None:
    assert unigram_recall(expected, actual) == pytest.approx(score)


def _inv(text: str, calls: list[tuple[str, dict]]) -> Invocation:
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="q")]),
        final_response=Content(role="model", parts=[Part(text=text)]),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=n, args=a) for n, a in calls]
        ),
    )


def test_final_response_match_v1_is_the_mean_over_invocations() -> None:
    expected = [_inv("a b", []), _inv("c d", [])]
    actual = [_inv("a b", []), _inv("c x", [])]
    score, per, _ = final_response_match_v1(expected, actual, MetricSpec("m"), ScoreContext())
    assert (score, per) == (0.75, [1.0, 0.5])


def test_adk_rs_trajectory_is_in_order_matches_over_the_longer_list() -> None:
    expected = [_inv("", [("a", {}), ("b", {"x": 1})])]
    actual = [_inv("", [("a", {}), ("c", {}), ("b", {"x": 1})])]
    score, _, _ = tool_trajectory(
        expected,
        actual,
        MetricSpec("tool_trajectory_avg_score", 1.0, {"match_type": "ADK_RS"}),
        ScoreContext(),
    )
    assert score == pytest.approx(1 / 3)  # position-wise: a==a, c!=b; over max(2, 3)
    empty, _, _ = tool_trajectory(
        [_inv("", [])],
        [_inv("", [])],
        MetricSpec("t", 1.0, {"match_type": "ADK_RS"}),
        ScoreContext(),
    )
    assert empty == 0.0  # 0 matches / max(0, 0, 1)
