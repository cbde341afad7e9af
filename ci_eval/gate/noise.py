"""How main's noise is correlated, measured from its history (:mod:`ci_eval.gate.history`): how
much whole pushes swing together, and how much one job's runs of a case fail together. Pure.

- **Day to day.** A provider's bad day moves every case at once. Per push, the suite's failed
  runs against what each case's own rate predicts: when those totals vary beyond binomial
  noise (their dispersion φ, tested at :data:`SWING_LEVEL`), the pushes carry a day effect,
  and each push's is one *day* the PR's job may be having too. The gate's null is then the
  mixture over main's days: a broad drop no larger than main's own swings is not blamed on
  the PR; one beyond them is. With no swings the mixture is the one day of no effect.
- **Within a job.** A job's runs of a case share its batch, cache and deployment. The
  intra-class correlation ρ of a case's runs within a push (pooled over the suite's cases,
  after the day effects, by the one-way analysis of variance) says how much less than
  independent they are: ρ = 0 when runs are independent, up to 1 when a job's runs all
  fail or all pass together. One job of five failing runs is then one bad batch, not five
  independent failures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ci_eval.gate.history import CaseHistory

MIN_PUSHES = 3  # pushes needed to measure day-to-day swings
RHO_CAP = 0.9
RHO_RATE = 0.3  # cases failing at most this share of runs, where bad batches stand out
RHO_LEVEL = 0.01  # the F test's level for "a job's runs fail together"
SWING_LEVEL = 0.1  # the χ² test's level for "main's pushes swing together"


@dataclass(slots=True)
class Noise:
    # the suite's own prior for a case's failure rate (Beta a, b), learnt from its cases'
    # histories; Jeffreys' (½, ½) where they are too short to learn from
    prior: tuple[float, float]
    rho: float  # within-job intra-class correlation of a case's runs
    # (weight, shift of every case's failure chance) for each of main's days; weights sum to
    # 1: one day without swings, else one per push measured (at least MIN_PUSHES)
    days: list[tuple[float, float]]
    dispersion: float  # φ of the per-push suite totals (1: binomial, or not measured)

    @property
    def swings(self) -> bool:
        return len(self.days) > 1


def measure(histories: list[CaseHistory]) -> Noise:
    """Main's day-to-day swings and within-job correlation, from its cases' histories."""
    rate = [h.failed / h.runs for h in histories]  # a case without history is not judged
    residual: dict[int, float] = {}
    variance: dict[int, float] = {}
    runs: dict[int, int] = {}
    for h, p in zip(histories, rate, strict=True):
        for c in h.clusters:
            if not c.seq:
                continue
            residual[c.seq] = residual.get(c.seq, 0.0) + c.failed - c.runs * p
            variance[c.seq] = variance.get(c.seq, 0.0) + c.runs * p * (1 - p)
            if p < 1:  # a case failing every run has no room to fail more on a bad day
                runs[c.seq] = runs.get(c.seq, 0) + c.runs
    measured = sorted(s for s in variance if variance[s] > 0)
    shift: dict[int, float] = {}
    dispersion, days = 1.0, [(1.0, 0.0)]
    if len(measured) >= MIN_PUSHES:
        statistic = sum(residual[s] ** 2 / variance[s] for s in measured)
        dispersion = statistic / (len(measured) - 1)
        # swings that chance makes as often as not (φ a little above 1) are not swings
        if dispersion > 1 and chi2_tail(statistic, len(measured) - 1) <= SWING_LEVEL:
            shift = {s: residual[s] / runs[s] for s in measured}
            days = [(1 / len(measured), shift[s]) for s in measured]
    return Noise(_prior(histories), _icc(histories, shift), days, dispersion)


PRIOR_RUNS = 5  # runs of history a case needs, on average, to learn the suite's prior from
PRIOR_CASES = 10
PRIOR_FLOOR = 0.25  # the prior says no more than half of what Jeffreys says of a rate


def _prior(histories: list[CaseHistory]) -> tuple[float, float]:
    """The Beta prior of the suite's failure rates, by the method of moments over its cases'
    histories (the beta-binomial's, runs varying), between half and all of Jeffreys' (½, ½)
    in each direction: a suite whose cases mostly never fail says a case passing 20 of 20
    fails rarer than Jeffreys' 1 in 42."""
    rates = [(h.failed / h.runs, h.runs) for h in histories if h.runs]
    if len(rates) < PRIOR_CASES:
        return (0.5, 0.5)
    runs = sum(n for _, n in rates) / len(rates)
    if runs < PRIOR_RUNS:
        return (0.5, 0.5)
    mean = sum(r for r, _ in rates) / len(rates)
    var = sum((r - mean) ** 2 for r, _ in rates) / (len(rates) - 1)
    binomial = sum(mean * (1 - mean) / n for _, n in rates) / len(rates)
    if mean in (0.0, 1.0) or var <= binomial:
        return (0.5, 0.5)
    total = max(mean * (1 - mean) / (var - binomial) - 1, 1e-3)
    a, b = mean * total, (1 - mean) * total
    return (min(max(a, PRIOR_FLOOR), 0.5), min(max(b, PRIOR_FLOOR), 0.5))


def _anova_terms(h: CaseHistory, shift: dict[int, float]) -> list[tuple[float, float]] | None:
    """Each push's terms of a case's sums of squares between its pushes (each push's day
    effect taken out) and within them; None for a case that does not measure it: fewer than
    two pushes, no push of two runs, never or always failing, or flaky (failures spread over
    every push)."""
    clusters = h.clusters
    n = sum(c.runs for c in clusters)
    failed = sum(c.failed for c in clusters)
    if len(clusters) < 2 or n == len(clusters) or failed in (0, n):
        return None
    if failed > RHO_RATE * n:
        return None  # a flaky case's failures spread over every push: noise to this test
    p = failed / n
    mean_shift = sum(c.runs * shift.get(c.seq, 0.0) for c in clusters) / n
    terms = []
    for c in clusters:
        pj = c.failed / c.runs
        expected = p + shift.get(c.seq, 0.0) - mean_shift
        terms.append((c.runs * (pj - expected) ** 2, c.runs * pj * (1 - pj)))
    return terms


def _icc(histories: list[CaseHistory], shift: dict[int, float]) -> float:
    """The one-way ANOVA estimate of the within-push intra-class correlation, pooled over the
    cases with at least two pushes that both pass and fail, each push's day effect taken
    out. 0 where no push has two runs of such a case (nothing to measure it by), or where
    the pushes do not differ beyond chance (the F test at :data:`RHO_LEVEL`): a small
    estimate is mostly noise, and it would cost a suite of independent runs its power."""
    between = within = size_terms = 0.0
    df_between = df_within = 0
    for h in histories:
        terms = _anova_terms(h, shift)
        if terms is None:
            continue
        for b, w in terms:  # added push by push, in the order the sums always had
            between += b
            within += w
        df_between += len(h.clusters) - 1
        df_within += h.runs - len(h.clusters)
        size_terms += h.runs - sum(c.runs**2 for c in h.clusters) / h.runs
    # nothing measured (between is 0 too), or no run differs from its push's others; a
    # measured case adds to both degrees of freedom, so below they are at least 1
    if within == 0:
        return RHO_CAP if between else 0.0
    msb = between / df_between
    msw = within / df_within
    if chi2_tail(between / msw, df_between) > RHO_LEVEL:
        return 0.0
    n0 = size_terms / df_between
    return min(RHO_CAP, max(0.0, (msb - msw) / (msb + (n0 - 1) * msw)))


def chi2_tail(x: float, k: int) -> float:
    """P(χ²ₖ ≥ x), by the Wilson–Hilferty cube-root normal approximation (ample for a
    decision at the 1 % level)."""
    if x <= 0:
        return 1.0
    z = ((x / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))
