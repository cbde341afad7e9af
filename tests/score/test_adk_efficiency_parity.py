"""ADK's tool_call_count_v1 and invocation_duration_v1: ci-eval's values equal google-adk 2.13's
own evaluator classes on the same invocations (generated: any number of tool calls, timed and
untimed turns). token_usage_v1 and inference_call_count_v1: tests/score/test_usage_metrics.py."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.metrics import lookup
from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

CALL = st.fixed_dictionaries(
    {"name": st.sampled_from(["get_weather", "book", "search"]), "args": st.just({"q": 1})}
)
TURN = st.fixed_dictionaries(
    {
        "invocation_id": st.just("i"),
        "user_content": st.just({"role": "user", "parts": [{"text": "q"}]}),
        "intermediate_data": st.fixed_dictionaries({"tool_uses": st.lists(CALL, max_size=4)}),
    },
    optional={
        "duration": st.floats(min_value=0, max_value=120, allow_nan=False).map(
            lambda x: round(x, 6)
        )
    },
)


def _adk(metric: str, turns: list[dict[str, Any]]) -> tuple[float | None, list[float | None]]:
    adk = pytest.importorskip("google.adk.evaluation._efficiency_evaluators")
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation

    evaluator = {
        "tool_call_count_v1": adk._ToolCallCountV1Evaluator,
        "invocation_duration_v1": adk._InvocationDurationV1Evaluator,
    }[metric]()
    result = evaluator.evaluate_invocations([AdkInvocation.model_validate(t) for t in turns])
    return result.overall_score, [r.score for r in result.per_invocation_results]


def _ours(metric: str, turns: list[dict[str, Any]]) -> tuple[float | None, list[float | None]]:
    found = lookup(metric)
    assert found is not None
    try:
        score, per, _ = found.scorer(
            [], [Invocation.model_validate(t) for t in turns], MetricSpec(metric), ScoreContext()
        )
    except NotApplicable:  # no value: ADK's overall score is None
        return None, [None] * len(turns)
    return score, per


@settings(max_examples=150, deadline=None)
@given(turns=st.lists(TURN, min_size=1, max_size=5))
@pytest.mark.parametrize("metric", ["tool_call_count_v1", "invocation_duration_v1"])
def test_the_value_per_turn_and_overall_is_adks(metric: str, turns: list[dict[str, Any]]) -> None:
    assert _ours(metric, turns) == _adk(metric, turns)
