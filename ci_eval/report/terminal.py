"""The short human summary ci-eval prints: per eval set its counts and metric means, then what
failed (with the run and turn), what was skipped and why, the regressions, and the totals.
Pure: the CLI prints the lines, and makes them inert (``ci_eval.inert``) as it does."""

from __future__ import annotations

from pathlib import Path

from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    not_evaluated_reason,
    run_outcome,
)
from ci_eval.results import CaseRecord, RunResults, SetRecord

COUNTED = ("PASSED", "FAILED", "ERROR", "NOT_EVALUATED", "SKIPPED")


def plural(count: int, noun: str, many: str | None = None) -> str:
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def _counts(cases: list[CaseRecord]) -> str:
    counts = {v: sum(1 for c in cases if c.status == v) for v in COUNTED}
    parts = [f"{counts['PASSED']} passed", f"{counts['FAILED']} failed"]
    if counts["ERROR"]:
        parts.append(plural(counts["ERROR"], "error"))
    if counts["NOT_EVALUATED"]:
        parts.append(f"{counts['NOT_EVALUATED']} not evaluated")
    if counts["SKIPPED"]:
        parts.append(f"{counts['SKIPPED']} skipped")
    return ", ".join(parts)


def _name(s: SetRecord) -> str:
    return s.file if s.eval_set_id in ("", s.file) else f"{s.eval_set_id} ({s.file})"


def _case(s: SetRecord, c: CaseRecord) -> str:
    """``id (file:line)``; a legacy file is one case named by its path: say the path once."""
    where = f"{c.file}:{c.line}" if c.line else c.file
    if c.eval_id in (c.file, s.file):
        return where
    return f"{c.eval_id} ({where})"


def summary_lines(results: RunResults) -> list[str]:
    lines = []
    for s in results.sets:
        means = []
        for spec in s.applied_metrics:
            scores = [
                m.score
                for c in s.cases
                for m in c.metrics
                if m.name == spec.name and m.score is not None and not m.informational
            ]
            if scores:
                means.append(f"{spec.name} {fmt(sum(scores) / len(scores))}")
        lines.append(
            f"{_name(s)}: {_counts(s.cases)}" + (f" — {'; '.join(means)}" if means else "")
        )
        for c in s.cases:
            if c.status == "ERROR":
                lines.append(f"  ERROR {_case(s, c)}: {error_reason(c)}")
            elif c.status == "FAILED":
                lines.append(f"  FAILED {_case(s, c)}: " + ", ".join(failing_metrics(c)))
            elif c.status == "NOT_EVALUATED":
                lines.append(f"  NOT EVALUATED {_case(s, c)}: {not_evaluated_reason(c)}")
            elif c.status == "SKIPPED":
                lines.append(f"  SKIPPED {_case(s, c)}: {c.skipped or 'not run'}")
            if c.flaky:
                passed = sum(1 for r in c.runs if run_outcome(r) == "PASSED")
                lines.append(
                    f"  FLAKY {_case(s, c)}: passed {passed} of {plural(len(c.runs), 'run')}"
                )
    comparison = results.comparison
    if comparison is not None:
        titles = {s.eval_set_id: s for s in results.sets}
        for change in comparison.regressions:
            s = titles.get(change.set_id)
            case = change.case_id if s is None or change.case_id != s.file else Path(s.file).name
            lines.append(f"  REGRESSED {change.set_id}:{case}: {change.describe()}")
        lines.append(
            f"baseline {(comparison.baseline_commit or 'unknown')[:12]} "
            f"({comparison.baseline_date or 'undated'}): "
            f"{plural(len(comparison.regressions), 'regression')}, "
            f"{plural(len(comparison.improvements), 'improvement')}, "
            f"{len(comparison.new_cases)} new, {len(comparison.removed_cases)} removed"
        )
    cases = [c for _, c in results.cases()]
    totals = (
        f"{results.count('PASSED')} passed, {results.count('FAILED')} failed, "
        f"{plural(results.count('ERROR'), 'error')}, "
        + (
            f"{results.count('NOT_EVALUATED')} not evaluated, "
            if results.count("NOT_EVALUATED")
            else ""
        )
        + f"{results.count('SKIPPED')} skipped"
    )
    lines.append(
        f"{plural(len(cases), 'case')}: {totals} in {results.duration_s:.1f} s "
        f"({results.agent})" + (" — interrupted" if results.interrupted else "")
    )
    return lines
