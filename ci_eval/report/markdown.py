"""Markdown for the job summary and the PR comment, rendered from Jinja templates in a sandbox.

Agent text is escaped for the context it lands in, at the moment it is printed:

- every ``{{ value }}`` is escaped for Markdown inline text by default (the environment's
  ``finalize``): backslash escapes for the few characters that start Markdown syntax, HTML
  entities for ``<``, ``>`` and ``&``, table pipes escaped, line breaks folded;
- ``{{ value | html }}`` for HTML blocks such as ``<details><summary>``, where Markdown is not
  parsed and a backslash would print literally: HTML escaping only;
- ``{{ value | code }}`` for a fenced block whose fence outgrows any backticks inside.

Everywhere, ANSI and control characters are gone, CI command prefixes are broken (see
``ci_eval.inert``) and ``@`` is followed by a zero-width space so nobody is pinged.

Size caps (GitHub: 1 MiB per step summary, 65,536 characters per comment) are met by leaving
out, in order, passing rows, then the details of failing cases, then failing rows — each as
little as needed (a binary search on how many to keep) — and the report says what it left out
and where to find it.
"""

from __future__ import annotations

import html as html_lib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from ci_eval import __version__, templates
from ci_eval.gate import gate, verdict
from ci_eval.inert import ZWSP, inert, inert_line
from ci_eval.model.status import Status
from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    invocation_diffs,
    not_evaluated_reason,
    run_outcome,
    shown_run,
)
from ci_eval.results import CaseRecord, RunResults, SetRecord

SUMMARY_LIMIT = 1024 * 1024 - 1024  # bytes; GitHub's step summary cap is 1 MiB
COMMENT_LIMIT = 65_536 - 256  # characters; GitHub rejects longer comment bodies
MARKER = "<!-- ci-eval report (id: {id}) -->"
CODE_LIMIT = 2000  # characters of one response shown in a details block

ICONS = {
    Status.PASSED: "✅",
    Status.FAILED: "❌",
    Status.ERROR: "⚠️",
    Status.NOT_EVALUATED: "⚠️",
    Status.SKIPPED: "⏭",
    Status.COMPLETED: "⚠️",
}
WORDS = {
    Status.PASSED: "passed",
    Status.FAILED: "failed",
    Status.ERROR: "error",
    Status.NOT_EVALUATED: "not evaluated",
    Status.SKIPPED: "skipped",
    Status.COMPLETED: "not scored",
}
ORDER = {
    Status.FAILED: 0,
    Status.ERROR: 1,
    Status.NOT_EVALUATED: 2,
    Status.COMPLETED: 3,
    Status.PASSED: 4,
    Status.SKIPPED: 5,
}

# Markdown inline: what could start syntax. `_` only when it can open or close emphasis
# (GFM never does that inside a word), so identifiers like weather_basic stay clean.
_MD_ESCAPE = re.compile(r"([\\`*\[\]|~$])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_BLOCK_START = re.compile(r"^(\s*)([#>+=-]|\d+(?=[.)](?:\s|$)))")


PROBLEMS = (Status.FAILED, Status.ERROR, Status.NOT_EVALUATED, Status.COMPLETED)


def _failing_row(case: CaseRecord) -> bool:
    """Rows a reviewer must see: anything but a clean pass (skipped cases count as passing)."""
    return case.status not in (Status.PASSED, Status.SKIPPED) or (
        case.status == Status.PASSED and case.flaky
    )


def _no_mentions(text: str) -> str:
    return text.replace("@", "@" + ZWSP)


def md(text: Any) -> Markup:
    """Text for Markdown inline context (table cells, headings, list items): one line."""
    value = inert_line(text)
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _MD_ESCAPE.sub(lambda m: "\\" + m.group(0), value)
    value = _BLOCK_START.sub(r"\1\\\2", value)
    return Markup(_no_mentions(value))


def html(text: Any) -> Markup:
    """Text inside an HTML block (``<summary>``): HTML escaping only, on one line."""
    return Markup(_no_mentions(html_lib.escape(inert_line(text), quote=True)))


def code(text: Any) -> Markup:
    """A fenced block: nothing inside is Markdown or HTML."""
    value = _no_mentions(inert(text))
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"{fence}text\n{value}\n{fence}")


def _finalize(value: Any) -> Any:
    """Every ``{{ expression }}``: Markdown-inline escaping unless a filter already escaped it."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return str(value)
    return md(value)


@dataclass
class Clipper:
    """Shortens long agent text and counts what it shortened, for the report's notes."""

    texts: int = 0

    def __call__(self, text: str, limit: int) -> str:
        if len(text) <= limit:
            return text
        self.texts += 1
        return f"{text[: limit - 1]}… (+{len(text) - limit + 1} characters)"

    def block(self, text: str, limit: int = CODE_LIMIT) -> str:
        if len(text) <= limit:
            return text
        self.texts += 1
        return f"{text[:limit]}\n… {len(text) - limit} more characters"


@dataclass
class Budget:
    """How much of each kind of row to keep (None: all)."""

    passed_rows: int | None = None
    details: int | None = None
    failing_rows: int | None = None


@dataclass
class Counts:
    passed_rows: int = 0
    details: int = 0
    failing_rows: int = 0
    notes: list[str] = field(default_factory=list)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _delta(change: Any) -> str:
    d = change.delta if change is not None else None
    if d is None or abs(d) < 5e-4:
        return ""
    return f"{'▲' if d > 0 else '▼'}{fmt(abs(d))}"


def _title(s: SetRecord) -> str:
    """A set's name once: legacy sets have no id but their path."""
    return s.eval_set_id or s.file


def _runs_passed(case: CaseRecord) -> str:
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


def _changes(results: RunResults) -> dict[tuple[str, str, str], Any]:
    if results.comparison is None:
        return {}
    return {(c.set_id, c.case_id, c.metric): c for c in results.comparison.changes}


def _problem(s: SetRecord, case: CaseRecord, clip: Clipper) -> dict[str, Any]:
    if case.status == Status.FAILED:
        why = "; ".join(failing_metrics(case))
    elif case.status == Status.ERROR:
        why = error_reason(case)
    else:
        why = f"not evaluated: {not_evaluated_reason(case)}"
    run = shown_run(case)
    diffs = []
    for d in invocation_diffs(run) if run else []:
        diffs.append(
            {
                "number": d.number,
                "user": clip(d.user, 200),
                "expected_calls": [clip(c, 200) for c in d.expected_calls],
                "actual_calls": None
                if d.actual_calls is None
                else [clip(c, 200) for c in d.actual_calls],
                "calls_differ": d.calls_differ,
                "expected_response": clip.block(d.expected_response),
                "actual_response": None
                if d.actual_response is None
                else clip.block(d.actual_response),
                "error": None if d.error is None else clip(d.error, 300),
            }
        )
    simulated = None
    if run is not None and run.simulation:
        sim = run.simulation
        simulated = clip(
            f"user turns written by {sim.get('kind', 'a simulated user')}"
            + (f" ({sim['model']})" if sim.get("model") else "")
            + f", {sim.get('user_turns', len(run.invocations))} turns, "
            f"ended: {sim.get('ended', 'replayed')}",
            300,
        )
    return {
        "set": clip(_title(s), 160),
        "case": clip(case.eval_id, 120),
        "status": case.status,
        "simulated": simulated,
        "icon": ICONS.get(case.status, "⚠️"),
        "word": WORDS.get(case.status, case.status.lower()),
        "why": clip(why, 600),
        "where": clip(f"{case.file}:{case.line}" if case.line else case.file, 200),
        "run": run.run if run else None,
        "runs": len(case.runs),
        "runs_passed": _runs_passed(case),
        "diffs": diffs,
    }


def _row(
    s: SetRecord, case: CaseRecord, columns: list[str], changes: dict[tuple[str, str, str], Any]
) -> tuple[dict[str, Any], int]:
    clip = Clipper()
    by_name = {m.name: m for m in case.metrics}
    row = {
        # a legacy file is one case named by its path: the heading already says it
        "id": clip(Path(case.eval_id).name if case.eval_id == s.file else case.eval_id, 120),
        "status": case.status,
        "icon": ICONS.get(case.status, "⚠️"),
        "word": WORDS.get(case.status, case.status.lower()),
        "flaky": case.flaky,
        "line": case.line,
        "runs_passed": _runs_passed(case),
        "scores": [
            {
                "value": fmt(by_name[n].score) if n in by_name else "",
                "delta": _delta(changes.get((s.eval_set_id, case.eval_id, n))),
            }
            for n in columns
        ],
    }
    return row, clip.texts


def _set(
    s: SetRecord,
    changes: dict[tuple[str, str, str], Any],
    budget: Budget,
    counts: Counts,
    clip: Clipper,
    cache: dict[Any, Any],
) -> dict[str, Any]:
    key = ("set", id(s))
    if key not in cache:
        cache[key] = _set_parts(s)
    columns, ordered, fixed = cache[key]
    rows = []
    for case in ordered:
        if _failing_row(case):
            if budget.failing_rows is not None and counts.failing_rows >= budget.failing_rows:
                counts.notes.append("failing")
                continue
            counts.failing_rows += 1
        else:
            if budget.passed_rows is not None and counts.passed_rows >= budget.passed_rows:
                counts.notes.append("passing")
                continue
            counts.passed_rows += 1
        key = ("row", id(case))
        if key not in cache:
            cache[key] = _row(s, case, columns, changes)
        row, clipped = cache[key]
        clip.texts += clipped
        rows.append(row)
    return {"title": clip(_title(s), 160), **fixed, "rows": rows}


def _set_parts(s: SetRecord) -> tuple[list[str], list[CaseRecord], dict[str, Any]]:
    """What a set's table shows whatever the budget: its columns, its cases in table order and
    its counts and means."""
    informational = {m.name for c in s.cases for m in c.metrics if m.informational}
    names = [m.name for m in s.applied_metrics if m.name not in informational]
    scored = {m.name for c in s.cases for m in c.metrics if m.score is not None}
    columns = [n for n in names if n in scored]  # no column of n/a when nothing was scored
    multi = any(len(c.runs) > 1 for c in s.cases)
    ordered = sorted(s.cases, key=lambda c: (ORDER.get(c.status, 3), not c.flaky))
    status_counts = {k: sum(1 for c in s.cases if c.status == k) for k in ORDER}
    # errored cases did not pass; skipped and not-evaluated ones say nothing either way
    evaluated = (
        status_counts[Status.PASSED] + status_counts[Status.FAILED] + status_counts[Status.ERROR]
    )
    means = []
    for name in columns:
        values = [
            m.score for c in s.cases for m in c.metrics if m.name == name and m.score is not None
        ]
        means.append({"name": name, "mean": fmt(sum(values) / len(values))})
    return (
        columns,
        ordered,
        {
            "id": s.eval_set_id,
            "file": s.file,
            "legacy": s.eval_set_id in ("", s.file),
            "columns": columns,
            "means": means,
            "counts": status_counts,
            "total": len(s.cases),
            "pass_rate": f"{status_counts[Status.PASSED] / evaluated:.0%}" if evaluated else "n/a",
            "no_scores": not columns and bool(names),
            "repeated": multi,
            "dialect": s.dialect,
        },
    )


def _chart(sets: list[SetRecord]) -> Markup | None:
    """A bar chart of pass rates, when there are enough sets for it to beat a table."""
    if len(sets) < 4:
        return None
    labels, values = [], []
    for s in sets:
        evaluated = [c for c in s.cases if c.status in (Status.PASSED, Status.FAILED, Status.ERROR)]
        passed = sum(1 for c in evaluated if c.status == Status.PASSED)
        label = re.sub(r"[^A-Za-z0-9_./ -]", "_", Path(_title(s)).name)[:30] or "set"
        labels.append(f'"{label}"')
        values.append(str(round(100 * passed / len(evaluated))) if evaluated else "0")
    return Markup(
        "```mermaid\nxychart-beta\n"
        '    title "Pass rate per eval set (%)"\n'
        f"    x-axis [{', '.join(labels)}]\n"
        '    y-axis "passed %" 0 --> 100\n'
        f"    bar [{', '.join(values)}]\n```"
    )


def _context(
    results: RunResults,
    budget: Budget,
    marker: str | None,
    artifact: str | None,
    cache: dict[Any, Any],
) -> tuple[dict[str, Any], Counts, Clipper]:
    """The template's variables under ``budget``; ``cache`` keeps each case's row and details
    across the renders that look for the largest budget that fits."""
    if "context" not in cache:
        changes = _changes(results)
        all_problems = [(s, c) for s, c in results.cases() if c.status in PROBLEMS]
        all_problems.sort(key=lambda sc: ORDER.get(sc[1].status, 3))
        cache["context"] = changes, all_problems, _fixed_context(results, marker, artifact)
    changes, all_problems, fixed = cache["context"]
    clip = Clipper()
    counts = Counts()
    sets = [_set(s, changes, budget, counts, clip, cache) for s in results.sets]
    regressed = results.comparison.regressed_cases() if results.comparison else set()
    problems = []
    for s, c in all_problems:
        if budget.details is not None and len(problems) >= budget.details:
            counts.notes.append("details")
            continue
        key = ("problem", id(c))
        if key not in cache:
            one = Clipper()
            problem = _problem(s, c, one)
            problem["regressed"] = (s.eval_set_id, c.eval_id) in regressed
            cache[key] = (problem, one.texts)
        problem, clipped = cache[key]
        clip.texts += clipped
        problems.append(problem)
    context = {
        **fixed,
        "sets": sets,
        "problems": problems,
        "problems_total": len(all_problems),
        "notes": [],  # filled by the caller, once it knows what this budget left out
    }
    return context, counts, clip


def _fixed_context(results: RunResults, marker: str | None, artifact: str | None) -> dict[str, Any]:
    """The template's variables that no budget changes."""
    comparison = results.comparison
    baseline = None
    if comparison is not None:
        titles = {s.eval_set_id: _title(s) for s in results.sets}
        regressions = [
            {
                "set": titles.get(c.set_id, c.set_id),
                "case": c.case_id,
                "metric": c.metric,
                "before": fmt(c.before),
                "after": fmt(c.after),
                "delta": _delta(c),
                "test": c.history() + (f", p={c.p_value:.2g}" if c.p_value is not None else ""),
            }
            for c in comparison.regressions
            if (c.set_id, c.case_id) in comparison.regressed_cases()
        ]
        from ci_eval.model.comparison import Judgement

        def judged(kind: Judgement) -> list[dict[str, str]]:
            return [{"case": j.key, "why": j.describe()} for j in comparison.judged(kind)]

        baseline = {
            "commit": (comparison.baseline_commit or "unknown")[:12],
            "date": comparison.baseline_date or "undated",
            "regressions": regressions,
            "tested": any(r["test"] for r in regressions),
            "improvements": [
                {
                    "set": titles.get(c.set_id, c.set_id),
                    "case": c.case_id,
                    "metric": c.metric,
                    "before": fmt(c.before),
                    "after": fmt(c.after),
                    "delta": _delta(c),
                }
                for c in comparison.improvements
            ],
            "new": len(comparison.new_cases),
            "removed": len(comparison.removed_cases),
            "warnings": list(comparison.warnings),
            # the history gate (ci_eval.compare): counted in cases, apart from regressions
            "regressed_cases": len(comparison.regressed_cases()),
            "known_failures": judged(Judgement.KNOWN_FAILURE),
            "not_significant": judged(Judgement.NOT_SIGNIFICANT),
            "accepted": judged(Judgement.ACCEPTED),
            "suite": comparison.suite.describe() if comparison.suite_regressed else None,
            "short_history": [j.key for j in comparison.short_history],
            "min_history": comparison.min_history,
        }
    totals = {k: results.count(k) for k in ORDER}
    flaky = [
        {"set": _title(s), "case": c.eval_id, "runs_passed": _runs_passed(c)}
        for s, c in results.cases()
        if c.flaky
    ]
    skipped = [
        {"set": _title(s), "case": c.eval_id, "reason": c.skipped or "not run"}
        for s, c in results.cases()
        if c.status == Status.SKIPPED
    ]
    fail_on = set(results.fail_on)
    return {
        "headline": headline(results),
        "verdict": "passed" if gate(results) == 0 else "failed",
        "fail_on": sorted(fail_on),
        "failures_block": "failure" in fail_on,
        "totals": totals,
        "cases": len(results.cases()),
        "baseline": baseline,
        "flaky": flaky,
        "skipped": skipped,
        "chart": _chart(results.sets),
        "artifact": artifact,
        "marker": Markup(marker) if marker else "",
        "agent": results.agent,
        "duration": f"{results.duration_s:.1f}",
        "started": results.started,
        "version": __version__,
        "interrupted": results.interrupted,
        "runs": results.settings.get("num_runs", 1),
    }


def _notes(counts: Counts, clip: Clipper, artifact: str | None) -> list[str]:
    where = (
        f"the results file {artifact}"
        if artifact
        else "the results file (write one with `--results FILE`)"
    )
    notes = []
    left = {k: counts.notes.count(k) for k in ("passing", "failing", "details")}
    if left["passing"]:
        notes.append(f"{_plural(left['passing'], 'passing case')} not listed")
    if left["failing"]:
        notes.append(f"{_plural(left['failing'], 'failing case')} not listed")
    if left["details"]:
        notes.append(
            f"{_plural(left['details'], 'more failed or errored case')} not shown in detail"
        )
    out = []
    if notes:
        out.append(f"To fit GitHub's size limit: {'; '.join(notes)}. Everything is in {where}.")
    if clip.texts:
        out.append(
            f"{_plural(clip.texts, 'long text')} shortened (marked with their length); "
            f"{where} has them in full."
        )
    return out


def _environment(template_dir: Path | None) -> SandboxedEnvironment:
    env = templates.environment(
        template_dir,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md
    env.filters["html"] = html
    env.filters["code"] = code
    env.globals["n"] = _plural  # n(2, "error") → "2 errors"
    return env


def _largest(
    size_at: Callable[[int], int], limit: int, low: int, low_size: int, high: int, high_size: int
) -> tuple[int, int]:
    """The largest n in [low, high) with size_at(n) <= limit and its size, given size_at(low)
    fits and size_at(high) does not, and sizes grow with n. Guesses where the limit falls (sizes
    grow about linearly, so a few renders do) and bisects when a guess does not halve the range."""
    bisect = False
    while high - low > 1:
        if bisect:
            guess = (low + high) // 2
        else:
            step = (high_size - low_size) / (high - low) or 1
            guess = low + int((limit - low_size) / step)
        guess = min(max(guess, low + 1), high - 1)
        before = high - low
        value = size_at(guess)
        if value <= limit:
            low, low_size = guess, value
        else:
            high, high_size = guess, value
        bisect = (high - low) * 2 > before
    return low, low_size


def _grow(size_at: Callable[[int], int], limit: int, count: int, low_size: int) -> tuple[int, int]:
    """The largest n in [0, count] with size_at(n) <= limit, and its size, given size_at(0) ==
    low_size fits and sizes grow with n. Probes grow from a few rows, aiming just past the
    limit from the size per row seen so far: no probe renders much more than the limit."""
    low, n = 0, min(count, 16)
    while n > low:
        size = size_at(n)
        if size > limit:
            return _largest(size_at, limit, low, low_size, n, size)
        step = max((size - low_size) / (n - low), 1.0)
        low, low_size = n, size
        n = min(count, low + 1 + int((limit - size) / step * 1.1))
    return low, low_size


def render(
    results: RunResults,
    template: str,
    limit: int,
    *,
    template_dir: Path | None = None,
    marker: str | None = None,
    artifact: str | None = None,
    size: Callable[[str], int] = len,
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
    size: Callable[[str], int],
) -> str:
    env = _environment(template_dir)
    cache: dict[Any, Any] = {}

    def attempt(budget: Budget) -> str:
        context, counts, clip = _context(results, budget, marker, artifact, cache)
        context["notes"] = _notes(counts, clip, artifact)
        # only a user's templates get the time limit: the built-in ones are trusted and their
        # time grows with the number of cases (100,000 cases take longer than the limit)
        limit_s = None if template_dir is not None else math.inf
        return templates.render(env, template, context, timeout=limit_s)

    def size_of(budget: Budget) -> int:
        return size(attempt(budget))

    # Grow from nothing rather than shrink from everything: a render costs what it shows, so
    # at 20,000 cases rendering all of them (over and over, while bisecting) cost seconds each.
    # Failing rows come first, then details, then passing rows: the same choice as leaving out
    # passing rows first, then details, then failing rows.
    cases = results.cases()
    failing = sum(1 for _, c in cases if _failing_row(c))
    available = {
        "failing_rows": failing,
        "details": sum(1 for _, c in cases if c.status in PROBLEMS),
        "passed_rows": len(cases) - failing,
    }
    budget = Budget(0, 0, 0)
    least = size_of(budget)
    if least <= limit:
        for kind, count in available.items():

            def size_at(n: int, kind: str = kind) -> int:
                return size_of(Budget(**{**budget.__dict__, kind: n}))

            kept, least = _grow(size_at, limit, count, least)
            if kept < count:
                setattr(budget, kind, kept)
                return attempt(budget)
            setattr(budget, kind, None)  # all of them: the same text as count
        return attempt(budget)
    # still too long (thousands of sets?): cut, and say what was cut and where the rest is
    text = attempt(budget)
    where = artifact or "the results file (`--results FILE`)"
    note = "\n\n… {n} more characters cut to fit GitHub's size limit; everything is in {w}.\n"
    keep = len(text)
    while keep > 0 and size(text[:keep] + note.format(n=len(text) - keep, w=where)) > limit:
        keep = int(keep * 0.95)
    return text[:keep] + note.format(n=len(text) - keep, w=where)


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
