"""Compare a run with the baseline: which cases got worse, fairly.

A case regresses on a metric when its mean drops by more than ``tolerance`` or its status flips
from PASSED to FAILED. With repeated runs on both sides (n ≥ 2) such a drop counts only when it
is significant at ``significance``: an exact one-sided permutation test on the per-run scores
(scipy's ``permutation_test``, every permutation), or Fisher's exact test on the pass counts —
tests made for small samples and bounded scores. Improvements, new, removed and flaky cases are
reported apart. Pure logic: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ci_eval.results import RunResults


@dataclass
class MetricChange:
    set_id: str
    case_id: str
    metric: str
    before: float | None
    after: float | None
    regressed: bool = False
    improved: bool = False
    method: str | None = None
    p_value: float | None = None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    def describe(self) -> str:
        text = f"{self.metric} regressed from {_f(self.before)} to {_f(self.after)}"
        if self.method:
            text += f" ({self.method}, p={self.p_value:.3g})"
        return text


@dataclass
class Comparison:
    baseline_commit: str | None
    baseline_date: str | None
    changes: list[MetricChange] = field(default_factory=list)
    new_cases: list[tuple[str, str]] = field(default_factory=list)
    removed_cases: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[MetricChange]:
        return [c for c in self.changes if c.regressed]

    @property
    def improvements(self) -> list[MetricChange]:
        return [c for c in self.changes if c.improved]

    def regressed_cases(self) -> set[tuple[str, str]]:
        return {(c.set_id, c.case_id) for c in self.regressions}


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _mean_difference(before: Any, after: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.mean(before, axis=axis) - np.mean(after, axis=axis)


def _significant_drop(
    before_runs: list[float], after_runs: list[float], threshold: float | None, significance: float
) -> tuple[str, float] | None:
    """(method, p) when the drop is significant, else None."""
    import numpy as np  # scipy takes most of a second to import: only when a test is needed
    from scipy.stats import fisher_exact, permutation_test

    tests: list[tuple[str, float]] = []
    if len(set(before_runs + after_runs)) > 1:
        result = permutation_test(
            (before_runs, after_runs),
            _mean_difference,
            permutation_type="independent",
            alternative="greater",
            n_resamples=np.inf,
            vectorized=True,
            axis=-1,
        )
        tests.append(("exact permutation test", float(result.pvalue)))
    if threshold is not None:
        passed_before = sum(1 for s in before_runs if s >= threshold)
        passed_after = sum(1 for s in after_runs if s >= threshold)
        table = [
            [passed_before, len(before_runs) - passed_before],
            [passed_after, len(after_runs) - passed_after],
        ]
        tests.append(
            (
                "Fisher's exact test on pass counts",
                float(fisher_exact(table, alternative="greater").pvalue),
            )
        )
    if not tests:
        return None
    method, p = min(tests, key=lambda t: t[1])
    return (method, p) if p < significance else None


def compare(
    results: RunResults,
    baseline: dict[str, Any],
    tolerance: float = 0.0,
    significance: float = 0.05,
) -> Comparison:
    provenance = baseline.get("provenance") or {}
    comparison = Comparison(provenance.get("commit"), provenance.get("date"))
    base_sets = baseline.get("sets") or {}
    seen: set[tuple[str, str]] = set()
    for s in results.sets:
        base_cases = (base_sets.get(s.eval_set_id) or {}).get("cases") or {}
        for case in s.cases:
            key = (s.eval_set_id, case.eval_id)
            seen.add(key)
            base = base_cases.get(case.eval_id)
            if base is None:
                comparison.new_cases.append(key)
                continue
            for m in case.metrics:
                before = (base.get("metrics") or {}).get(m.name)
                if m.informational or before is None or m.score is None:
                    continue
                comparison.changes.append(
                    _change(s.eval_set_id, case.eval_id, m, before, tolerance, significance)
                )
    for set_id, data in base_sets.items():
        for case_id in data.get("cases") or {}:
            if (set_id, case_id) not in seen:
                comparison.removed_cases.append((set_id, case_id))
    return comparison


def _change(
    set_id: str,
    case_id: str,
    metric: Any,
    before: dict[str, Any],
    tolerance: float,
    significance: float,
) -> MetricChange:
    change = MetricChange(set_id, case_id, metric.name, before.get("mean"), metric.score)
    if change.before is None:
        return change
    drop = change.before - metric.score
    flipped = before.get("status") == "PASSED" and metric.status == "FAILED"
    worse = drop > tolerance or flipped
    better = -drop > tolerance or (before.get("status") == "FAILED" and metric.status == "PASSED")
    before_runs = [r for r in before.get("runs") or [] if r is not None]
    after_runs = [r for r in metric.runs if r is not None]
    if len(before_runs) >= 2 and len(after_runs) >= 2:
        if worse:
            found = _significant_drop(before_runs, after_runs, metric.threshold, significance)
            if found:
                change.regressed = True
                change.method, change.p_value = found
        elif better:
            change.improved = (
                _significant_drop(after_runs, before_runs, metric.threshold, significance)
                is not None
            )
    else:
        change.regressed, change.improved = worse, better and not worse
    return change
