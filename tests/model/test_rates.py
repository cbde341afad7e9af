"""Pass rates and their intervals (ci_eval.model.rates): Wilson's for a case, clustered by case
for a set, Newcombe's for a change against main — checked against scipy and by their bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from ci_eval.model.rates import (
    case_rate,
    clustered_rate,
    delta,
    design_effect,
    wilson,
)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_is_scipys_wilson_interval(kn: tuple[int, int]) -> None:
    k, n = kn
    ours = wilson(k, n)
    theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-9)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_an_interval_holds_its_rate_and_stays_within_0_and_1(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_all_passing_reaches_100_and_none_reaches_0() -> None:
    assert wilson(5, 5)[1] == 1.0 and wilson(0, 5)[0] == 0.0
    assert case_rate(3, 3).text() == "100% [44–100]"
    assert case_rate(0, 0).text() == "n/a"


def test_independent_cases_pool_their_runs_as_they_are() -> None:
    # every case passing 4 of 5: no more spread between cases than chance gives
    cases = [(4, 5)] * 8
    assert design_effect(cases) == 1.0
    assert (clustered_rate(cases).low, clustered_rate(cases).high) == wilson(32, 40)


def test_cases_that_always_or_never_pass_widen_a_sets_interval() -> None:
    # 3 cases of 3 runs: two always pass, one never — 9 runs are 3 cases' worth, not 9
    rate = clustered_rate([(3, 3), (3, 3), (0, 3)])
    assert design_effect([(3, 3), (3, 3), (0, 3)]) == pytest.approx(3.0)  # 3 cases' worth
    plain = wilson(6, 9)
    assert rate.low < plain[0] and rate.high > plain[1]
    assert rate.text() == "67% [21–94]"  # 2 of 3 cases' worth


def test_one_case_or_no_failure_cannot_show_clustering() -> None:
    assert design_effect([(1, 5)]) == 1.0
    assert design_effect([(5, 5), (3, 3)]) == 1.0


def test_a_change_against_main_has_newcombes_interval() -> None:
    # Newcombe (1998), example (a): 56/70 against 48/80: 0.2000, [0.0524, 0.3339]
    d = delta(case_rate(56, 70), case_rate(48, 80))
    assert d is not None
    assert (d.points, d.low, d.high) == pytest.approx((20.0, 5.24, 33.39), abs=0.01)
    assert d.text() == "▲20 pts [+5, +33]"


def test_no_change_reads_plus_minus_zero_with_its_interval() -> None:
    d = delta(case_rate(19, 20), case_rate(38, 40))
    assert d is not None and d.text().startswith("±0 [−")
    assert delta(case_rate(0, 0), case_rate(1, 2)) is None


@given(
    st.lists(
        st.integers(1, 6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
        min_size=1,
        max_size=30,
    ),
    st.lists(
        st.integers(1, 6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
        min_size=1,
        max_size=30,
    ),
)
def test_a_change_interval_holds_the_change_and_stays_within_100_points(
    now: list[tuple[int, int]], main: list[tuple[int, int]]
) -> None:
    a, b = clustered_rate(now), clustered_rate(main)
    d = delta(a, b)
    assert d is not None and -100 <= d.low <= d.points <= d.high <= 100
    assert math.isclose(d.points, 100 * ((a.value or 0) - (b.value or 0)))
