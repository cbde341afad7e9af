"""Pass rates with their 95 % intervals, as every report shows them. Pure arithmetic.

- A case's rate over its runs: the Wilson score interval, right at 0 % and 100 % and with few
  runs, where the normal one is not.
- An eval set's rate: its cases' runs pooled, the interval *clustered by case* — a case's runs
  share its prompt and tools, so 4 cases × 5 runs is not 20 independent trials. The
  cluster-robust variance of the pooled rate gives a design effect, and the Wilson interval is
  taken on the effective number of runs (Kish); where the runs cannot show clustering (none
  failed, or all, or a single case) the runs count as they are.
- A change against main: Newcombe's hybrid score interval for a difference of two rates,
  from the two (clustered) Wilson intervals.

First runs and confirmation reruns are counted apart: the gate reruns only failing cases, so a
rate over both would read a 1-of-4 failure as 38 %.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


def wilson(passed: float, runs: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``passed`` of ``runs`` (``runs`` may be an effective,
    fractional count); (0, 1) with no runs."""
    if runs <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, passed / runs))
    z2 = z * z
    centre = (p + z2 / (2 * runs)) / (1 + z2 / runs)
    half = z / (1 + z2 / runs) * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs))
    # at p = 0 or 1 the bound is exactly 0 or 1 (rounding would leave 1e-17)
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return low, high


def design_effect(cases: Iterable[tuple[int, int]]) -> float:
    """How much wider the pooled rate's variance is than if every run were independent: the
    cluster-robust (sandwich) variance over the binomial one, at least 1; 1 where it cannot be
    told (fewer than two cases with runs, or no run failed, or every one)."""
    rows = [(k, n) for k, n in cases if n > 0]
    total = sum(n for _, n in rows)
    if len(rows) < 2 or total == 0:
        return 1.0
    rate = sum(k for k, _ in rows) / total
    binomial = rate * (1 - rate) / total
    if binomial == 0.0:
        return 1.0
    # no small-sample factor c/(c − 1): with it one run per case (no clustering possible)
    # would read as clustered; without it, cases that all pass or all fail count as one run each
    robust = sum((k - rate * n) ** 2 for k, n in rows) / (total * total)
    return max(1.0, robust / binomial)


@dataclass(frozen=True, slots=True)
class Rate:
    """``passed`` of ``runs``, and its 95 % interval."""

    passed: int
    runs: int
    low: float
    high: float

    @property
    def value(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    def text(self) -> str:
        """``75 % [41–93]``; ``n/a`` with no runs."""
        if not self.runs:
            return "n/a"
        return f"{self.value:.0%} [{_pct(self.low)}–{_pct(self.high)}]"

    def record(self) -> dict[str, object]:
        """As the results file holds it."""
        return {
            "passed": self.passed,
            "runs": self.runs,
            "rate": None if self.value is None else round(self.value, 4),
            "interval": [round(self.low, 4), round(self.high, 4)],
        }


def _pct(x: float) -> str:
    return f"{100 * x:.0f}"


def case_rate(passed: int, runs: int) -> Rate:
    low, high = wilson(passed, runs)
    return Rate(passed, runs, low, high)


def clustered_rate(cases: Iterable[tuple[int, int]]) -> Rate:
    """A set's rate: its cases' (passed, runs) pooled, the interval clustered by case."""
    rows = [(k, n) for k, n in cases if n > 0]
    passed, runs = sum(k for k, _ in rows), sum(n for _, n in rows)
    effective = runs / design_effect(rows)
    low, high = wilson(passed * effective / runs if runs else 0.0, effective)
    return Rate(passed, runs, low, high)


@dataclass(frozen=True, slots=True)
class Delta:
    """A rate's change against main's, in points, and its 95 % interval."""

    points: float  # now − main, in percentage points
    low: float
    high: float

    def text(self) -> str:
        """``▼12 pts [−30, +4]``, ``±0 [−9, +9]``."""
        d = round(self.points)
        head = "±0" if d == 0 else f"{'▲' if d > 0 else '▼'}{abs(d)} pts"
        return f"{head} [{_signed(self.low)}, {_signed(self.high)}]"

    def record(self) -> dict[str, object]:
        return {
            "points": round(self.points, 2),
            "interval": [round(self.low, 2), round(self.high, 2)],
        }


def _signed(points: float) -> str:
    d = round(points)
    return "0" if d == 0 else f"{'+' if d > 0 else '−'}{abs(d)}"


def delta(now: Rate, main: Rate) -> Delta | None:
    """Newcombe's hybrid score interval for now − main (None without runs on either side)."""
    if now.value is None or main.value is None:
        return None
    p1, p2 = now.value, main.value
    d = p1 - p2
    low = d - math.sqrt((p1 - now.low) ** 2 + (main.high - p2) ** 2)
    high = d + math.sqrt((now.high - p1) ** 2 + (p2 - main.low) ** 2)
    return Delta(100 * d, 100 * max(-1.0, low), 100 * min(1.0, high))
