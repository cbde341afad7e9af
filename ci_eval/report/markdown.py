"""Markdown for the job summary and the PR comment, rendered from Jinja templates in a sandbox.

Agent text is made inert before a template sees it: HTML and Markdown syntax escaped, table pipes
and line breaks neutralised, @-mentions broken with a zero-width space; longer text goes into
fenced code blocks whose fence outgrows any backticks inside. Size caps (GitHub: 1 MiB per step
summary, 65,536 characters per comment) are met by dropping the least important rows first —
passing cases, then details, then failing rows beyond the first — and saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ci_eval import __version__, templates
from ci_eval.gate import gate
from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    invocation_diffs,
    not_evaluated_reason,
    shown_run,
    strip_ansi,
)
from ci_eval.results import RunResults

SUMMARY_LIMIT = 1024 * 1024 - 1024  # bytes; GitHub's step summary cap is 1 MiB
COMMENT_LIMIT = 65_536 - 256  # characters; GitHub rejects longer comment bodies
MARKER = "<!-- ci-eval report (id: {id}) -->"
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")


def inline(text: Any, limit: int = 300) -> str:
    """Agent text for a table cell or a sentence: inert and on one line."""
    value = strip_ansi(str(text))
    value = " ".join(value.split())
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _MD_SPECIAL.sub(r"\\\1", value)
    return value.replace("@", "@\u200b")  # no @-mention pings


def code(text: Any) -> str:
    """A fenced block for longer agent text: nothing inside is Markdown or HTML."""
    value = strip_ansi(str(text)).replace("\x00", "").replace("@", "@\u200b")
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{value}\n{fence}"


@dataclass
class Budget:
    """What to leave out, in order, until the text fits."""

    passed_rows: bool = True
    details: int | None = None  # how many failing cases get a <details> block (None: all)
    failing_rows: int | None = None
    omitted: int = 0


_BUDGETS = [
    Budget(),
    Budget(passed_rows=False),
    Budget(passed_rows=False, details=50),
    Budget(passed_rows=False, details=10),
    Budget(passed_rows=False, details=0),
    Budget(passed_rows=False, details=0, failing_rows=200),
    Budget(passed_rows=False, details=0, failing_rows=20),
]


def _context(
    results: RunResults, budget: Budget, marker: str | None, artifact: str | None
) -> dict[str, Any]:
    sets = []
    problems = []
    omitted = 0
    shown_failing = 0
    for s in results.sets:
        metric_names = [m.name for m in s.applied_metrics if not _informational(s, m.name)]
        rows = []
        for case in s.cases:
            important = case.status not in ("PASSED",) or case.flaky
            if not important and not budget.passed_rows:
                omitted += 1
                continue
            if (
                important
                and budget.failing_rows is not None
                and shown_failing >= budget.failing_rows
            ):
                omitted += 1
                continue
            shown_failing += int(important)
            by_name = {m.name: m for m in case.metrics}
            rows.append(
                {
                    "case": case,
                    "id": inline(case.eval_id, 120),
                    "status": case.status,
                    "where": inline(f"{case.file}:{case.line}", 200),
                    "scores": [fmt(by_name[n].score) if n in by_name else "" for n in metric_names],
                }
            )
            if case.status in ("FAILED", "ERROR", "NOT_EVALUATED") and (
                budget.details is None or len(problems) < budget.details
            ):
                problems.append(_problem(s.eval_set_id, case))
        counts = {
            k: sum(1 for c in s.cases if c.status == k)
            for k in ("PASSED", "FAILED", "ERROR", "NOT_EVALUATED", "SKIPPED")
        }
        means = []
        for name in metric_names:
            values = [
                m.score
                for c in s.cases
                for m in c.metrics
                if m.name == name and m.score is not None
            ]
            means.append(fmt(sum(values) / len(values)) if values else "n/a")
        sets.append(
            {
                "id": inline(s.eval_set_id, 160),
                "file": inline(s.file, 200),
                "metrics": [inline(n) for n in metric_names],
                "means": means,
                "rows": rows,
                "counts": counts,
                "total": len(s.cases),
            }
        )
    totals = {
        k: results.count(k) for k in ("PASSED", "FAILED", "ERROR", "NOT_EVALUATED", "SKIPPED")
    }
    flaky = [
        inline(f"{s.eval_set_id}:{c.eval_id}", 200)
        for s in results.sets
        for c in s.cases
        if c.flaky
    ]
    comparison = results.comparison
    baseline = None
    if comparison is not None:
        baseline = {
            "commit": inline((comparison.baseline_commit or "unknown")[:12]),
            "date": inline(comparison.baseline_date or "undated"),
            "regressions": [
                {
                    "id": inline(f"{c.set_id}:{c.case_id}", 200),
                    "metric": inline(c.metric),
                    "before": fmt(c.before),
                    "after": fmt(c.after),
                    "test": inline(f"{c.method}, p={c.p_value:.3g}") if c.method else "",
                }
                for c in comparison.regressions
            ],
            "improvements": [
                {
                    "id": inline(f"{c.set_id}:{c.case_id}", 200),
                    "metric": inline(c.metric),
                    "before": fmt(c.before),
                    "after": fmt(c.after),
                }
                for c in comparison.improvements
            ],
            "new": len(comparison.new_cases),
            "removed": len(comparison.removed_cases),
            "warnings": [inline(w) for w in comparison.warnings],
        }
    passed = gate(results) == 0
    return {
        "verdict": "passed" if passed else "failed",
        "totals": totals,
        "cases": len(results.cases()),
        "sets": sets,
        "problems": problems,
        "flaky": flaky,
        "omitted": omitted,
        "artifact": artifact,
        "marker": marker,
        "agent": inline(results.agent, 300),
        "duration": f"{results.duration_s:.1f}",
        "started": results.started,
        "version": __version__,
        "interrupted": results.interrupted,
        "baseline": baseline,
        "runs": results.settings.get("num_runs", 1),
    }


def _informational(s: Any, name: str) -> bool:
    return any(m.informational for c in s.cases for m in c.metrics if m.name == name)


def _problem(set_id: str, case: Any) -> dict[str, Any]:
    if case.status == "FAILED":
        why = "; ".join(failing_metrics(case))
    elif case.status == "ERROR":
        why = error_reason(case)
    else:
        why = f"not evaluated: {not_evaluated_reason(case)}"
    run = shown_run(case)
    diffs = []
    for d in invocation_diffs(run) if run else []:
        diffs.append(
            {
                "number": d.number,
                "user": inline(d.user, 200),
                "expected_calls": [inline(c, 200) for c in d.expected_calls],
                "actual_calls": None
                if d.actual_calls is None
                else [inline(c, 200) for c in d.actual_calls],
                "calls_differ": d.calls_differ,
                "expected_response": code(d.expected_response[:2000]),
                "actual_response": None
                if d.actual_response is None
                else code(d.actual_response[:2000]),
                "error": None if d.error is None else inline(d.error, 300),
            }
        )
    return {
        "id": inline(f"{set_id}:{case.eval_id}", 200),
        "status": case.status,
        "why": inline(why, 600),
        "where": inline(f"{case.file}:{case.line}", 200),
        "run": run.run if run else None,
        "diffs": diffs,
    }


def _environment(template_dir: Path | None) -> SandboxedEnvironment:
    env = templates.environment(
        template_dir, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True
    )
    env.filters["md"] = inline
    return env


def render(
    results: RunResults,
    template: str,
    limit: int,
    *,
    template_dir: Path | None = None,
    marker: str | None = None,
    artifact: str | None = None,
    size: Any = len,
    problems: list[str] | None = None,
) -> str:
    """A user's template that fails (error, sandbox violation, time limit) is reported in
    ``problems`` (raised when None) as one line naming its file and line, and the built-in
    template renders instead: the report is never lost."""
    try:
        return _render(results, template, limit, template_dir, marker, artifact, size)
    except templates.TemplateProblem as exc:
        if template_dir is None or problems is None:
            raise
        problems.append(f"{exc}; the built-in template was used instead")
        return _render(results, template, limit, None, marker, artifact, size)


def _render(
    results: RunResults,
    template: str,
    limit: int,
    template_dir: Path | None,
    marker: str | None,
    artifact: str | None,
    size: Any,
) -> str:
    env = _environment(template_dir)
    text = ""
    for budget in _BUDGETS:
        text = templates.render(env, template, _context(results, budget, marker, artifact))
        if size(text) <= limit:
            return text
    # still too long (thousands of failing sets?): cut, and say where the rest is
    note = "\n\n… cut to fit; the full report is in the results artifact.\n"
    while size(text) + size(note) > limit:
        text = text[: int(len(text) * 0.9)]
    return text + note


def render_summary(
    results: RunResults,
    template_dir: Path | None = None,
    artifact: str | None = None,
    problems: list[str] | None = None,
) -> str:
    return render(
        results,
        "summary.md.j2",
        SUMMARY_LIMIT,
        template_dir=template_dir,
        artifact=artifact,
        size=lambda t: len(t.encode("utf-8", "surrogatepass")),
        problems=problems,
    )


def render_comment(
    results: RunResults,
    comment_id: str,
    template_dir: Path | None = None,
    artifact: str | None = None,
    problems: list[str] | None = None,
) -> str:
    marker = MARKER.format(id=comment_id)
    text = render(
        results,
        "comment.md.j2",
        COMMENT_LIMIT,
        template_dir=template_dir,
        marker=marker,
        artifact=artifact,
        problems=problems,
    )
    if marker not in text:  # a custom template must keep it, or the comment would duplicate
        text = f"{marker}\n{text}"
    return text
