"""What the Markdown templates are given: per eval set its table rows, per failing case its
details, the baseline's comparison, the totals and the notes on what a size budget left out.
Pure: agent text is escaped later, by the templates' filters (``ci_eval.report.markdown``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.model.comparison import MetricChange
from ci_eval.model.status import Status
from ci_eval.report.markdown_overview import ORDER, delta, fixed_context, runs_passed, title
from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    invocation_diffs,
    not_evaluated_reason,
    shown_run,
)
from ci_eval.results import CaseRecord, RunResults, SetRecord

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
PROBLEMS = (Status.FAILED, Status.ERROR, Status.NOT_EVALUATED, Status.COMPLETED)


def failing_row(case: CaseRecord) -> bool:
    """Rows a reviewer must see: anything but a clean pass (skipped cases count as passing)."""
    return case.status not in (Status.PASSED, Status.SKIPPED) or (
        case.status == Status.PASSED and case.flaky
    )


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
    """What a budget kept, and left out, of each kind."""

    passed_rows: int = 0
    details: int = 0
    failing_rows: int = 0
    left: dict[str, int] = field(default_factory=lambda: {"passing": 0, "failing": 0, "details": 0})


def plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _changes(results: RunResults) -> dict[tuple[str, str, str], MetricChange]:
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
        "set": clip(title(s), 160),
        "case": clip(case.eval_id, 120),
        "status": case.status,
        "simulated": simulated,
        "icon": ICONS.get(case.status, "⚠️"),
        "word": WORDS.get(case.status, case.status.lower()),
        "why": clip(why, 600),
        "where": clip(f"{case.file}:{case.line}" if case.line else case.file, 200),
        "run": run.run if run else None,
        "runs": len(case.runs),
        "runs_passed": runs_passed(case),
        "diffs": diffs,
    }


def _row(
    s: SetRecord,
    case: CaseRecord,
    columns: list[str],
    changes: dict[tuple[str, str, str], MetricChange],
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
        "runs_passed": runs_passed(case),
        "scores": [
            {
                "value": fmt(by_name[n].score) if n in by_name else "",
                "delta": delta(changes.get((s.eval_set_id, case.eval_id, n))),
            }
            for n in columns
        ],
    }
    return row, clip.texts


def _kept(budget: int | None, used: int, available: int) -> int:
    """How many of ``available`` rows a budget (None: all) still allows after ``used``."""
    return available if budget is None else max(0, min(available, budget - used))


def _set(
    s: SetRecord,
    changes: dict[tuple[str, str, str], MetricChange],
    budget: Budget,
    counts: Counts,
    clip: Clipper,
    cache: dict[Any, Any],
) -> dict[str, Any]:
    key = ("set", id(s))
    if key not in cache:
        cache[key] = _set_parts(s)
    columns, failing, passing, fixed = cache[key]
    rows = []
    # the table lists failing rows first, then passing ones: each kind is a prefix of its list
    for kind, cases, allowed in (
        ("failing", failing, budget.failing_rows),
        ("passing", passing, budget.passed_rows),
    ):
        used = counts.failing_rows if kind == "failing" else counts.passed_rows
        kept = _kept(allowed, used, len(cases))
        counts.left[kind] += len(cases) - kept
        if kind == "failing":
            counts.failing_rows += kept
        else:
            counts.passed_rows += kept
        # the rows made so far for this kind, and the texts they shortened (running totals)
        made, shortened = cache.setdefault(("rows", id(s), kind), ([], [0]))
        while len(made) < kept:
            row, clipped = _row(s, cases[len(made)], columns, changes)
            made.append(row)
            shortened.append(shortened[-1] + clipped)
        rows += made[:kept]
        clip.texts += shortened[kept]
    return {"title": clip(title(s), 160), **fixed, "rows": rows}


def _set_parts(
    s: SetRecord,
) -> tuple[list[str], list[CaseRecord], list[CaseRecord], dict[str, Any]]:
    """What a set's table shows whatever the budget: its columns, its failing and its passing
    cases in table order, and its counts and means."""
    informational: set[str] = set()
    scores: dict[str, list[float]] = {}  # per metric, its scores in case order
    status_counts = dict.fromkeys(ORDER, 0)
    multi = False
    keyed = []  # (table order, failing row?, case)
    for c in s.cases:  # one pass: at 20,000 cases each pass over them costs
        status = c.status
        if status in status_counts:
            status_counts[status] += 1
        multi = multi or len(c.runs) > 1
        for m in c.metrics:
            if m.informational:
                informational.add(m.name)
            if m.score is not None:
                scores.setdefault(m.name, []).append(m.score)
        keyed.append(((ORDER.get(status, 3), not c.flaky), failing_row(c), c))
    names = [m.name for m in s.applied_metrics if m.name not in informational]
    columns = [n for n in names if n in scores]  # no column of n/a when nothing was scored
    ordered = sorted(keyed, key=lambda kfc: kfc[0])
    # errored cases did not pass; skipped and not-evaluated ones say nothing either way
    evaluated = (
        status_counts[Status.PASSED] + status_counts[Status.FAILED] + status_counts[Status.ERROR]
    )
    means = [{"name": n, "mean": fmt(sum(scores[n]) / len(scores[n]))} for n in columns]
    # failing rows (see failing_row) sort first, a flaky pass before the clean ones
    return (
        columns,
        [c for _, failing, c in ordered if failing],
        [c for _, failing, c in ordered if not failing],
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


def context(
    results: RunResults,
    budget: Budget,
    marker: str | None,
    artifact: str | None,
    cache: dict[Any, Any],
) -> tuple[dict[str, Any], Counts, Clipper]:
    """The template's variables under ``budget``; ``cache`` keeps each case's row and details
    across the renders that look for the largest budget that fits (and across the reports of
    one run: the summary and the comment)."""
    if "context" not in cache:
        changes = _changes(results)
        all_problems = [(s, c) for s, c in results.cases() if c.status in PROBLEMS]
        all_problems.sort(key=lambda sc: ORDER.get(sc[1].status, 3))
        cache["context"] = changes, all_problems
    key = ("fixed", marker, artifact)
    if key not in cache:
        cache[key] = fixed_context(results, marker, artifact)
    (changes, all_problems), fixed = cache["context"], cache[key]
    clip = Clipper()
    counts = Counts()
    sets = [_set(s, changes, budget, counts, clip, cache) for s in results.sets]
    regressed = results.comparison.regressed_cases() if results.comparison else set()
    problems = []
    kept = _kept(budget.details, 0, len(all_problems))
    counts.left["details"] = len(all_problems) - kept
    for s, c in all_problems[:kept]:
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


def notes(counts: Counts, clip: Clipper, artifact: str | None) -> list[str]:
    where = (
        f"the results file {artifact}"
        if artifact
        else "the results file (write one with `--results FILE`)"
    )
    notes = []
    left = counts.left
    if left["passing"]:
        notes.append(f"{plural(left['passing'], 'passing case')} not listed")
    if left["failing"]:
        notes.append(f"{plural(left['failing'], 'failing case')} not listed")
    if left["details"]:
        notes.append(
            f"{plural(left['details'], 'more failed or errored case')} not shown in detail"
        )
    out = []
    if notes:
        out.append(f"To fit GitHub's size limit: {'; '.join(notes)}. Everything is in {where}.")
    if clip.texts:
        out.append(
            f"{plural(clip.texts, 'long text')} shortened (marked with their length); "
            f"{where} has them in full."
        )
    return out
