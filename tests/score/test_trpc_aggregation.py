"""A trpc-agent-go case over its repeated runs, as trpc-agent-go aggregates them:
trpc-group/trpc-agent-go at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1,
``evaluation/evaluation.go`` ``aggregateCaseRuns`` / ``summarizeAggregateCaseRunsStatus``
(lines 538-617), ``evaluation/internal/multirun/multirun.go`` ``buildMetricSummaries``,
``evaluation/service/aggregation.go`` (the default ``EvalCaseResultAggregator``) and
``evaluation/internal/status/status.go`` ``Summarize``.

The runs are handed to ``score_case`` already scored (a case rescored), so each test states the
runs' metric results and reads the case's aggregate."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.results import CaseMetric, MetricResult
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, RunRecord
from ci_eval.score.scorer import ScoreOptions, case_status, score_case

METRIC = "tool_trajectory_avg_score"  # a trpc metric whose score is its invocations' mean
P, F, NE = Status.PASSED, Status.FAILED, Status.NOT_EVALUATED


def _run(score: float | None, status: Status, turns: int = 1, threshold: float = 0.5) -> list:
    per = [] if score is None else [score] * turns
    return [MetricResult(METRIC, status, score, threshold, per)]


def _case(*runs: list[MetricResult], dialect: str = "trpc", min_pass: int | None = None):
    case = CaseRecord(
        "c", "s.json", 1, runs=[RunRecord(n, metrics=m) for n, m in enumerate(runs, 1)]
    )
    threshold = runs[0][0].threshold
    score_case(
        case, [MetricSpec(METRIC, threshold)], dialect, dialect, ScoreOptions(min_pass=min_pass)
    )
    return case


def _own(score: float, threshold: float = 0.5) -> Status:
    return P if score >= threshold else F


scores = st.floats(0, 1, allow_nan=False)
runs = st.lists(st.tuples(scores, st.integers(1, 6)), min_size=2, max_size=8)


@given(runs, scores)
def test_the_case_score_is_the_mean_of_the_runs_scores_and_passes_iff_it_reaches_the_threshold(
    drawn: list[tuple[float, int]], threshold: float
) -> None:
    """evaluation.go:573-577 (0e352fdd): average = sum of the runs' overall scores / count;
    PASSED iff average >= threshold — however many turns each run had."""
    case = _case(*(_run(s, _own(s, threshold), turns, threshold) for s, turns in drawn))
    mean = sum(s for s, _ in drawn) / len(drawn)
    metric = case.metrics[0]
    assert metric.score == mean
    assert metric.status == (P if mean >= threshold else F)


def test_a_run_with_more_turns_weighs_no_more_than_a_run_with_one() -> None:
    """evaluation.go:566,573 (0e352fdd) adds one overall score per run; ADK's rule (the dialect
    ci-eval scored every set by before) pools the invocations, here 0.75 and a pass."""
    one_turn, three_turns = _run(0.0, F, turns=1, threshold=0.6), _run(1.0, P, 3, 0.6)
    trpc = _case(one_turn, three_turns).metrics[0]
    adk = _case(one_turn, three_turns, dialect="adk").metrics[0]
    assert (trpc.score, trpc.status) == (0.5, F)
    assert (adk.score, adk.status) == (0.75, P)


@given(runs, st.lists(scores, min_size=1, max_size=4))
def test_a_run_whose_metric_was_not_evaluated_is_left_out_of_the_mean(
    drawn: list[tuple[float, int]], skipped: list[float]
) -> None:
    """evaluation.go:558-561 (0e352fdd): "Skip metrics that did not run to avoid diluting
    averaged scores" — a NOT_EVALUATED run counts for nothing, even one that holds a score."""
    evaluated = [_run(s, _own(s), turns) for s, turns in drawn]
    case = _case(*evaluated, *(_run(s, NE) for s in skipped))
    assert case.metrics[0].score == sum(s for s, _ in drawn) / len(drawn)


def test_a_metric_no_run_evaluated_is_not_evaluated() -> None:
    """multirun.go:305-313 (0e352fdd): evaluatedCount 0 leaves the metric NotEvaluated."""
    metric = _case(_run(0.9, NE), _run(None, NE)).metrics[0]
    assert (metric.status, metric.score) == (NE, None)


def test_over_several_runs_the_mean_decides_whatever_each_run_said() -> None:
    """evaluation.go:574-577 and 609 (0e352fdd): the runs' own statuses are not read; two runs
    an evaluator failed at 0.9 and 0.8 pass at threshold 0.5. (ci-eval's ADK rule reads their
    verdicts as "lower is better" and fails the case.)"""
    assert _case(_run(0.9, F), _run(0.8, F)).metrics[0].status == P
    assert _case(_run(0.9, F), _run(0.8, F), dialect="adk").metrics[0].status == F


def test_one_run_keeps_that_runs_own_verdict() -> None:
    """evaluation.go:599-607 (0e352fdd): with one run the case reads its FinalEvalStatus, the
    default aggregator's fold of the run's metric statuses (aggregation.go:52)."""
    assert _case(_run(0.9, F)).metrics[0].status == F
    assert _case(_run(0.1, P)).metrics[0].status == P


def test_min_pass_stays_ci_evals_k_of_n_with_trpcs_mean_as_the_score() -> None:
    """trpc-agent-go has no "K of N runs" rule (evaluation.go 0e352fdd); --min-pass asks for
    ci-eval's on purpose, so it decides; the score shown is still trpc's mean."""
    case = _case(_run(1.0, P, turns=3), _run(0.0, F), _run(0.0, F), min_pass=1)
    assert (case.metrics[0].status, case.metrics[0].score) == (P, 1 / 3)


def test_a_metric_error_stays_an_error() -> None:
    """trpc-agent-go fails the whole evaluation on an evaluator error (local.go:455-458,
    0e352fdd), so it has no per-run rule; ci-eval's ERROR dominates as for every dialect."""
    errored = [MetricResult(METRIC, Status.ERROR, None, 0.5, [], "boom")]
    assert _case(_run(1.0, P), errored).metrics[0].status == Status.ERROR


def _summarize(statuses: list[Status]) -> Status:
    """trpc-agent-go's status.go:37-51 (0e352fdd), the default aggregator's fold
    (aggregation.go:52): a Failed fails, else a Passed passes, else NotEvaluated."""
    if F in statuses:
        return F
    return P if P in statuses else NE


def _metrics(statuses: list[Status]) -> list[CaseMetric]:
    return [CaseMetric(f"m{i}", s, None, 0.5) for i, s in enumerate(statuses)]


@given(st.lists(st.sampled_from([P, F]), min_size=1, max_size=6))
def test_the_case_status_folds_passed_and_failed_metrics_as_trpcs_default_aggregator(
    statuses: list[Status],
) -> None:
    """aggregation.go:52-60 and status.go:37-51 (0e352fdd): any FAILED metric fails the case,
    else it passes — ci-eval's case_status is that fold for evaluated metrics."""
    assert case_status(_metrics(statuses), CaseRecord("c", "s.json", 1)) == _summarize(statuses)


def test_a_not_evaluated_metric_beside_passing_ones_is_not_a_silent_pass() -> None:
    """status.go:45-46 (0e352fdd) skips a NotEvaluated metric, so trpc-agent-go passes this case;
    ci-eval's gate leaves it NOT_EVALUATED on purpose (docs/gate.md "Never a silent pass"),
    as it does for ADK's same rule. The one deliberate difference; docs/metrics.md says so."""
    statuses = [P, NE]
    assert _summarize(statuses) == P
    assert case_status(_metrics(statuses), CaseRecord("c", "s.json", 1)) == NE
