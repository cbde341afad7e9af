"""How main's history is read, rule by rule: runs aligned from the latest, a metric's own
verdict over its score, a moved threshold re-reading the scores, runs grouped by push, recency
and a change of state cut at the likelihood-ratio bar."""

from __future__ import annotations

import math

import pytest

from ci_eval.gate import history
from ci_eval.gate.history import CHANGE_LR, Cluster


def test_a_metrics_own_verdicts_are_aligned_from_the_latest_run() -> None:
    # three scores, two verdicts: the verdicts are the two latest runs'; the first run is
    # judged by its score
    assert history.metric_fails([0.2, 0.9, 0.5], 0.6, [False, True]) == [True, False, True]


def test_a_score_at_the_threshold_passes_and_an_unscored_run_is_none() -> None:
    assert history.metric_fails([0.6, 0.59, None], 0.6) == [False, True, None]


def test_the_recorded_verdicts_hold_while_the_threshold_is_theirs() -> None:
    from ci_eval.model.baseline import StoredMetric

    entry = StoredMetric(scores=[0.2, 0.9], threshold=0.6, fails=[False, True])
    assert history.stored_fails(entry, 0.6) == [False, True]
    assert history.stored_fails(entry, 0.5) == [True, False]  # moved: the scores re-read


def test_a_run_fails_when_any_metric_fails_it_aligned_from_the_latest() -> None:
    per_metric = [[True, False], [None, False, True]]
    assert history.run_fails(per_metric) == [None, True, True]
    assert history.run_fails([]) == []


def test_runs_of_one_push_are_one_cluster_and_unscored_runs_are_left_out() -> None:
    fails = [True, False, None, False, True]
    assert history.clusters(fails, [7, 7, 8, 9, 9]) == [Cluster(7, 2, 1), Cluster(9, 2, 1)]


def test_runs_older_than_the_recorded_pushes_are_a_cluster_each() -> None:
    # four runs, the pushes of the latest two only; a push that is not a number is none
    assert history.clusters([True, True, False, False], [8, "x"]) == [
        Cluster(0, 1, 1),
        Cluster(0, 1, 1),
        Cluster(8, 1, 0),
        Cluster(0, 1, 0),
    ]


def _flip(failing: int, passing: int) -> list[Cluster]:
    """Pushes of one run each: ``failing`` failing, then ``passing`` passing."""
    return [Cluster(i + 1, 1, int(i < failing)) for i in range(failing + passing)]


def test_a_change_of_state_is_cut_only_past_the_likelihood_ratio_bar() -> None:
    # n failing then n passing: the split's statistic is 4 n ln 2, 13.9 at 5 and 16.6 at 6
    assert 4 * 5 * math.log(2) < CHANGE_LR < 4 * 6 * math.log(2)
    five = history.since_change(_flip(5, 5))
    assert (five.cut, five.since, five.runs) == (0, None, 10)
    six = history.since_change(_flip(6, 6))
    assert (six.cut, six.since, six.runs, six.failed) == (6, 7, 6, 0)


def _binomial_loglik(failed: int, runs: int) -> float:
    return sum(
        math.log(p) * k
        for p, k in ((failed / runs, failed), (1 - failed / runs, runs - failed))
        if k
    )


def _best_split(pushes: list[Cluster]) -> tuple[int, float]:
    """The split of the pushes into before and after with the largest likelihood ratio."""
    runs, failed = sum(c.runs for c in pushes), sum(c.failed for c in pushes)
    best = (0, 0.0)
    for at in range(1, len(pushes)):
        b_runs, b_failed = sum(c.runs for c in pushes[:at]), sum(c.failed for c in pushes[:at])
        lr = 2 * (
            _binomial_loglik(b_failed, b_runs)
            + _binomial_loglik(failed - b_failed, runs - b_runs)
            - _binomial_loglik(failed, runs)
        )
        best = max(best, (at, lr), key=lambda x: x[1])
    return best


@pytest.mark.parametrize("late", [8, 9, 11, 14])
def test_the_cut_is_at_the_split_of_the_largest_likelihood_ratio(late: int) -> None:
    # eight failing pushes, twelve passing, one of which fails too
    pushes = _flip(8, 12)
    pushes[late].failed = 1
    at, lr = _best_split(pushes)
    assert lr > CHANGE_LR
    kept = history.since_change(pushes)
    assert (kept.cut, kept.since) == (at, pushes[at].seq)


def test_a_change_of_state_just_below_the_bar_is_not_cut() -> None:
    # twelve failing then three passing: the split's statistic is 15.01, a tenth below the bar
    pushes = _flip(12, 3)
    statistic = _best_split(pushes)[1]
    assert statistic == pytest.approx(15.012, abs=1e-3) and statistic < CHANGE_LR
    assert history.since_change(pushes).cut == 0


def test_a_history_without_pushes_is_a_cluster_per_run() -> None:
    expected = [Cluster(0, 1, 1), Cluster(0, 1, 0)]
    assert history.clusters([True, False], None) == history.clusters([True, False], []) == expected


def test_a_single_runs_own_verdict_is_its_verdict_whatever_its_score() -> None:
    assert history.metric_fails([0.9], 0.8, own=[True]) == [True]
    assert history.metric_fails([0.1], 0.8, own=[False]) == [False]


def test_a_metrics_own_verdict_of_its_latest_run_only_is_that_runs() -> None:
    # two runs, a verdict of its own for the latest: the first is read from its score
    assert history.metric_fails([0.9, 0.9], 0.8, own=[True]) == [False, True]


def test_two_pushes_that_differ_past_the_bar_are_cut() -> None:
    pushes = [Cluster(1, 20, 20), Cluster(2, 20, 0)]
    found = history.since_change(pushes)
    assert (found.cut, found.since, found.runs, found.failed) == (1, 2, 20, 0)
