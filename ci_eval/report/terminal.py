"""The short human summary ci-eval prints: the baseline; how to give a user simulator, once,
when cases were skipped for want of one; per eval set its counts, metric means and each listed
case (with the run and turn); then, set apart, what blocks and what did not
(the verdict's lists), what changed against main, the totals and the verdict line.
Pure: the CLI prints the lines, and makes them inert (``ci_eval.text.inert``) as it does."""

from __future__ import annotations

from dataclasses import replace

from ci_eval.gate.items import WHY_LIMIT, Item, Kind, clip, outcomes
from ci_eval.gate.verdict import Verdict, verdict
from ci_eval.model.describe import (
    by_reason,
    error_reason,
    failing_metrics,
    fmt,
    not_evaluated_reason,
)
from ci_eval.model.status import Status
from ci_eval.report.usage_view import usage_view
from ci_eval.results.file import CaseRecord, RunResults, SetRecord
from ci_eval.simulate import NEEDS_SIMULATOR, NO_SIMULATOR, SIMULATOR_HOW
from ci_eval.text.plural import plural

COUNTED = (Status.PASSED, Status.FAILED, Status.ERROR, Status.NOT_EVALUATED, Status.SKIPPED)


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


def said_above(results: RunResults) -> tuple[list[str], dict[str, str]]:
    """The line said once above the sets for the cases skipped for want of a user simulator
    (an Orchestrate repository's every case), how to give one; and, by case key, their reasons
    with that part left to it. JUnit and the results file keep each reason whole."""
    short = {
        f"{s.eval_set_id}:{c.eval_id}": clip(
            c.skipped.replace(NO_SIMULATOR, f"{NEEDS_SIMULATOR} (see above)"), WHY_LIMIT
        )
        for s in results.sets
        for c in s.cases
        if c.status == Status.SKIPPED and c.skipped and NO_SIMULATOR in c.skipped
    }
    if not short:
        return [], {}
    n = len(short)
    need, were = ("needs", "was") if n == 1 else ("need", "were")
    return [
        f"{plural(n, 'case')} {need} a user simulator and {were} skipped: {SIMULATOR_HOW}"
    ], short


def _shortened(item: Item, short: dict[str, str]) -> Item:
    return replace(item, said=short[item.key]) if item.key in short else item


def summary_lines(results: RunResults) -> list[str]:
    """The baseline first; per eval set its counts and each listed case; then, set apart, what
    blocks and what did not; then what changed against main, the totals and the verdict."""
    decision = verdict(results)
    lines = []
    comparison = results.comparison
    if comparison is not None:
        lines.append(
            f"baseline {comparison.baseline_source or ''} "
            f"({(comparison.baseline_commit or 'unknown')[:12]}, "
            f"{comparison.baseline_date or 'undated'}): main's history of "
            f"{plural(len(comparison.cases), 'case')} this run has"
        )
    above, short = said_above(results)
    lines += above
    items = decision.by_case()  # a case's own item before what it spent
    totals = dict.fromkeys(COUNTED, 0)
    for s, line in zip(results.sets, decision.sets, strict=True):
        counts = dict.fromkeys(COUNTED, 0)
        scores: dict[str, list[float]] = {}  # per metric, its scores in case order
        case_lines = []
        for c in s.cases:  # one pass: on a large run each pass over them costs
            status = c.status
            if status in counts:
                counts[status] += 1
            for m in c.metrics:
                if m.score is not None and not m.informational:
                    scores.setdefault(m.name, []).append(m.score)
            item = items.get((s.eval_set_id, c.eval_id))
            if item is not None:
                case_lines.append(_case_line(s, c, _shortened(item, short)))
        means = [
            f"{spec.name} {fmt(sum(values) / len(values))}"
            for spec in s.applied_metrics
            if (values := scores.get(spec.name))
        ]
        rate = ""
        if line.runs > 1:  # one run: the case's status says it
            change = line.delta_text()
            rate = f" — pass rate {line.rate_text()}" + (f", vs main {change}" if change else "")
        lines.append(
            f"{_name(s)}: {_counts(counts)}" + (f" — {'; '.join(means)}" if means else "") + rate
        )
        lines += case_lines
        for status, n in counts.items():
            totals[status] += n
    lines += _verdict_block(decision, short)
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
    usage = usage_view(results)
    if usage is not None and usage["tokens"]:  # latency alone: the summary says it
        lines.append(f"usage: {usage['line']}")
    if decision.power:
        lines.append(decision.power)
    lines.append(decision.line)  # the gate's decision, last, in one line
    return lines


# kinds that block when fail_on names them: said when they did not
BLOCKING_KINDS = (Kind.REGRESSION, Kind.FAILURE, Kind.ERROR, Kind.NOT_EVALUATED, Kind.SUITE_DROP)


def _case_line(s: SetRecord, c: CaseRecord, item: Item) -> str:
    """A listed case in its set's block: what it is, where, and why."""
    blocks = " (not blocking)" if not item.blocking and item.kind in BLOCKING_KINDS else ""
    if item.quarantine is not None:  # quarantine.toml's: held, or no longer
        q = item.quarantine
        blocks = (
            f" (quarantine expired on {q.until})"
            if q.expired
            else f" (quarantined until {q.until})"
        )
    if item.kind is Kind.FAILURE or item.kind is Kind.REGRESSION:
        # the item's own why (a diff of the turns) only when no metric says it: it is dear
        why = ", ".join(failing_metrics(c)) or item.why
        runs = outcomes(c)
        if True in runs:  # failed as a whole, passed some runs
            why += f" (passed {runs.count(True)} of {plural(len(runs), 'run')})"
    elif item.kind is Kind.NOT_EVALUATED:
        missing = by_reason(
            [
                (m.name, m.reason or "no reason given")
                for m in c.metrics
                if m.status == Status.NOT_EVALUATED and not m.informational
            ],
            joint=" not computed: ",
        )
        why = "; ".join(missing) or not_evaluated_reason(c)
    elif item.kind is Kind.FLAKY:
        why = item.change
    elif item.kind is Kind.ERROR:
        why = error_reason(c)
    elif item.kind in (Kind.KNOWN_FAILURE, Kind.NOISE, Kind.UNCONFIRMED_FAILURE, Kind.ACCEPTED):
        why = ", ".join(failing_metrics(c)) + f" — {item.change}"
    else:
        why = item.why
    return f"  {item.label}{blocks} {_case(s, c)}: {why}"


def _verdict_block(decision: Verdict, short: dict[str, str]) -> list[str]:
    """What blocks and what did not, set apart from the last set, then what changed;
    ``short``: by case key, a skip reason said in part above."""
    lines = [""]
    if decision.bar_changes:
        lines.append("CHANGED BY THIS PULL REQUEST, NOT APPLIED (the merge base's values hold):")
        lines += [f"  {c}" for c in decision.bar_changes]
    if decision.applied_changes:
        lines.append("CHANGED BY THIS PULL REQUEST (applied):")
        lines += [f"  {c}" for c in decision.applied_changes]
    for blocking, items in ((True, decision.blocking), (False, decision.not_blocking)):
        if not items:
            continue
        head = "BLOCKING" if blocking else "NOT BLOCKING"
        lines.append(f"{head}: {decision.tally(blocking)}")
        for item in items:
            what = f" {item.key}" if item.key else ""
            lines.append(f"  {item.label}{what}: {_shortened(item, short).text()}")
    if decision.quarantined:
        lines.append(f"QUARANTINED ({len(decision.quarantined)}, not blocking; quarantine.toml):")
        for item in decision.quarantined:
            q = item.quarantine
            held = f" — {q.terms()}: {q.reason}" if q is not None else ""
            lines.append(f"  {item.label} {item.key}: {_shortened(item, short).text()}{held}")
    if decision.improved:
        lines.append(f"IMPROVED ({len(decision.improved)}):")
        lines += [f"  {i.key}: {i.text()}" for i in decision.improved]
    if decision.new:
        lines.append(f"NEW ({len(decision.new)}, no history on main): " + ", ".join(decision.new))
    if decision.removed:
        lines.append(f"REMOVAL ACCEPTED ({len(decision.removed)}): " + ", ".join(decision.removed))
    return lines if len(lines) > 1 else []
