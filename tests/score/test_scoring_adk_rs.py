"""adk-rs's own numbers (skundu42/adk-rs src/eval/metrics.rs, runner.rs): final_response_match_v1
(whole-word recall), its trajectory fraction, its defaults, and its rule that a metric fails when
any invocation fails."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from ci_eval.metrics import REGISTRY, lookup
from ci_eval.metrics.adk import tool_trajectory
from ci_eval.metrics.adk_rs import final_response_match_v1, invocation_passes, unigram_recall
from ci_eval.metrics.base import Metric, ScoreContext
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricConfig, MetricSpec, default_config
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord, SetRecord
from ci_eval.score.scorer import ScoreOptions, metrics_for, score_case, score_run


@contextmanager
def _registered(name: str, metric: Metric) -> Iterator[None]:
    REGISTRY[name] = replace(metric, name=name)
    try:
        yield
    finally:
        del REGISTRY[name]


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


# --- adk-rs's rule: a metric fails when any invocation fails ---------------------------------

# two turns: the first answered word for word, the second with 5 of its 7 words (0.714)
_TWO_TURNS_EXPECTED = [
    _inv("It is sunny", []),
    _inv("Berlin is cloudy with light rain today", []),
]
_TWO_TURNS_ACTUAL = [
    _inv("It is sunny", []),
    _inv("Berlin is cloudy with light showers", []),
]


def _case(set_dialect: str, specs: list[MetricSpec]) -> CaseRecord:
    invocations = [
        InvocationRecord(expected=e, actual=a)
        for e, a in zip(_TWO_TURNS_EXPECTED, _TWO_TURNS_ACTUAL, strict=True)
    ]
    case = CaseRecord(eval_id="two_turns", runs=[RunRecord(run=1, invocations=invocations)])
    record = SetRecord("s", "s.json", set_dialect, MetricConfig(specs, "default", "default"))
    specs_, dialect = metrics_for(record, ScoreOptions())
    score_case(case, specs_, dialect, set_dialect, ScoreOptions())
    return case


def test_a_two_turn_case_at_1_and_0_714_fails_at_0_8_as_in_adk_rs() -> None:
    case = _case("adk-rs", [MetricSpec("final_response_match_v1", 0.8)])
    [metric] = [m for m in case.metrics if m.name == "final_response_match_v1"]
    assert case.runs[0].metrics[0].per_invocation == pytest.approx([1.0, 5 / 7])
    assert metric.score == pytest.approx((1 + 5 / 7) / 2)  # 0.857: the mean is reported ...
    assert metric.status == Status.FAILED  # ... but the 0.714 turn fails the metric
    assert case.scored_status == Status.FAILED


def test_the_same_scores_pass_where_the_mean_decides() -> None:
    """ADK's rule (mean ≥ threshold) for a metric without adk-rs's: a custom copy of the
    scorer registered without ``invocation_passes`` passes the same case."""
    mean_only = replace(REGISTRY["final_response_match_v1"], invocation_passes=None)
    with _registered("mean_only_recall", mean_only):
        case = _case("adk", [MetricSpec("mean_only_recall", 0.8)])
    [metric] = [m for m in case.metrics if m.name == "mean_only_recall"]
    assert metric.status == Status.PASSED


def test_every_turn_must_pass_across_runs_too() -> None:
    case = _case("adk-rs", [MetricSpec("final_response_match_v1", 0.7)])
    [metric] = [m for m in case.metrics if m.name == "final_response_match_v1"]
    assert metric.status == Status.PASSED  # 0.714 ≥ 0.7: every turn passes


def test_adk_rs_allows_1e_9_below_the_threshold() -> None:
    assert invocation_passes(0.8 - 1e-10, 0.8)
    assert not invocation_passes(0.8 - 1e-8, 0.8)


def test_an_adk_rs_set_scores_the_trajectory_with_adk_rs_rule_not_adks() -> None:
    """ADK's EXACT trajectory gives 0 for a partial match; adk-rs gives the fraction, and its
    any-invocation rule fails the case at the default threshold 1.0."""
    expected = [_inv("", [("a", {}), ("b", {})])]
    actual = [_inv("", [("a", {}), ("c", {})])]
    record = SetRecord(
        "s", "s.json", "adk-rs", MetricConfig(default_config("adk-rs").metrics, "default")
    )
    specs, dialect = metrics_for(record, ScoreOptions())
    assert dialect == "adk-rs"
    assert [(s.name, s.threshold) for s in specs[:2]] == [
        ("tool_trajectory_avg_score", 1.0),
        ("final_response_match_v1", 0.8),
    ]
    [trajectory] = score_run(specs[:1], dialect, expected, actual, ScoreContext())
    assert (trajectory.score, trajectory.status) == (0.5, Status.FAILED)
    assert lookup("tool_trajectory_avg_score", "adk-rs") is not lookup("tool_trajectory_avg_score")


def test_a_missing_final_response_reads_as_empty_as_in_adk_rs() -> None:
    no_answer = Invocation(user_content=Content(role="user", parts=[Part(text="q")]))
    score, per, _ = final_response_match_v1(
        [no_answer], [_inv("anything", [])], MetricSpec("m"), ScoreContext()
    )
    assert (score, per) == (1.0, [1.0])  # nothing expected → 1.0
    score, _, _ = final_response_match_v1(
        [_inv("sunny", [])], [no_answer], MetricSpec("m"), ScoreContext()
    )
    assert score == 0.0


def test_whole_tokens_only_cat_is_not_in_concatenate() -> None:
    assert unigram_recall("cat", "concatenate strings") == 0.0
