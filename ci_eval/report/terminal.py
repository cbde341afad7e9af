"""The short human summary ci-eval prints: per eval set its counts and metric means, then what
failed (with the run and turn), what was skipped and why, the regressions, and the totals.
Pure: the CLI prints the lines, and makes them inert (``ci_eval.inert``) as it does."""

from __future__ import annotations

from ci_eval.gate import verdict
from ci_eval.model.comparison import CaseJudgement, Comparison, Judgement
from ci_eval.model.status import Status
from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    not_evaluated_reason,
    run_outcome,
)
from ci_eval.results import CaseRecord, RunResults, SetRecord

COUNTED = (Status.PASSED, Status.FAILED, Status.ERROR, Status.NOT_EVALUATED, Status.SKIPPED)


def plural(count: int, noun: str, many: str | None = None) -> str:
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def _counts(counts: dict[Status, int]) -> str:
    parts = [f"{counts[Status.PASSED]} passed", f"{counts[Status.FAILED]} failed"]
    if counts[Status.ERROR]:
        parts.append(plural(counts[Status.ERROR], "error"))
    if counts[Status.NOT_EVALUATED]:
        parts.append(f"{counts[Status.NOT_EVALUATED]} not evaluated")
    if counts[Status.SKIPPED]:
        parts.append(f"{counts[Status.SKIPPED]} skipped")
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
    totals = dict.fromkeys(COUNTED, 0)
    judgements = results.comparison.by_case() if results.comparison else {}
    for s in results.sets:
        counts = dict.fromkeys(COUNTED, 0)
        scores: dict[str, list[float]] = {}  # per metric, its scores in case order
        case_lines = []
        for c in s.cases:  # one pass: at 20,000 cases each pass over them costs
            status = c.status
            if status in counts:
                counts[status] += 1
            for m in c.metrics:
                if m.score is not None and not m.informational:
                    scores.setdefault(m.name, []).append(m.score)
            case_lines += _case_lines(judgements, s, c, status)
        means = [
            f"{spec.name} {fmt(sum(values) / len(values))}"
            for spec in s.applied_metrics
            if (values := scores.get(spec.name))
        ]
        lines.append(f"{_name(s)}: {_counts(counts)}" + (f" — {'; '.join(means)}" if means else ""))
        lines += case_lines
        for status, n in counts.items():
            totals[status] += n
    comparison = results.comparison
    if comparison is not None:
        lines += _comparison_lines(comparison)
    cases = sum(len(s.cases) for s in results.sets)
    total = (
        f"{totals[Status.PASSED]} passed, {totals[Status.FAILED]} failed, "
        f"{plural(totals[Status.ERROR], 'error')}, "
        + (
            f"{totals[Status.NOT_EVALUATED]} not evaluated, "
            if totals[Status.NOT_EVALUATED]
            else ""
        )
        + f"{totals[Status.SKIPPED]} skipped"
    )
    lines.append(
        f"{plural(cases, 'case')}: {total} in {results.duration_s:.1f} s "
        f"({results.agent})" + (" — interrupted" if results.interrupted else "")
    )
    lines.append(verdict(results).line)  # the gate's decision, last, in one line
    return lines


def _case_lines(
    judgements: dict[tuple[str, str], CaseJudgement], s: SetRecord, c: CaseRecord, status: Status
) -> list[str]:
    """What the summary says about a case that did not simply pass."""
    lines = []
    if status == Status.ERROR:
        lines.append(f"  ERROR {_case(s, c)}: {error_reason(c)}")
    elif status == Status.FAILED:
        lines.append(
            f"  FAILED {_case(s, c)}: "
            + ", ".join(failing_metrics(c))
            + _judged_note(judgements.get((s.eval_set_id, c.eval_id)))
        )
    elif status == Status.NOT_EVALUATED:
        missing = [
            f"{m.name} not computed: {m.reason or 'no reason given'}"
            for m in c.metrics
            if m.status == Status.NOT_EVALUATED and not m.informational
        ]
        lines.append(
            f"  NOT EVALUATED {_case(s, c)}: " + ("; ".join(missing) or not_evaluated_reason(c))
        )
    elif status == Status.SKIPPED:
        lines.append(f"  SKIPPED {_case(s, c)}: {c.skipped or 'not run'}")
    if c.flaky:
        passed = sum(1 for r in c.runs if run_outcome(r) == Status.PASSED)
        lines.append(f"  FLAKY {_case(s, c)}: passed {passed} of {plural(len(c.runs), 'run')}")
    return lines


def _judged_note(judged: CaseJudgement | None) -> str:
    """Why a failing case does not block: a known failure, or the case's usual noise."""
    if judged is None:
        return ""
    if judged.judgement is Judgement.KNOWN_FAILURE:
        since = f", failing on main since {judged.failing_since}" if judged.failing_since else ""
        return f" — known failure, {judged.history()}{since}"
    if judged.judgement is Judgement.NOT_SIGNIFICANT:
        p = f", p={judged.p_value:.2g}" if judged.p_value is not None else ""
        return f" — not a regression ({judged.not_blocking()}): {judged.history()}{p}"
    return ""


def _comparison_lines(comparison: Comparison) -> list[str]:
    lines = []
    for judged in comparison.cases:
        if judged.judgement is Judgement.REGRESSION:
            lines.append(f"  REGRESSED {judged.describe()}")
        elif judged.judgement is Judgement.ACCEPTED:
            lines.append(f"  ACCEPTED {judged.describe()}")
        else:
            continue
        for change in comparison.changes:
            if (change.set_id, change.case_id) == (judged.set_id, judged.case_id) and (
                change.metric in judged.metrics
            ):
                lines.append(f"      {change.describe()}")
    if comparison.suite is not None and comparison.suite.regressed:
        label = "ACCEPTED SUITE-WIDE DROP" if comparison.suite.accepted else "SUITE-WIDE DROP"
        lines.append(f"  {label}: {comparison.suite.describe()}")
    short = [j.key for j in comparison.short_history]
    if short:
        lines.append(
            f"  SHORT HISTORY (fewer than {comparison.min_history} runs on main: blocks only when "
            "it fails every run, reruns included, where main never failed it): " + ", ".join(short)
        )
    regressed = len(comparison.regressed_cases())
    lines.append(
        f"baseline {comparison.baseline_source or ''} "
        f"({(comparison.baseline_commit or 'unknown')[:12]}, "
        f"{comparison.baseline_date or 'undated'}): "
        f"{plural(regressed, 'regression')}, "
        f"{plural(len(comparison.judged(Judgement.KNOWN_FAILURE)), 'known failure')}, "
        f"{len(comparison.judged(Judgement.IMPROVED))} improved, "
        f"{len(comparison.new_cases)} new, {len(comparison.removed_cases)} removed"
    )
    return lines
