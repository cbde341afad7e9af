"""The exact statistics the regression gate needs, in pure Python (``math.lgamma``): no numpy or
scipy at run time — they made the Docker image much larger for a few dozen lines. The tests
check every function here against scipy.

- :func:`betabinom_pmf` / :func:`betabinom_tail`: the beta-binomial distribution, which is the
  posterior predictive of "how many of the next n runs fail" given a case's history under a
  Beta prior (Jeffreys: Beta(½, ½)).
- :func:`convolve`: the distribution of a sum of independent counts (the suite-level test).
- :func:`benjamini_hochberg`: multiplicity control across cases.
- :func:`predictive` / :func:`mixture_tail` / :func:`mixture_sum_tail`: the same predictive
  when runs are clustered (a job's runs share its day) and main's days swing
  (:mod:`ci_eval.gate.noise`): a beta-binomial by mean and concentration, mixed over main's days.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

JEFFREYS = 0.5  # Beta(½, ½): the prior that says least about a pass rate


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _lchoose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def betabinom_pmf(k: int, n: int, a: float, b: float) -> float:
    """P(K = k) for K ~ BetaBinomial(n, a, b)."""
    if k < 0 or k > n:
        return 0.0
    return math.exp(_lchoose(n, k) + _lbeta(k + a, n - k + b) - _lbeta(a, b))


def betabinom_dist(n: int, a: float, b: float) -> list[float]:
    """[P(K = 0), …, P(K = n)], normalised so rounding cannot push a tail above 1."""
    pmf = [betabinom_pmf(k, n, a, b) for k in range(n + 1)]
    total = sum(pmf)
    return [p / total for p in pmf]


def betabinom_tail(k: int, n: int, a: float, b: float) -> float:
    """P(K ≥ k) for K ~ BetaBinomial(n, a, b)."""
    if k <= 0:
        return 1.0
    return min(1.0, sum(betabinom_pmf(j, n, a, b) for j in range(k, n + 1)))


def predictive_failures(history_failed: int, history_passed: int, runs: int) -> list[float]:
    """The distribution of failures in ``runs`` new runs given the history (Jeffreys prior)."""
    return betabinom_dist(runs, history_failed + JEFFREYS, history_passed + JEFFREYS)


def surprise(history_failed: int, history_passed: int, failed: int, runs: int) -> float:
    """P(at least ``failed`` of ``runs`` new runs fail | the history): the per-case p-value.
    20 of 20 passed then 3 of 3 failed: 1.8e-4; 12 of 20 passed then 3 of 3 failed: 0.08."""
    return betabinom_tail(failed, runs, history_failed + JEFFREYS, history_passed + JEFFREYS)


def convolve(dists: Sequence[Sequence[float]]) -> list[float]:
    """The distribution of a sum of independent counts, each given as its pmf from 0."""
    out = [1.0]
    for dist in dists:
        nxt = [0.0] * (len(out) + len(dist) - 1)
        terms = [(j, q) for j, q in enumerate(dist) if q != 0.0]  # a weighted pmf is mostly 0
        for i, p in enumerate(out):
            if p == 0.0:
                continue
            for j, q in terms:
                nxt[i + j] += p * q
        out = nxt
    return out


def upper_tail(pmf: Sequence[float], k: int) -> float:
    """P(X ≥ k) for X with the given pmf (from 0)."""
    return min(1.0, sum(pmf[max(k, 0) :]))


def mean_of(pmf: Sequence[float]) -> float:
    return sum(i * p for i, p in enumerate(pmf))


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """BH-adjusted p-values (reject where adjusted ≤ α): the false discovery rate stays at α,
    and when nothing changed (every null true) so does the chance of any false alarm."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted: dict[int, float] = {}
    running = 1.0  # from the largest p (≤ 1, at rank m its own), so never above 1
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = running
    return [adjusted[i] for i in range(m)]


EDGE = 1e-9  # a shifted failure chance stays inside (0, 1)
EXACT_LIMIT = 2000  # runs in a suite-wide sum computed exactly; beyond, a normal approximation


def predictive(
    failed: float,
    passed: float,
    rho: float = 0.0,
    prior: tuple[float, float] = (JEFFREYS, JEFFREYS),
) -> tuple[float, float]:
    """The mean and concentration (α + β) of the beta-binomial for one job's runs of a case,
    given its (weighted) history under ``prior`` (Jeffreys' unless the suite says otherwise)
    and the within-job correlation ``rho``.
    Two runs of one job are correlated by ``rho`` plus what the unknown rate adds,
    (1 − rho) / (a + b + 1); the concentration is what gives that correlation. With rho = 0
    it is :func:`predictive_failures`'s."""
    a, b = failed + prior[0], passed + prior[1]
    correlation = rho + (1 - rho) / (a + b + 1)
    return a / (a + b), 1 / correlation - 1


def _shifted(mean: float, shift: float) -> float:
    return min(1 - EDGE, max(EDGE, mean + shift))


def mixture_tail(
    k: int, n: int, mean: float, concentration: float, days: Sequence[tuple[float, float]]
) -> float:
    """P(K ≥ k), K the failures of ``n`` runs of one job, over main's days (weight, shift)."""
    if k <= 0:
        return 1.0
    total = 0.0
    for weight, shift in days:
        m = _shifted(mean, shift)
        total += weight * betabinom_tail(k, n, m * concentration, (1 - m) * concentration)
    return min(1.0, total)


SHIFT = 0.1  # the broad drop the suite-wide test's weights are tuned to: 10 points
MAX_WEIGHT = 4


def weight(mean: float) -> int:
    """How much a failed run of a case counts in the suite-wide sum: the log-likelihood ratio
    of a failure under a drop of :data:`SHIFT` against none, in whole steps of ½, from 1 to
    :data:`MAX_WEIGHT`. A failure of a case that never fails says more than one of a flaky
    case: 4 where the history predicts 2 %, 2 at 10 %, 1 from 30 %."""
    m = min(1 - EDGE, max(EDGE, mean))
    shifted = min(1 - EDGE, m + SHIFT)
    ratio = math.log(shifted / m) - math.log((1 - shifted) / (1 - m))
    return max(1, min(MAX_WEIGHT, int(2 * ratio + 0.5)))


def rerun_dist(n: int, reruns: int, a: float, b: float) -> list[float]:
    """The distribution of a case's failed runs when it runs ``n`` times, then — only if all
    of them failed — up to ``reruns`` more, one at a time, until one passes (confirmation
    reruns); its runs a beta-binomial(a, b) sequence (a Pólya urn: each failure makes the next
    likelier, as a job's runs share its day). Without reruns, the beta-binomial itself."""
    dist = betabinom_dist(n, a, b)
    if reruns <= 0:
        return dist

    def all_fail(j: int) -> float:
        return math.exp(sum(math.log((a + k) / (a + b + k)) for k in range(j)))

    stops = [all_fail(n + g) - all_fail(n + g + 1) for g in range(reruns)]
    return dist[:n] + stops + [all_fail(n + reruns)]


@functools.lru_cache(maxsize=65536)
def _rerun_dist(n: int, reruns: int, a: float, b: float) -> tuple[float, ...]:
    return tuple(rerun_dist(n, reruns, a, b))


def mixture_sum_tail(
    observed: Sequence[int],
    cases: Sequence[tuple[int, int, float, float]],
    days: Sequence[tuple[float, float]],
) -> tuple[float, float]:
    """P(S ≥ s) and E[X]: X the failed runs over independent cases (runs, confirmation
    reruns it may get, mean, concentration: :func:`rerun_dist`) on a day drawn from ``days``
    (weight, shift), every case's failure chance moved by the day's shift; S the same
    failures weighted by :func:`weight` of each case's mean, s its value for the ``observed``
    failures. Exact (a convolution) up to :data:`EXACT_LIMIT` weighted runs, then a normal
    approximation with a continuity correction."""
    weights = [weight(m) for _, _, m, _ in cases]
    s = sum(w * k for w, k in zip(weights, observed, strict=True))
    dist = SumDistribution(cases, days)
    return dist.tail(s), dist.expected


class SumDistribution:
    """The weighted sum S of :func:`mixture_sum_tail`, worked out once per day so that its
    tail can be read at any value (the power of the suite-wide test reads many)."""

    def __init__(
        self,
        cases: Sequence[tuple[int, int, float, float]],
        days: Sequence[tuple[float, float]],
        weights: Sequence[int] | None = None,
        normal: bool = False,
    ) -> None:
        """``weights``: each case's (default: :func:`weight` of its mean) — a drop the test
        did not expect keeps the weights the test gives; ``normal``: the normal approximation
        whatever the span (the power's alternatives, read near their middle)."""
        weights = [weight(m) for _, _, m, _ in cases] if weights is None else list(weights)
        self.span = sum(w * (n + r) for w, (n, r, _, _) in zip(weights, cases, strict=True))
        self.expected = 0.0
        self._exact: list[tuple[float, list[float]]] = []
        self._normal: list[tuple[float, float, float]] = []
        for day, shift in days:
            dists = []
            for n, r, m, c in cases:
                m = _shifted(m, shift)
                # a large suite's cases share a few histories: each distribution once
                dists.append(_rerun_dist(n, r, m * c, (1 - m) * c))
            self.expected += day * sum(mean_of(d) for d in dists)
            if self.span <= EXACT_LIMIT and not normal:
                spread = []
                for w, dist in zip(weights, dists, strict=True):
                    spaced = [0.0] * (w * (len(dist) - 1) + 1)
                    for k, p in enumerate(dist):
                        spaced[w * k] = p
                    spread.append(spaced)
                self._exact.append((day, convolve(spread)))
            else:
                mean = var = 0.0
                for w, dist in zip(weights, dists, strict=True):
                    m1 = mean_of(dist)
                    mean += w * m1
                    var += w * w * (sum(k * k * p for k, p in enumerate(dist)) - m1 * m1)
                # var > 0: past EXACT_LIMIT some case has runs, its chance within [EDGE, 1 − EDGE]
                self._normal.append((day, mean, var))

    def tail(self, s: int) -> float:
        """P(S ≥ s)."""
        total = sum(day * upper_tail(pmf, s) for day, pmf in self._exact)
        for day, mean, var in self._normal:
            z = (s - 0.5 - mean) / math.sqrt(var)
            total += day * 0.5 * math.erfc(z / math.sqrt(2))
        return min(1.0, total)

    def critical(self, alpha: float) -> int | None:
        """The least s with P(S ≥ s) ≤ ``alpha`` (None: no sum is that rare)."""
        low, high = 0, self.span + 1
        if self.tail(high) > alpha:
            return None
        while low < high:  # the tail falls as s grows
            mid = (low + high) // 2
            if self.tail(mid) <= alpha:
                high = mid
            else:
                low = mid + 1
        return low


def hypergeom_dist(total: int, failed: int, drawn: int) -> list[float]:
    """[P(K = 0), …, P(K = drawn)]: the failures among ``drawn`` of ``total`` runs, ``failed`` of
    which failed, when which runs are whose is chance (the PR's and a same-day control's runs of
    one case, when the PR changed nothing)."""
    low = math.lgamma(total + 1) - math.lgamma(drawn + 1) - math.lgamma(total - drawn + 1)
    out = []
    for k in range(drawn + 1):
        if k > failed or drawn - k > total - failed:
            out.append(0.0)
            continue
        out.append(math.exp(_lchoose(failed, k) + _lchoose(total - failed, drawn - k) - low))
    return out
