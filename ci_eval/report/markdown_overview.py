"""The parts of the Markdown reports that no size budget changes: the verdict (its line, what
blocks, what did not, what improved), the per-set table and the pass-rate chart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ci_eval import __version__
from ci_eval.gate.items import (
    IMPROVED_ICON,
    NOUNS,
    PASSED_ICON,
    QUIET_ICON,
    SKIPPED_ICON,
    Item,
    clip,
    legend,
)
from ci_eval.gate.set_lines import SetLine
from ci_eval.gate.verdict import Verdict
from ci_eval.model.comparison import MetricChange
from ci_eval.model.describe import fmt, run_outcome, trajectory_line
from ci_eval.model.rates import case_rate
from ci_eval.model.status import Status
from ci_eval.report.usage_view import usage_view
from ci_eval.results.file import CaseRecord, RunResults, SetRecord

ORDER = {
    Status.FAILED: 0,
    Status.ERROR: 1,
    Status.NOT_EVALUATED: 2,
    Status.COMPLETED: 3,
    Status.PASSED: 4,
    Status.SKIPPED: 5,
}


def delta(change: MetricChange | None) -> str:
    d = change.delta if change is not None else None
    if d is None or abs(d) < 5e-4:
        return ""
    return f"{'▲' if d > 0 else '▼'}{fmt(abs(d))}"


def title(s: SetRecord) -> str:
    """A set's name once: legacy sets have no id but their path."""
    return s.eval_set_id or s.file


def _passed_of(case: CaseRecord) -> tuple[int, int] | None:
    """(runs passed, runs) of a case of several runs; None at one run (its status says it)."""
    if len(case.runs) < 2:
        return None
    return sum(1 for r in case.runs if run_outcome(r) == Status.PASSED), len(case.runs)


def runs_passed(case: CaseRecord) -> str:
    counted = _passed_of(case)
    return "" if counted is None else f"{counted[0]}/{counted[1]}"


def case_rate_text(case: CaseRecord) -> str:
    """``2/3 · 67% [21–94]``: a case's runs passed, its rate and interval; empty at one run."""
    counted = _passed_of(case)
    if counted is None:
        return ""
    return f"{counted[0]}/{counted[1]} · {case_rate(*counted).text()}"


def chart(sets: list[SetLine]) -> Markup | None:
    """A bar chart of the runs' pass rates, when there are enough sets for it to beat a table;
    a set with no run (all skipped) has no bar rather than a bar at 0 %."""
    measured = [s for s in sets if s.rate is not None]
    if len(measured) < 4:
        return None
    labels, values = [], []
    for s in measured:
        label = re.sub(r"[^A-Za-z0-9_./ -]", "_", Path(s.title).name)[:30] or "set"
        labels.append(f'"{label}"')
        values.append(str(round(100 * (s.rate or 0.0))))
    return Markup(
        "```mermaid\nxychart-beta\n"
        '    title "Pass rate per eval set (%)"\n'
        f"    x-axis [{', '.join(labels)}]\n"
        '    y-axis "passed %" 0 --> 100\n'
        f"    bar [{', '.join(values)}]\n```"
    )


def item_view(i: Item) -> dict[str, Any]:
    return {
        "icon": i.icon,
        "kind": str(i.kind),
        "plural": NOUNS[i.kind][1],
        "blocking": i.blocking,
        "set": i.set_title,
        "case": i.case_id,
        "key": i.key,
        "where": f"{i.file}:{i.line}" if i.line else i.file,
        "change": i.change,
        "scores": i.scores,
        "judged": i.judged,
        "why": i.why,
        # the comment's shorter forms: the test's number, the why
        "test": i.test,
        "short": clip(i.why, 160),
        # quarantine.toml's, when one names the case: "quarantine expired on 2027-01-31 (…)"
        "quarantine": _held(i),
    }


def _held(i: Item) -> str:
    q = i.quarantine
    if q is None:
        return ""
    if q.expired:
        return f"quarantine expired on {q.until} ({q.owner})"
    return f"quarantined until {q.until} ({q.owner}): {q.reason}"


def groups(items: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Items of one kind together (they come sorted by kind): each group shows its first ten
    and folds the rest, so no kind hides behind another's long list."""
    out: list[list[dict[str, Any]]] = []
    for item in items:
        if out and out[-1][0]["kind"] == item["kind"]:
            out[-1].append(item)
        else:
            out.append([item])
    return out


def fixed_context(results: RunResults, decision: Verdict, marker: str | None) -> dict[str, Any]:
    """The template's variables that no budget changes."""
    comparison = results.comparison
    baseline = None
    if comparison is not None:
        baseline = {
            "commit": (comparison.baseline_commit or "unknown")[:12],
            "date": comparison.baseline_date or "undated",
            "source": comparison.baseline_source or "",
            "warnings": list(comparison.warnings),
            "min_history": comparison.min_history,
        }
    totals = dict.fromkeys(ORDER, 0)
    for _, c in results.cases():  # one pass: on a large run each pass costs
        if c.status in totals:
            totals[c.status] += 1
    fail_on = set(results.fail_on)
    set_table = [
        {
            "title": s.title,
            "cases": s.cases,
            "passed": s.passed,
            "blocking": s.blocking,
            "not_blocking": s.not_blocking,
            "skipped": s.skipped,
            "rate": s.rate_text(),
            "delta": s.delta_text(),
        }
        for s in decision.sets
    ]
    return {
        "decision": {
            "icon": decision.icon,
            "line": decision.line,
            "passed": decision.passed,
            "exit_code": decision.exit_code,
            "legend": legend(decision.icons()),
            "blocking_tally": decision.tally(True),
            "not_blocking_tally": decision.tally(False),
            "power": decision.power.removeprefix("what this run could detect: "),
        },
        # ci-eval 0.1's name for the decision, for templates written against it
        "headline": {
            "icon": decision.icon,
            "text": f"ci-eval: {decision.line}",
            "passed": decision.passed,
            "exit_code": decision.exit_code,
        },
        "verdict": "passed" if decision.passed else "failed",
        "icons": {"passed": PASSED_ICON, "quiet": QUIET_ICON, "skipped": SKIPPED_ICON},
        "improved_icon": IMPROVED_ICON,
        "improved": [item_view(i) for i in decision.improved],
        # the failures quarantine.toml held: never blocking, listed apart
        "quarantined": [item_view(i) for i in decision.quarantined],
        # "set › case", as the lists write a case
        "new": [key.replace(":", " › ", 1) for key in decision.new],
        "removed": [key.replace(":", " › ", 1) for key in decision.removed],
        "set_table": set_table,
        "changed": decision.bar_changes,
        "said": decision.applied_changes,
        "fail_on": sorted(fail_on),
        "failures_block": "failure" in fail_on,
        "totals": totals,
        "cases": len(results.cases()),
        "baseline": baseline,
        "chart": chart(decision.sets),
        "marker": Markup(marker) if marker else "",
        "agent": results.agent,
        "duration": f"{results.duration_s:.1f}",
        "started": results.started,
        "version": __version__,
        "interrupted": results.interrupted,
        "runs": results.settings.num_runs or 1,
        "usage": usage_view(results),  # tokens, calls, latency, cost (None: not measured)
        # --otlp: where the turns' tool calls came from (None: the replies, as always)
        "trajectories": (
            trajectory_line(results.settings.trajectories)
            if results.settings.trajectories is not None
            else None
        ),
    }
