"""Correlated and moving noise, one rule per test: a job's runs are one cluster, main's pushes
swing together on a provider's bad day, a case's history starts at its last change of state,
recent pushes weigh more; and the statistics behind them."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.gate import baseline as baseline_store
from ci_eval.gate import stats
from ci_eval.gate.compare import Judgement, compare
from ci_eval.gate.history import HALF_LIFE, CaseHistory, Cluster, clusters, since_change
from ci_eval.gate.noise import measure
from tests.gate.test_gate import judged, results


def pushes(per_push: list[dict[str, list[float]]]) -> dict[str, Any]:
    """A baseline recorded push by push: each dict one job of main's."""
    data = None
    for i, cases in enumerate(per_push):
        data, _ = baseline_store.update(data, results(cases, started=f"t{i}"), commit=f"commit{i}")
    assert data is not None
    return data


# --- a case's history ------------------------------------------------------------------------


def test_a_jobs_runs_of_a_case_are_one_cluster_and_errored_runs_are_left_out() -> None:
    fails = [True, None, False, False, True, True]
    assert clusters(fails, [1, 1, 2, 2, 3, 3]) == [
        Cluster(1, 1, 1),
        Cluster(2, 2, 0),
        Cluster(3, 2, 2),
    ]


def test_a_case_fixed_on_main_is_judged_on_its_runs_since_the_fix() -> None:
    history = [Cluster(s, 3, 3) for s in range(1, 5)] + [Cluster(5, 3, 0), Cluster(6, 3, 0)]
    since = since_change(history)
    assert (since.runs, since.failed, since.since, since.cut) == (6, 0, 5, 4)


def test_a_flaky_case_is_never_cut() -> None:
    pattern = [1, 0, 2, 1, 0, 1, 2, 0, 1]
    history = [Cluster(s + 1, 3, f) for s, f in enumerate(pattern)]
    assert since_change(history).cut == 0


def test_recent_pushes_weigh_more_half_at_the_half_life() -> None:
    weights = CaseHistory([Cluster(s, 1, 0) for s in range(1, 10)]).weights()
    assert weights[-1] == 1.0
    assert weights[-1 - int(HALF_LIFE)] == pytest.approx(0.5)
    assert weights[0] == pytest.approx(0.25)  # eight pushes old: two half-lives
    assert weights[-3] == pytest.approx(0.5**0.5)


# --- main's noise ----------------------------------------------------------------------------


def _histories(per_case: list[list[tuple[int, int]]]) -> list[CaseHistory]:
    return [
        CaseHistory([Cluster(s + 1, n, f) for s, (n, f) in enumerate(case)]) for case in per_case
    ]


def test_a_steady_main_has_no_swings_and_independent_runs() -> None:
    cases = [[(3, (i + s) % 2) for s in range(7)] for i in range(30)]
    noise = measure(_histories(cases))
    assert not noise.swings and noise.rho == 0.0


def test_bad_days_on_main_are_days_the_pr_may_be_having() -> None:
    bad = {2, 5}
    cases = [[(3, 2 if s in bad else (i + s) % 2) for s in range(7)] for i in range(30)]
    noise = measure(_histories(cases))
    assert noise.swings and noise.dispersion > 3
    shifts = sorted(d for _, d in noise.days)
    assert shifts[-1] > 0.2 and shifts[-2] > 0.2 and shifts[0] < 0
    assert sum(w for w, _ in noise.days) == pytest.approx(1.0)


def test_runs_of_a_job_failing_together_show_as_within_job_correlation() -> None:
    # each case: one push of the seven where all three runs fail, never otherwise
    cases = [[(3, 3 if s == i % 7 else 0) for s in range(7)] for i in range(30)]
    noise = measure(_histories(cases))
    assert noise.rho > 0.5


# --- the gate on moving noise ------------------------------------------------------------------


def test_a_case_fixed_on_main_and_broken_again_is_a_regression_not_a_known_failure() -> None:
    main = [{"c": [0.0] * 3, "d": [1.0] * 3} for _ in range(4)]
    main += [{"c": [1.0] * 3, "d": [1.0] * 3} for _ in range(2)]
    comparison = compare(results({"c": [0.0] * 5, "d": [1.0] * 5}), pushes(main))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.REGRESSION
    assert "since it changed on main (passing since commit4)" in case.describe()
    assert (case.history_runs, case.history_failed) == (6, 0)


def test_one_bad_job_is_not_a_break_where_mains_jobs_fail_together() -> None:
    main = []
    for s in range(7):
        main.append({f"c{i}": [0.0] * 3 if s == i % 7 else [1.0] * 3 for i in range(30)})
    now = {f"c{i}": [1.0] * 5 for i in range(30)}
    now["c6"] = [0.0] * 5  # c6 failed no job of the last seven on main... but its kind do
    comparison = compare(results(now), pushes(main))
    assert comparison.rho > 0.5
    assert judged(comparison, "c6").judgement is not Judgement.REGRESSION


def test_a_broad_drop_within_mains_own_swings_is_not_blamed_on_the_pr() -> None:
    bad = {1, 4}
    main = [
        {f"c{i}": [0.0 if (s in bad and (i + r) % 3 == 0) else 1.0 for r in range(3)]
         for i in range(30)}
        for s in range(7)
    ]  # fmt: skip
    now = {f"c{i}": [0.0 if (i + r) % 3 == 0 else 1.0 for r in range(3)] for i in range(30)}
    comparison = compare(results(now), pushes(main))
    assert comparison.suite is not None and comparison.suite.swings
    assert not comparison.suite.regressed
    assert "allowing for its day-to-day swings" in comparison.suite.describe()


def test_the_same_drop_without_swings_on_main_is_blamed_on_the_pr() -> None:
    main = [{f"c{i}": [1.0, 1.0, 1.0] for i in range(30)} for _ in range(7)]
    now = {f"c{i}": [0.0 if (i + r) % 3 == 0 else 1.0 for r in range(3)] for i in range(30)}
    comparison = compare(results(now), pushes(main))
    assert comparison.suite is not None and not comparison.suite.swings
    assert comparison.suite_regressed or comparison.regressed_cases()


# --- the statistics ----------------------------------------------------------------------------


def test_with_independent_runs_the_predictive_is_jeffreys() -> None:
    mean, concentration = stats.predictive(3, 17, rho=0.0)
    assert mean == pytest.approx(3.5 / 21) and concentration == pytest.approx(21)


def test_correlated_runs_make_a_job_of_failures_likelier() -> None:
    independent = stats.mixture_tail(5, 5, *stats.predictive(0, 20, 0.0), [(1.0, 0.0)])
    clustered = stats.mixture_tail(5, 5, *stats.predictive(0, 20, 0.3), [(1.0, 0.0)])
    assert clustered > 100 * independent


@given(
    st.integers(1, 5),
    st.integers(0, 6),
    st.floats(0.05, 20),
    st.floats(0.05, 20),
)
def test_the_failures_of_a_case_with_reruns_are_a_distribution(
    n: int, reruns: int, a: float, b: float
) -> None:
    dist = stats.rerun_dist(n, reruns, a, b)
    assert len(dist) == n + reruns + 1
    assert math.isclose(sum(dist), 1.0, abs_tol=1e-9)
    assert all(p >= -1e-12 for p in dist)
    if reruns == 0:
        assert dist == pytest.approx(stats.betabinom_dist(n, a, b))


def test_failures_weigh_more_in_cases_that_rarely_fail() -> None:
    assert stats.weight(0.02) > stats.weight(0.1) > stats.weight(0.4) == 1


@given(st.lists(st.tuples(st.integers(1, 3), st.floats(0.01, 0.99)), min_size=1, max_size=8))
def test_the_suite_wide_tail_is_a_probability_that_falls_as_failures_rise(
    cases: list[tuple[int, float]],
) -> None:
    spec = [(n, 0, m, 10.0) for n, m in cases]
    low, _ = stats.mixture_sum_tail([0] * len(cases), spec, [(1.0, 0.0)])
    high, _ = stats.mixture_sum_tail([n for n, _ in cases], spec, [(1.0, 0.0)])
    assert low == pytest.approx(1.0) and 0 < high <= low
