"""What main's noise measures to, number for number: the within-job correlation ρ (one-way
analysis of variance over a case's raw pass/fail runs), the suite's Beta prior (the
beta-binomial's method of moments) and the χ² tail, each against a reference computed here
from its textbook definition, at the boundaries where the gate's code chooses."""

from __future__ import annotations

import pytest
from scipy.stats import chi2

from ci_eval.gate import noise
from ci_eval.gate.history import CaseHistory, Cluster


def _histories(cases: list[list[tuple[int, int]]], seq: bool = False) -> list[CaseHistory]:
    """Cases of (runs, failed) per push; ``seq`` False: pushes without a number, which the
    day-to-day measure leaves out (no swings), the within-job one counts."""
    return [
        CaseHistory([Cluster(i + 1 if seq else 0, n, f) for i, (n, f) in enumerate(case)])
        for case in cases
    ]


def _anova_icc(cases: list[list[tuple[int, int]]]) -> float:
    """ICC(1) from the 0/1 runs themselves, pooled over the cases: sums of squares between
    and within a case's pushes, n₀ for unequal pushes (Snedecor & Cochran)."""
    ssb = ssw = size_terms = 0.0
    dfb = dfw = 0
    for case in cases:
        runs = [[1.0] * f + [0.0] * (n - f) for n, f in case]
        everything = [y for push in runs for y in push]
        grand = sum(everything) / len(everything)
        for push in runs:
            mean = sum(push) / len(push)
            ssb += len(push) * (mean - grand) ** 2
            ssw += sum((y - mean) ** 2 for y in push)
        dfb += len(runs) - 1
        dfw += len(everything) - len(runs)
        size_terms += len(everything) - sum(len(p) ** 2 for p in runs) / len(everything)
    msb, msw, n0 = ssb / dfb, ssw / dfw, size_terms / dfb
    return (msb - msw) / (msb + (n0 - 1) * msw)


# one case, pushes of unequal size, its failures bunched in one push: well past the F test
BUNCHED = [[(5, 4), (3, 0), (4, 0), (6, 0), (2, 0), (5, 1)]]
# two cases pooled: the second's failures bunched too
POOLED = [*BUNCHED, [(4, 0), (4, 3), (2, 0)]]
# two pushes of ten, six failing runs all in the first: one degree of freedom between pushes
TWO_PUSHES = [[(10, 6), (10, 0)]]


@pytest.mark.parametrize("cases", [BUNCHED, POOLED, TWO_PUSHES], ids=["one", "pooled", "two"])
def test_rho_is_the_one_way_anova_intra_class_correlation(
    cases: list[list[tuple[int, int]]],
) -> None:
    expected = _anova_icc(cases)
    assert 0 < expected < noise.RHO_CAP
    assert noise.measure(_histories(cases)).rho == pytest.approx(expected, rel=1e-12)


def test_rho_is_capped() -> None:
    # every failing run of 30 in one push of three: ρ near 1, said as at most the cap
    cases = [[(3, 3), *[(3, 0)] * 9]]
    assert _anova_icc(cases) > noise.RHO_CAP
    assert noise.measure(_histories(cases)).rho == noise.RHO_CAP


def test_rho_is_zero_where_the_pushes_differ_no_more_than_chance_makes() -> None:
    # the failures spread over the pushes: the F test's tail above 1 %
    assert noise.measure(_histories([[(5, 1), (5, 0), (5, 1), (5, 0), (5, 1)]])).rho == 0.0


def test_rho_leaves_out_a_case_failing_more_than_thirty_percent_of_runs() -> None:
    at = [[(10, 6), (10, 0)]]  # 6 of 20: at 30 %, measured
    past = [[(10, 7), (10, 0)]]  # 7 of 20: past it, a flaky case's noise
    assert noise.measure(_histories(at)).rho > 0
    assert noise.measure(_histories(past)).rho == 0.0


def test_rho_needs_two_pushes_and_a_push_of_two_runs() -> None:
    assert noise.measure(_histories([[(10, 3)]])).rho == 0.0
    assert noise.measure(_histories([[(1, 1), (1, 0), (1, 0), (1, 0)]])).rho == 0.0


def _moments_prior(cases: list[tuple[int, int]]) -> tuple[float, float]:
    """The beta-binomial's method of moments on (runs, failed) per case: the rates' spread
    beyond the binomial's is the Beta's, whose total a + b follows; then clipped to between
    half of Jeffreys' ½ and all of it."""
    rates = [f / n for n, f in cases]
    k = len(rates)
    mean = sum(rates) / k
    spread = sum((r - mean) ** 2 for r in rates) / (k - 1)
    binomial = sum(mean * (1 - mean) / n for n, _ in cases) / k
    total = mean * (1 - mean) / (spread - binomial) - 1
    return tuple(min(max(x, 0.25), 0.5) for x in (mean * total, (1 - mean) * total))  # type: ignore[return-value]


# twelve cases of 20 runs failing from never to always: a spread beyond the binomial's, whose
# Beta has both a and b between the bounds
SUITE = [(20, f) for f in (8, 6, 1, 1, 0, 20, 6, 8, 2, 20, 16, 20)]


def test_the_prior_is_the_beta_binomials_method_of_moments() -> None:
    expected = _moments_prior(SUITE)
    assert all(0.25 < x < 0.5 for x in expected)  # learnt, not a bound
    assert noise.measure(_histories([[c] for c in SUITE])).prior == pytest.approx(
        expected, rel=1e-12
    )


def test_the_prior_is_clipped_to_half_of_jeffreys_at_least() -> None:
    # a rare failure in a suite of steady cases: the moments say a tiny a, the floor holds it
    suite = [(20, 0)] * 11 + [(20, 20)]
    assert noise.measure(_histories([[c] for c in suite])).prior[0] == noise.PRIOR_FLOOR


def test_the_prior_is_jeffreys_below_ten_cases() -> None:
    nine, ten = [[c] for c in SUITE[:9]], [[c] for c in SUITE[:10]]
    assert noise.measure(_histories(nine)).prior == (0.5, 0.5)
    assert noise.measure(_histories(ten)).prior != (0.5, 0.5)


def test_the_prior_is_jeffreys_below_five_runs_a_case_on_average() -> None:
    def suite(runs: int) -> list[list[tuple[int, int]]]:
        return [[(runs, f)] for f in (0, 0, 0, 0, 0, 0, 0, 1, 2, runs, 0, 0)]

    assert noise.measure(_histories(suite(4))).prior == (0.5, 0.5)
    assert noise.measure(_histories(suite(5))).prior != (0.5, 0.5)


def test_the_prior_is_jeffreys_where_rates_spread_no_more_than_the_binomial() -> None:
    even = [[(20, 2)] for _ in range(12)]  # every case failing 2 of 20: no spread at all
    assert noise.measure(_histories(even)).prior == (0.5, 0.5)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10, 20, 40])
def test_the_chi2_tail_is_within_a_hundredth_of_scipys(k: int) -> None:
    for x in [0.25 * i for i in range(1, 400)]:
        assert noise.chi2_tail(x, k) == pytest.approx(chi2.sf(x, k), abs=0.011)
    assert noise.chi2_tail(0.0, k) == 1.0


def test_the_dispersion_is_the_pushes_chi2_statistic_over_its_degrees_of_freedom() -> None:
    # four cases, five pushes of four runs, numbered: each push's failed runs against what the
    # cases' own rates predict, squared over the binomial variance, summed, over pushes − 1
    cases = [[(4, 0), (4, 2), (4, 1), (4, 0), (4, 1)], [(4, 1), (4, 1), (4, 0), (4, 2), (4, 0)]]
    cases += [[(4, 0), (4, 0), (4, 1), (4, 1), (4, 2)], [(4, 2), (4, 0), (4, 0), (4, 1), (4, 1)]]
    rates = [sum(f for _, f in case) / 20 for case in cases]
    statistic = 0.0
    for push in range(5):
        residual = sum(case[push][1] - 4 * p for case, p in zip(cases, rates, strict=True))
        variance = sum(4 * p * (1 - p) for p in rates)
        statistic += residual**2 / variance
    got = noise.measure(_histories(cases, seq=True)).dispersion
    assert got == pytest.approx(statistic / 4, rel=1e-12)


def test_the_prior_learns_a_beta_of_total_above_two() -> None:
    # a suite mostly passing, some cases failing a quarter or half of their runs: a + b ≈ 2.5
    suite = [(20, f) for f in (0, 0, 0, 0, 0, 1, 1, 3, 4, 5, 10, 12)]
    expected = _moments_prior(suite)
    assert 0.25 < expected[0] < 0.5
    assert noise.measure(_histories([[c] for c in suite])).prior == pytest.approx(
        expected, rel=1e-12
    )


def test_rho_is_zero_where_its_estimate_is_positive_but_within_the_f_tests_one_percent() -> None:
    case = [(5, 1), (5, 2), (5, 2), (5, 0), (5, 0)]
    assert _anova_icc([case]) > 0  # a small estimate, mostly noise
    assert noise.measure(_histories([case])).rho == 0.0


# --- main's day-to-day swings ------------------------------------------------------------------

# five cases, six pushes of four runs: φ = 2.05, its χ² tail 0.067 on 5 degrees of freedom
# (pushes − 1), at 7 it would be 0.17: swings, as the test's level of 10 % says
NEAR_THE_LEVEL = [
    [(1, 4, 0), (2, 4, 1), (3, 4, 0), (4, 4, 1), (5, 4, 1), (6, 4, 2)],
    [(1, 4, 2), (2, 4, 0), (3, 4, 2), (4, 4, 3), (5, 4, 3), (6, 4, 1)],
    [(1, 4, 0), (2, 4, 1), (3, 4, 1), (4, 4, 1), (5, 4, 1), (6, 4, 3)],
    [(1, 4, 1), (2, 4, 0), (3, 4, 1), (4, 4, 1), (5, 4, 3), (6, 4, 0)],
    [(1, 4, 0), (2, 4, 1), (3, 4, 0), (4, 4, 3), (5, 4, 1), (6, 4, 1)],
]
# every case failing 4 of 20 runs on the even pushes and none on the odd: a day effect
DAYS = [[(p, 20, 4 if p % 2 == 0 else 0) for p in range(1, 9)] for _ in range(10)]


def _noise_of(cases: list[list[tuple[int, int, int]]]) -> noise.Noise:
    return noise.measure([CaseHistory([Cluster(*c) for c in case]) for case in cases])


def test_swings_are_tested_on_as_many_degrees_of_freedom_as_pushes_less_one() -> None:
    found = _noise_of(NEAR_THE_LEVEL)
    statistic = found.dispersion * 5
    assert noise.chi2_tail(statistic, 5) <= noise.SWING_LEVEL < noise.chi2_tail(statistic, 7)
    assert found.swings


def test_a_days_shift_is_its_failures_beyond_what_each_case_predicts_per_run() -> None:
    # each case fails 16 of its 160 runs (1/10 a run); an even push's 10 × 20 runs fail 40
    # where 20 were expected: +0.1 a run, an odd push's −0.1
    found = _noise_of(DAYS)
    assert found.swings
    assert [round(shift, 6) for _, shift in found.days] == [-0.1, 0.1] * 4


def test_a_day_that_moves_every_case_alike_is_no_correlation_within_a_job() -> None:
    # the pushes differ, but by the day's shift alone: taken out, a job's runs are independent
    # (left in, its pushes would differ far beyond the F test's 1 %)
    assert _noise_of(DAYS).rho == 0.0


def test_rho_measures_the_cases_after_a_flaky_one() -> None:
    flaky = [(10, 8), (10, 0)]  # 8 of 20: past the share, left out
    assert (
        noise.measure(_histories([flaky, *BUNCHED])).rho
        == noise.measure(_histories(BUNCHED)).rho
        > 0
    )


def test_the_dispersion_is_one_where_too_few_pushes_measure_it() -> None:
    two = [[(1, 4, 1), (2, 4, 0)] for _ in range(5)]
    assert _noise_of(two).dispersion == 1.0 and not _noise_of(two).swings


def test_rho_measures_a_case_that_failed_a_single_run() -> None:
    cases = [*BUNCHED, [(5, 1), (5, 0), (5, 0), (5, 0)]]
    assert noise.measure(_histories(cases)).rho == pytest.approx(_anova_icc(cases), rel=1e-12)


def test_a_case_seen_only_on_the_bad_days_is_judged_against_its_own_days() -> None:
    # a case run on the even pushes only, failing 4 of 20 on each: its days' shift (+0.1) is
    # taken out of each push and of its own mean alike, so nothing is left between its pushes
    lopsided = [(p, 20, 4) for p in range(2, 9, 2)]
    found = _noise_of([*DAYS, lopsided])
    assert found.swings and found.rho == 0.0


def test_rho_leaves_out_a_case_that_never_failed() -> None:
    # a case that never failed has nothing to say of a job's runs failing together: its
    # pushes add no degrees of freedom
    calm = [(5, 0), (5, 0), (5, 0)]
    assert noise.measure(_histories([*BUNCHED, calm])).rho == noise.measure(_histories(BUNCHED)).rho
