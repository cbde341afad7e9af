"""The gate's statistics number for number beyond the beta-binomial itself (tests/gate/test_gate.py
checks that against scipy): the failure weights, the hypergeometric split, the predictive's
concentration, main's days mixed, the confirmation reruns' urn and the suite-wide sum, each
against scipy or an enumeration written here."""

from __future__ import annotations

import itertools
import math

import pytest
from scipy.stats import betabinom, hypergeom

from ci_eval.gate import stats


def _llr_weight(mean: float) -> int:
    """A failure's log-likelihood ratio under a 10-point drop, in steps of ½, from 1 to 4."""
    m = min(max(mean, 1e-9), 1 - 1e-9)
    shifted = min(m + 0.1, 1 - 1e-9)
    ratio = math.log(shifted / m) + math.log((1 - m) / (1 - shifted))
    return max(1, min(4, math.floor(2 * ratio + 0.5)))


def test_a_failure_weighs_4_at_2_percent_2_at_10_and_1_from_30() -> None:
    assert (stats.weight(0.02), stats.weight(0.1), stats.weight(0.3)) == (4, 2, 1)


@pytest.mark.parametrize(
    "mean", [0.0, 1e-6, 0.01, 0.03, 0.045, 0.05, 0.07, 0.2, 0.5, 0.9, 0.95, 1.0]
)
def test_a_failures_weight_is_its_log_likelihood_ratio_in_halves(mean: float) -> None:
    assert stats.weight(mean) == _llr_weight(mean)


@pytest.mark.parametrize(
    ("total", "failed", "drawn"), [(10, 3, 4), (8, 8, 3), (12, 0, 5), (9, 5, 9)]
)
def test_the_split_of_a_cases_runs_is_hypergeometric(total: int, failed: int, drawn: int) -> None:
    expected = [hypergeom.pmf(k, total, failed, drawn) for k in range(drawn + 1)]
    assert stats.hypergeom_dist(total, failed, drawn) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("failed", "passed"), [(0.0, 20.0), (3.0, 17.0), (2.5, 7.25)])
@pytest.mark.parametrize("prior", [(0.5, 0.5), (0.25, 0.4)])
def test_the_predictive_is_the_posterior_mean_and_two_runs_correlate_by_rho_and_the_rate(
    failed: float, passed: float, prior: tuple[float, float]
) -> None:
    a, b = failed + prior[0], passed + prior[1]
    mean, concentration = stats.predictive(failed, passed, 0.0, prior)
    assert (mean, concentration) == pytest.approx((a / (a + b), a + b), rel=1e-12)
    for rho in (0.1, 0.6):
        mean, concentration = stats.predictive(failed, passed, rho, prior)
        # a beta-binomial's two draws correlate by 1 / (concentration + 1)
        assert 1 / (concentration + 1) == pytest.approx(rho + (1 - rho) / (a + b + 1))


def test_main_s_days_mix_the_beta_binomial_tails_by_weight() -> None:
    days = [(0.5, 0.0), (0.3, 0.2), (0.2, -0.5)]  # the last pushes the chance below 0
    mean, concentration = 0.3, 8.0
    expected = 0.0
    for weight, shift in days:
        m = min(max(mean + shift, 1e-9), 1 - 1e-9)
        expected += weight * betabinom.sf(2, 5, m * concentration, (1 - m) * concentration)
    assert stats.mixture_tail(3, 5, mean, concentration, days) == pytest.approx(expected, rel=1e-9)
    assert stats.mixture_tail(0, 5, mean, concentration, days) == 1.0


def _urn(n: int, reruns: int, a: float, b: float) -> list[float]:
    """Failed runs of n, then up to ``reruns`` more while every run so far failed, by walking
    the Pólya urn's sequences: the next run fails with (a + failures) / (a + b + runs)."""
    out = [0.0] * (n + reruns + 1)

    def walk(runs: int, fails: int, p: float) -> None:
        if runs >= n and (fails < runs or runs == n + reruns):
            out[fails] += p
            return
        chance = (a + fails) / (a + b + runs)
        walk(runs + 1, fails + 1, p * chance)
        walk(runs + 1, fails, p * (1 - chance))

    walk(0, 0, 1.0)
    return out


@pytest.mark.parametrize(("n", "reruns"), [(1, 0), (3, 0), (1, 3), (3, 2), (4, 4)])
def test_confirmation_reruns_follow_the_urn(n: int, reruns: int) -> None:
    assert stats.rerun_dist(n, reruns, 1.5, 4.0) == pytest.approx(
        _urn(n, reruns, 1.5, 4.0), abs=1e-12
    )


def _enumerated_sum_tail(
    observed: list[int], cases: list[tuple[int, int, float, float]], days: list[tuple[float, float]]
) -> tuple[float, float]:
    weights = [_llr_weight(m) for _, _, m, _ in cases]
    s = sum(w * k for w, k in zip(weights, observed, strict=True))
    tail = expected = 0.0
    for day, shift in days:
        dists = []
        for n, r, m, c in cases:
            m = min(max(m + shift, 1e-9), 1 - 1e-9)
            dists.append(_urn(n, r, m * c, (1 - m) * c))
        for ks in itertools.product(*(range(len(d)) for d in dists)):
            p = math.prod(d[k] for d, k in zip(dists, ks, strict=True))
            expected += day * p * sum(ks)
            if sum(w * k for w, k in zip(weights, ks, strict=True)) >= s:
                tail += day * p
    return tail, expected


def test_the_suite_wide_tail_is_the_weighted_sum_over_every_outcome() -> None:
    cases = [(2, 1, 0.02, 20.0), (3, 0, 0.1, 10.0), (2, 2, 0.4, 5.0)]
    days = [(0.6, 0.0), (0.4, 0.05)]
    for observed in ([0, 0, 0], [1, 0, 0], [0, 2, 1], [3, 3, 4]):
        got = stats.mixture_sum_tail(observed, cases, days)
        assert got == pytest.approx(_enumerated_sum_tail(observed, cases, days), rel=1e-9)


def test_past_2000_weighted_runs_the_suite_wide_tail_is_normal_with_a_continuity_correction() -> (
    None
):
    cases = [(4, 0, 0.02, 30.0)] * 130  # weight 4 each: 2,080 weighted runs
    dists = [stats.rerun_dist(n, r, m * c, (1 - m) * c) for n, r, m, c in cases]
    mean = sum(4 * stats.mean_of(d) for d in dists)
    var = sum(16 * (sum(k * k * p for k, p in enumerate(d)) - stats.mean_of(d) ** 2) for d in dists)
    observed = [1] * 12 + [0] * 118  # 48 weighted failures
    tail, expected = stats.mixture_sum_tail(observed, cases, [(1.0, 0.0)])
    z = (48 - 0.5 - mean) / math.sqrt(var)
    assert tail == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-9)
    assert expected == pytest.approx(mean / 4, rel=1e-9)
    spaced = []  # each case's failures at four times their count
    for dist in dists:
        spaced.append([0.0] * (4 * len(dist) - 3))
        for k, p in enumerate(dist):
            spaced[-1][4 * k] = p
    exact = stats.upper_tail(stats.convolve(spaced), 48)
    # near the exact sum: the normal approximation is 0.023 below it here (a skewed sum)
    assert tail == pytest.approx(exact, abs=0.03)


def test_at_2000_weighted_runs_the_suite_wide_tail_is_still_exact() -> None:
    cases = [(4, 0, 0.02, 30.0)] * 125  # weight 4 each: 2,000 weighted runs
    observed = [1] * 12 + [0] * 113
    tail, _ = stats.mixture_sum_tail(observed, cases, [(1.0, 0.0)])
    spaced = []
    for n, r, m, c in cases:
        dist = stats.rerun_dist(n, r, m * c, (1 - m) * c)
        spaced.append([0.0] * (4 * len(dist) - 3))
        for k, p in enumerate(dist):
            spaced[-1][4 * k] = p
    assert tail == pytest.approx(stats.upper_tail(stats.convolve(spaced), 48), rel=1e-9)


def test_a_tail_from_no_failures_at_all_is_certain() -> None:
    # seven days of a seventh each: their weights sum to 1 − 2e-16, the tail is 1 all the same
    days = [(1 / 7, 0.0)] * 7
    for k in (0, -1):
        assert stats.mixture_tail(k, 3, 0.2, 10.0, days) == 1.0


def test_the_runs_a_case_may_get_as_reruns_count_towards_the_2000() -> None:
    # two runs and up to two reruns each, weight 4: 126 × 4 × (2 + 2) = 2,016 weighted runs
    cases = [(2, 2, 0.02, 30.0)] * 126
    dists = [stats.rerun_dist(n, r, m * c, (1 - m) * c) for n, r, m, c in cases]
    mean = sum(4 * stats.mean_of(d) for d in dists)
    var = sum(16 * (sum(k * k * p for k, p in enumerate(d)) - stats.mean_of(d) ** 2) for d in dists)
    observed = [1] * 12 + [0] * 114
    tail, _ = stats.mixture_sum_tail(observed, cases, [(1.0, 0.0)])
    z = (48 - 0.5 - mean) / math.sqrt(var)
    assert tail == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-9)


@pytest.mark.parametrize("k", [-1, 4])
def test_the_pmf_is_zero_outside_zero_to_n(k: int) -> None:
    assert stats.betabinom_pmf(k, 3, 2.0, 5.0) == 0.0
