"""What a run could have detected, said beside what it found: the gate's own model asked how
likely it was to name a drop it did not see. Pure logic.

- **A case** judged on its history that passes at least :data:`DETECT_FROM` of its runs on
  main, falling to :data:`DETECT_TO`: every way its runs could go this job (its first runs,
  then — where it fails them all and its history rarely fails — confirmation reruns until one
  passes), each judged as the gate judges it: its p-value against its history
  (``stats.mixture_tail``, main's days mixed in) adjusted as Benjamini–Hochberg adjusts the
  least p-value of the family, or confirmed by failing every run where main never failed. A
  job's runs share its day: they fail together by main's measured ρ, in the model's
  alternative as in its null. Other cases' chance failures are left out, so the figure errs
  low (with them, BH adjusts the least p-value less).
- **The suite**: the least drop of every case's pass rate, in whole points, that the
  suite-wide test (``stats.SumDistribution``, over the cases it counts) catches with
  :data:`POWER`: its cut read off main's own predictive, the dropped runs failing at the
  rate each case's history shows plus the drop (a job's runs sharing its day by ρ).

``benchmarks/power_calibration.py`` checks the stated probabilities against simulated PRs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ci_eval.gate import stats
from ci_eval.gate.case_judgement import Judged, Rules
from ci_eval.gate.noise import Noise
from ci_eval.model.comparison import Power

DETECT_FROM = 0.95  # a case main passes at least this share of runs …
DETECT_TO = 0.60  # … falling to this pass rate
POWER = 0.90  # the suite-wide drop caught with this probability
INDEPENDENT = 1e9  # a concentration this large: runs as good as independent


@dataclass(frozen=True, slots=True)
class Target:
    """The drop asked about: a case from ``case_from`` to ``case_to``; the suite-wide drop
    caught with ``power``."""

    case_from: float = DETECT_FROM
    case_to: float = DETECT_TO
    power: float = POWER


DEFAULT_TARGET = Target()


def outcomes(fail: float, first: int, reruns: int, rho: float) -> list[tuple[int, int, float]]:
    """Every way a case failing with chance ``fail`` can go this job: (failed, runs, chance).
    Its first runs, then only if all of them failed up to ``reruns`` more one at a time until
    one passes; runs of one job correlated by ``rho`` (a Pólya urn)."""
    concentration = 1 / rho - 1 if rho > 0 else INDEPENDENT
    fail = min(1 - stats.EDGE, max(stats.EDGE, fail))
    a, b = fail * concentration, (1 - fail) * concentration
    dist = stats.rerun_dist(first, reruns, a, b)
    out = [(k, first, dist[k]) for k in range(first)]
    if reruns <= 0:
        return [*out, (first, first, dist[first])]
    # index first + g (g < reruns): g reruns failed and the next passed
    out += [(first + g, first + g + 1, dist[first + g]) for g in range(reruns)]
    return [*out, (first + reruns, first + reruns, dist[first + reruns])]


@functools.lru_cache(maxsize=4096)  # a large suite's cases share a few histories
def detection(
    model: tuple[float, float],
    clean: bool,
    first: int,
    reruns: int,
    days: tuple[tuple[float, float], ...],
    rho: float,
    family: int,
    alpha: float,
    confirm: int,
    fail: float,
) -> float:
    """The chance the gate names a case a regression when its runs fail with chance
    ``fail``: ``model`` its test's predictive (mean, concentration), ``clean`` main never
    failed it, ``family`` the cases Benjamini–Hochberg adjusts over."""
    mean, concentration = model
    caught = 0.0
    for failed, runs, chance in outcomes(fail, first, reruns, rho):
        if not failed or chance == 0.0:
            continue
        p = stats.mixture_tail(failed, runs, mean, concentration, days)
        confirmed = clean and failed == runs >= confirm and rho == 0
        if min(1.0, p * family) <= alpha or confirmed:
            caught += chance
    return caught


def suite_drop(
    judged: Sequence[Judged], noise: Noise, alpha: float, wanted: float = POWER
) -> int | None:
    """The least drop, in whole points, of every counted case's pass rate that the
    suite-wide test catches with ``wanted``; None past ``Power.SUITE_MAX`` points."""
    cases = [j.predictive for j in judged]
    cut = stats.SumDistribution(cases, noise.days).critical(alpha)
    if cut is None:
        return None

    # under the drop, a case's runs fail at the rate its history shows (no prior: the prior
    # keeps the test cautious, and would credit a clean case with failures it never had) moved
    # by the drop; independent but for a job's shared day (ρ); the test's own weights
    together = 1 / noise.rho - 1 if noise.rho > 0 else INDEPENDENT
    weights = [stats.weight(m) for _, _, m, _ in cases]
    dropped = [(n, r, j.observed, together) for (n, r, _, _), j in zip(cases, judged, strict=True)]

    def power(points: int) -> float:
        days = [(w, shift + points / 100) for w, shift in noise.days]
        return stats.SumDistribution(dropped, days, weights, normal=True).tail(cut)

    low, high = 1, Power.SUITE_MAX
    if power(high) < wanted:
        return None
    while low < high:  # the chance grows with the drop
        mid = (low + high) // 2
        if power(mid) >= wanted:
            high = mid
        else:
            low = mid + 1
    return low


def expected_reruns(judged: Sequence[Judged], rho: float) -> float:
    """The confirmation reruns the family's cases cost when nothing changed: each failing all
    its first runs by the chance its history gives, then rerun until one passes."""
    total = 0.0
    for j in judged:
        first, reruns = j.predictive[0], j.predictive[1]
        if reruns:
            fail = j.model[0]
            total += sum((runs - first) * c for _, runs, c in outcomes(fail, first, reruns, rho))
    return total


def power(
    judged: Sequence[Judged],
    rest: Sequence[Judged],
    noise: Noise,
    rules: Rules,
    alpha: float,
    target: Target = DEFAULT_TARGET,
) -> Power | None:
    """What the run could have detected (None: no case judged on its history). ``judged``:
    the family, every case judged on its history; ``rest``: those the suite-wide test counts."""
    family = list(judged)
    if not family:
        return None
    days = tuple(noise.days)
    chances = []
    for j in family:
        jd = j.judgement
        if jd.history_runs and (jd.history_runs - jd.history_failed) >= (
            target.case_from * jd.history_runs
        ):
            chances.append(
                detection(
                    j.model,
                    jd.history_failed == 0,
                    j.predictive[0],
                    j.predictive[1],
                    days,
                    noise.rho,
                    len(family),
                    alpha,
                    rules.confirm,
                    1 - target.case_to,
                )
            )
    counted = list(rest) or list(family)
    return Power(
        case_from=target.case_from,
        case_to=target.case_to,
        cases=len(chances),
        probability=round(sum(chances) / len(chances), 4) if chances else None,
        lowest=round(min(chances), 4) if chances else None,
        suite_power=target.power,
        suite_drop=suite_drop(counted, noise, alpha, target.power),
        suite_cases=len(counted),
        reruns_expected=round(expected_reruns(family, noise.rho), 2),
    )
