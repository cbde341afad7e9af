"""The exact statistics the regression gate needs, in pure Python (``math.lgamma``): no numpy or
scipy at run time — they were most of the Docker image for a few dozen lines. The tests check
every function here against scipy.

- :func:`betabinom_pmf` / :func:`betabinom_tail`: the beta-binomial distribution, which is the
  posterior predictive of "how many of the next n runs fail" given a case's history under a
  Beta prior (Jeffreys: Beta(½, ½)).
- :func:`convolve`: the distribution of a sum of independent counts (the suite-level test).
- :func:`benjamini_hochberg`: multiplicity control across cases.
"""

from __future__ import annotations

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
        for i, p in enumerate(out):
            if p == 0.0:
                continue
            for j, q in enumerate(dist):
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
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted
