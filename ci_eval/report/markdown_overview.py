"""The parts of the Markdown reports that no size budget changes: the headline, the totals,
the baseline's comparison, the flaky and skipped cases, the pass-rate chart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ci_eval import __version__
from ci_eval.gate import verdict
from ci_eval.model.comparison import Judgement, MetricChange
from ci_eval.model.status import Status
from ci_eval.report.view import fmt, run_outcome
from ci_eval.results import CaseRecord, RunResults, SetRecord

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


def runs_passed(case: CaseRecord) -> str:
    if len(case.runs) < 2:
        return ""
    passed = sum(1 for r in case.runs if run_outcome(r) == Status.PASSED)
    return f"{passed}/{len(case.runs)}"


def headline(results: RunResults) -> dict[str, Any]:
    """The gate's verdict in one line (its icon, its words), first in every report: the same
    sentence as the terminal's last line and the ``verdict`` step output (``ci_eval.gate``)."""
    decision = verdict(results)
    return {
        "icon": "✅" if decision.passed else "❌",
        "text": f"ci-eval: {decision.line}",
        "passed": decision.passed,
        "exit_code": decision.exit_code,
    }


def chart(sets: list[SetRecord]) -> Markup | None:
    """A bar chart of pass rates, when there are enough sets for it to beat a table."""
    if len(sets) < 4:
        return None
    labels, values = [], []
    for s in sets:
        evaluated = [c for c in s.cases if c.status in (Status.PASSED, Status.FAILED, Status.ERROR)]
        passed = sum(1 for c in evaluated if c.status == Status.PASSED)
        label = re.sub(r"[^A-Za-z0-9_./ -]", "_", Path(title(s)).name)[:30] or "set"
        labels.append(f'"{label}"')
        values.append(str(round(100 * passed / len(evaluated))) if evaluated else "0")
    return Markup(
        "```mermaid\nxychart-beta\n"
        '    title "Pass rate per eval set (%)"\n'
        f"    x-axis [{', '.join(labels)}]\n"
        '    y-axis "passed %" 0 --> 100\n'
        f"    bar [{', '.join(values)}]\n```"
    )


def fixed_context(results: RunResults, marker: str | None, artifact: str | None) -> dict[str, Any]:
    """The template's variables that no budget changes."""
    comparison = results.comparison
    baseline = None
    if comparison is not None:
        titles = {s.eval_set_id: title(s) for s in results.sets}

        def change(c: MetricChange) -> dict[str, str]:
            return {
                "set": titles.get(c.set_id, c.set_id),
                "case": c.case_id,
                "metric": c.metric,
                "before": fmt(c.before),
                "after": fmt(c.after),
                "delta": delta(c),
            }

        regressed = comparison.regressed_cases()
        regressions = [
            change(c)
            | {"test": c.history() + (f", p={c.p_value:.2g}" if c.p_value is not None else "")}
            for c in comparison.regressions
            if (c.set_id, c.case_id) in regressed
        ]

        def judged(kind: Judgement) -> list[dict[str, str]]:
            return [{"case": j.key, "why": j.describe()} for j in comparison.judged(kind)]

        baseline = {
            "commit": (comparison.baseline_commit or "unknown")[:12],
            "date": comparison.baseline_date or "undated",
            "regressions": regressions,
            "tested": any(r["test"] for r in regressions),
            "improvements": [change(c) for c in comparison.improvements],
            "new": len(comparison.new_cases),
            "removed": len(comparison.removed_cases),
            "warnings": list(comparison.warnings),
            # the history gate (ci_eval.compare): counted in cases, apart from regressions
            "regressed_cases": len(comparison.regressed_cases()),
            "known_failures": judged(Judgement.KNOWN_FAILURE),
            "not_significant": judged(Judgement.NOT_SIGNIFICANT),
            "accepted": judged(Judgement.ACCEPTED),
            "suite": "; ".join(
                filter(None, [comparison.suite.describe(), comparison.suite.caveat()])
            )
            if comparison.suite_regressed
            else None,
            "short_history": [j.key for j in comparison.short_history],
            "min_history": comparison.min_history,
        }
    totals = dict.fromkeys(ORDER, 0)
    flaky, skipped = [], []
    for s, c in results.cases():  # one pass: at 20,000 cases each pass costs
        status = c.status
        if status in totals:
            totals[status] += 1
        if c.flaky:
            flaky.append({"set": title(s), "case": c.eval_id, "runs_passed": runs_passed(c)})
        if status == Status.SKIPPED:
            skipped.append({"set": title(s), "case": c.eval_id, "reason": c.skipped or "not run"})
    fail_on = set(results.fail_on)
    head = headline(results)  # the gate's decision, once: it looks at every case
    return {
        "headline": head,
        "verdict": "passed" if head["exit_code"] == 0 else "failed",
        "fail_on": sorted(fail_on),
        "failures_block": "failure" in fail_on,
        "totals": totals,
        "cases": len(results.cases()),
        "baseline": baseline,
        "flaky": flaky,
        "skipped": skipped,
        "chart": chart(results.sets),
        "artifact": artifact,
        "marker": Markup(marker) if marker else "",
        "agent": results.agent,
        "duration": f"{results.duration_s:.1f}",
        "started": results.started,
        "version": __version__,
        "interrupted": results.interrupted,
        "runs": results.settings.get("num_runs", 1),
    }
