"""Scoring what a run recorded, as pure functions: which metrics apply, a metric per run,
the runs of a case aggregated, and the case's verdict."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ci_eval.metrics import INFORMATIONAL_DEFAULTS, REGISTRY, register
from ci_eval.metrics.base import CaseMetric, Metric, MetricFailure, ScoreContext
from ci_eval.model import Content, Invocation, Part
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord, RunResults, SetRecord
from ci_eval.score.scorer import (
    ScoreOptions,
    Scorer,
    case_status,
    metrics_for,
    score_case,
    score_run,
)
from ci_eval.settings.parse import parse_metric_option, parse_metric_table

# --- which metrics apply -------------------------------------------------------------------


def _set(specs: list[MetricSpec], source: str = "sidecar.json") -> SetRecord:
    return SetRecord("s", "s.json", "adk", MetricConfig(specs, source, "adk"))


def _names(specs: list[MetricSpec]) -> list[tuple[str, float | None]]:
    return [(s.name, s.threshold) for s in specs if s.name not in INFORMATIONAL_DEFAULTS]


def test_a_sets_own_metrics_win_over_the_repositorys() -> None:
    own = _set([MetricSpec("response_match_score", 0.7)])
    options = ScoreOptions(repo_defaults=[MetricSpec("tool_trajectory_avg_score", 1.0)])
    specs, dialect = metrics_for(own, options)
    assert _names(specs) == [("response_match_score", 0.7)] and dialect == "adk"


def test_the_repositorys_metrics_apply_where_a_set_has_none() -> None:
    default = _set([MetricSpec("response_match_score", 0.8)], source="default")
    options = ScoreOptions(repo_defaults=[MetricSpec("tool_trajectory_avg_score", 1.0)])
    assert _names(metrics_for(default, options)[0]) == [("tool_trajectory_avg_score", 1.0)]
    assert _names(metrics_for(default, ScoreOptions())[0]) == [("response_match_score", 0.8)]


def test_metric_options_replace_the_sets_keeping_a_named_metrics_criterion() -> None:
    own = _set([MetricSpec("tool_trajectory_avg_score", 1.0, {"match_type": "IN_ORDER"})])
    options = ScoreOptions(
        overrides=[MetricSpec("tool_trajectory_avg_score"), MetricSpec("response_match_score")]
    )
    specs, _ = metrics_for(own, options)
    assert _names(specs) == [("tool_trajectory_avg_score", 1.0), ("response_match_score", None)]
    assert specs[0].criterion == {"match_type": "IN_ORDER"}


def test_the_informational_metrics_are_always_added_once() -> None:
    """ADK's four efficiency metrics, in google-adk's order, after the set's own."""
    specs, _ = metrics_for(_set([MetricSpec("token_usage_v1")]), ScoreOptions())
    assert [s.name for s in specs] == [
        "token_usage_v1",
        "tool_call_count_v1",
        "inference_call_count_v1",
        "invocation_duration_v1",
    ]


# --- a metric per run ----------------------------------------------------------------------


@pytest.fixture
def scripted() -> Iterator[list[Any]]:
    """A metric ``scripted`` whose next scores (or exceptions) the test lists."""
    script: list[Any] = []

    def scorer(expected: Any, actual: Any, spec: Any, ctx: Any) -> Any:
        step = script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step, [step] * len(actual), {}

    register(Metric("scripted", "test metric", scorer, default_threshold=0.5))
    yield script
    del REGISTRY["scripted"]


def _inv(text: str) -> Invocation:
    return Invocation(
        invocation_id="i",
        user_content=Content(role="user", parts=[Part(text="q")]),
        final_response=Content(role="model", parts=[Part(text=text)]),
    )


def test_a_score_at_the_threshold_passes(scripted: list[Any]) -> None:
    scripted += [0.5, 0.49]
    spec = [MetricSpec("scripted")]  # the metric's default threshold, 0.5
    [passed] = score_run(spec, "adk", [_inv("a")], [_inv("a")], ScoreContext())
    [failed] = score_run(spec, "adk", [_inv("a")], [_inv("a")], ScoreContext())
    assert (passed.status, passed.threshold, failed.status) == ("PASSED", 0.5, "FAILED")


def test_a_metrics_failure_or_bug_is_that_metrics_error(scripted: list[Any]) -> None:
    scripted += [MetricFailure("judge: down"), KeyError("oops")]
    spec = [MetricSpec("scripted")]
    [failure] = score_run(spec, "adk", [_inv("a")], [_inv("a")], ScoreContext())
    [bug] = score_run(spec, "adk", [_inv("a")], [_inv("a")], ScoreContext())
    assert (failure.status, failure.reason) == ("ERROR", "judge: down")
    assert (bug.status, bug.reason) == ("ERROR", "KeyError: 'oops'")


def test_an_unknown_or_uncomputed_metric_is_not_evaluated_with_the_reason() -> None:
    specs = [MetricSpec("no_such"), MetricSpec("safety_v1")]
    unknown, uncomputed = score_run(specs, "adk", [], [], ScoreContext())
    assert unknown.status == uncomputed.status == "NOT_EVALUATED"
    assert unknown.reason == "unknown metric 'no_such' (see `ci-eval metrics`)"
    assert uncomputed.reason == (
        "ci-eval does not compute 'safety_v1' (a google-adk metric): it needs Vertex AI's "
        "evaluation service, which ci-eval does not call"
    )


def test_a_simulated_case_has_no_expected_conversation_to_compare() -> None:
    ctx = ScoreContext(scenario={"starting_prompt": "hi"})
    [result] = score_run([MetricSpec("response_match_score")], "adk", [], [_inv("a")], ctx)
    assert result.status == "NOT_EVALUATED" and "needs an expected conversation" in result.reason


# --- a case over its runs ------------------------------------------------------------------


def _case(runs: int) -> CaseRecord:
    record = [RunRecord(n, [InvocationRecord(_inv("a"), _inv("a"))]) for n in range(1, runs + 1)]
    return CaseRecord("c", "s.json", 1, runs=record)


def test_runs_aggregate_as_adk_does_the_mean_then_the_threshold(scripted: list[Any]) -> None:
    scripted += [1.0, 0.0, 0.6]
    case = _case(3)
    score_case(case, [MetricSpec("scripted", 0.5)], "adk", "adk", ScoreOptions())
    [metric] = case.metrics
    assert metric.score == pytest.approx(1.6 / 3) and metric.status == "PASSED"
    assert (metric.runs, metric.pass_rate, metric.flaky) == ([1.0, 0.0, 0.6], 2 / 3, True)
    assert case.scored_status == "PASSED" and case.flaky


def test_min_pass_asks_for_k_of_n_passing_runs(scripted: list[Any]) -> None:
    scripted += [1.0, 0.0, 0.6]
    case = _case(3)
    score_case(case, [MetricSpec("scripted", 0.5)], "adk", "adk", ScoreOptions(min_pass=3))
    assert case.metrics[0].status == "FAILED" and case.scored_status == "FAILED"


def test_one_erroring_run_makes_the_metric_an_error(scripted: list[Any]) -> None:
    scripted += [1.0, MetricFailure("judge: down")]
    case = _case(2)
    score_case(case, [MetricSpec("scripted", 0.5)], "adk", "adk", ScoreOptions())
    assert (case.metrics[0].status, case.metrics[0].reason) == ("ERROR", "judge: down")
    assert case.scored_status == "ERROR"


def test_a_run_the_agent_did_not_finish_is_not_scored(scripted: list[Any]) -> None:
    scripted += [1.0]
    case = _case(2)
    case.runs[1].error = "agent: HTTP 500"
    score_case(case, [MetricSpec("scripted", 0.5)], "adk", "adk", ScoreOptions())
    assert case.metrics[0].runs == [1.0]  # one scorer call: the other run is not scored
    assert case.scored_status == "ERROR"  # and the case says it could not be run


# --- cases scored as they are handed in, then the rest -------------------------------------


def test_the_scorer_scores_the_cases_handed_in_and_then_only_the_rest(
    scripted: list[Any],
) -> None:
    scripted += [1.0, 0.0]  # one score per case: a case scored twice would run out
    first, second = _case(1), _case(1)
    first.eval_id, second.eval_id = "first", "second"
    sets = [_set([MetricSpec("scripted", 0.5)])]
    sets[0].cases = [first, second]
    after: list[tuple[str, str | None]] = []
    scorer = Scorer(
        ScoreOptions(), then=lambda case: after.append((case.eval_id, case.scored_status))
    )
    scorer.case(sets[0], first)
    assert after == [("first", "PASSED")] and second.scored_status is None
    scorer.rest(RunResults(sets=sets, agent="a", started="t", duration_s=0.0))
    assert after == [("first", "PASSED"), ("second", "FAILED")]
    assert [m.name for m in sets[0].applied_metrics][:1] == ["scripted"]


# --- the case's verdict --------------------------------------------------------------------


def _metric(status: str, informational: bool = False, threshold: float | None = 1.0) -> Any:
    return CaseMetric("m", status, None, threshold, informational)


def _scored() -> CaseRecord:
    return CaseRecord("c", "s.json", 1, runs=[RunRecord(1)])


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["PASSED", "FAILED", "ERROR"], "ERROR"),
        (["PASSED", "FAILED"], "FAILED"),
        (["PASSED", "NOT_EVALUATED"], "NOT_EVALUATED"),
        (["PASSED", "INFO"], "PASSED"),
        (["INFO"], "NOT_EVALUATED"),
        ([], "NOT_EVALUATED"),
    ],
)
def test_the_verdict_is_the_and_of_the_metrics_with_error_first(
    statuses: list[str], expected: str
) -> None:
    assert case_status([_metric(s) for s in statuses], _scored()) == expected


def test_an_informational_metric_never_fails_a_case() -> None:
    assert case_status([_metric("PASSED"), _metric("FAILED", informational=True)], _scored()) == (
        "PASSED"
    )


def test_a_skipped_or_unfinished_case_says_so_whatever_its_metrics() -> None:
    skipped = CaseRecord("c", "s.json", 1, skipped="needs a simulator")
    unfinished = CaseRecord("c", "s.json", 1, runs=[RunRecord(1, error="agent: timeout")])
    assert case_status([_metric("PASSED")], skipped) == "SKIPPED"
    assert case_status([_metric("PASSED")], unfinished) == "ERROR"


# --- metric settings -----------------------------------------------------------------------


def test_metric_option_is_a_name_or_name_equals_threshold() -> None:
    assert parse_metric_option("response_match_score") == MetricSpec("response_match_score")
    assert parse_metric_option(" m = 0.25") == MetricSpec("m", 0.25)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("=1", "expected NAME or NAME=THRESHOLD"),
        ("m=high", "the threshold must be a number"),
        ("m=nan", "the threshold must be a finite number"),
        ("m=inf", "the threshold must be a finite number"),
    ],
)
def test_a_bad_metric_option_says_what_is_expected(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_metric_option(text)


def test_the_metrics_table_takes_thresholds_and_criteria() -> None:
    specs = parse_metric_table(
        {"a": 0.5, "b": 1, "c": {"threshold": 0.9, "matchType": "ANY_ORDER"}, "d": {}}
    )
    assert specs == [
        MetricSpec("a", 0.5),
        MetricSpec("b", 1.0),
        MetricSpec("c", 0.9, {"match_type": "ANY_ORDER"}),
        MetricSpec("d", None, {}),
    ]


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ({"a": "high"}, r"\[metrics\] a: expected a threshold or a table"),
        ({"a": True}, r"\[metrics\] a: expected a threshold or a table"),
        ({"a": {"threshold": "x"}}, r"\[metrics\] a: the threshold must be a finite number"),
        ({"a": float("nan")}, r"\[metrics\] a: expected a threshold or a table"),
    ],
)
def test_a_bad_metrics_table_names_the_metric(table: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_metric_table(table)
