"""A metric with its own pass rule — adk-rs fails a metric when any invocation fails, an ADK
custom metric gives its own status — is read by the gate and kept by the baseline as the metric
decided, not as its score against the threshold: a case such a metric fails on main is a known
failure, not "passed N of N on main"."""

from __future__ import annotations

from typing import Any

from ci_eval.gate import baseline as baseline_store
from ci_eval.gate.compare import Judgement, compare
from ci_eval.gate.items import outcomes
from ci_eval.metrics.base import CaseMetric
from ci_eval.model.baseline import StoredMetric
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.results.file import CaseRecord, RunResults, SetRecord

THRESHOLD = 0.8
# a two-turn case at [1.0, 0.714]: its mean 0.857 reaches 0.8, adk-rs fails it on the 0.714
MEAN = (1 + 5 / 7) / 2


def results(
    runs: list[tuple[float, bool]], started: str = "t", threshold: float = THRESHOLD
) -> RunResults:
    """Case ``c`` of set ``s``: per run, its score and whether the metric failed it."""
    scores = [score for score, _ in runs]
    failed = [fail for _, fail in runs]
    status = "FAILED" if any(failed) else "PASSED"
    own = [] if failed == [s < threshold for s in scores] else failed
    metric = CaseMetric(
        "m", status, sum(scores) / len(scores), threshold, runs=scores, run_fails=own
    )
    spec = MetricSpec("m", threshold)
    out = RunResults(
        [
            SetRecord(
                "s",
                "s.json",
                "adk-rs",
                MetricConfig([spec], "x", "adk-rs"),
                [CaseRecord("c", "s.json", 1, scored_status=status, metrics=[metric])],
                [spec],
            )
        ],
        "agent",
        started,
        0.0,
    )
    out.fail_on = ("regression", "error", "not-evaluated")
    return out


def history(runs: list[tuple[float, bool]], threshold: float = THRESHOLD) -> dict[str, Any]:
    data, _ = baseline_store.update(None, results(runs, threshold=threshold), commit="main1")
    return data


def judged(comparison: Any) -> Any:
    return next(j for j in comparison.cases if j.case_id == "c")


def test_the_baseline_keeps_the_metrics_own_verdicts_beside_its_scores() -> None:
    data = history([(MEAN, True)] * 3)
    entry = data.sets["s"].cases["c"].metrics["m"]
    assert entry == StoredMetric([MEAN] * 3, THRESHOLD, fails=[True] * 3)


def test_a_metric_whose_verdicts_are_its_scores_records_no_verdicts() -> None:
    data = history([(1.0, False), (0.5, True)])
    assert data.sets["s"].cases["c"].metrics["m"].fails is None
    assert "fails" not in baseline_store.to_data(data)["sets"]["s"]["cases"]["c"]["metrics"]["m"]


def test_a_case_its_metric_failed_on_main_every_time_is_a_known_failure() -> None:
    comparison = compare(results([(MEAN, True)] * 3), history([(MEAN, True)] * 10))
    case = judged(comparison)
    assert case.judgement is Judgement.KNOWN_FAILURE
    assert "passed 0 of 10 runs on main" in case.describe()


def test_a_case_that_passed_on_main_and_now_fails_by_its_own_rule_is_a_regression() -> None:
    comparison = compare(results([(MEAN, True)] * 3), history([(1.0, False)] * 20))
    assert judged(comparison).judgement is Judgement.REGRESSION


def test_a_verdict_below_the_threshold_that_passed_reads_as_passed() -> None:
    # a cost metric passing under its threshold, as an ADK custom metric may say
    comparison = compare(results([(0.1, True)] * 3), history([(0.1, False)] * 20))
    assert judged(comparison).judgement is Judgement.REGRESSION


def test_verdicts_given_under_another_threshold_are_re_read_from_the_scores() -> None:
    # main recorded the case failing at 0.9; today's threshold is 0.8, so its scores decide
    data = history([(0.85, True)] * 10, threshold=0.9)
    comparison = compare(results([(0.5, True)] * 3), data)
    assert "passed 10 of 10 runs on main" in judged(comparison).describe()


def test_runs_passed_counts_the_metrics_verdicts() -> None:
    [case] = results([(MEAN, True), (1.0, False), (MEAN, True)]).sets[0].cases
    assert outcomes(case) == [False, True, False]


def test_the_own_verdicts_carry_through_a_later_push_and_the_window() -> None:
    data = history([(MEAN, True)] * 2)
    data, _ = baseline_store.update(data, results([(1.0, False)] * 2, started="t2"), window=3)
    # the gate's window (the file keeps main's last 50 pushes whole, for `ci-eval history`)
    entry = baseline_store.gate_view(data).sets["s"].cases["c"].metrics["m"]
    assert entry.scores == [MEAN, 1.0, 1.0]
    assert entry.fails == [True, None, None]
