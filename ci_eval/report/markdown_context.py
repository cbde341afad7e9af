"""What the Markdown templates are given: per eval set its table rows, per failing case its
details, the baseline's comparison, the totals and the notes on what a size budget left out.
Pure: agent text is escaped later, by the templates' filters (``ci_eval.report.markdown``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from ci_eval.gate.items import ORDER, PASSED_ICON, SKIPS, Item
from ci_eval.gate.verdict import verdict
from ci_eval.model.comparison import MetricChange
from ci_eval.model.describe import fmt, invocation_diffs, shown_run
from ci_eval.model.status import Status
from ci_eval.report.markdown_overview import (
    case_rate_text,
    delta,
    fixed_context,
    groups,
    item_view,
    runs_passed,
    title,
)
from ci_eval.results.file import CaseRecord, RunResults, SetRecord
from ci_eval.text.escape import md
from ci_eval.text.plural import plural

CODE_LIMIT = 2000  # characters of one response shown in a details block

PROBLEMS = (Status.FAILED, Status.ERROR, Status.NOT_EVALUATED, Status.COMPLETED)


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
    """How much of each kind of text to keep (None: all), in the order they are kept: the
    list of what blocks, then the details of blocking cases, then the list of what did not
    block, then the set tables' rows of listed cases, then the details of cases that did not
    block, then passing rows. The list of what blocks is cut only when it alone outgrows the
    report (thousands of blocking cases)."""

    blocking_items: int | None = None
    blocking_details: int | None = None
    quiet_items: int | None = None
    failing_rows: int | None = None
    quiet_details: int | None = None
    passed_rows: int | None = None


KINDS = (
    "blocking_items",
    "blocking_details",
    "quiet_items",
    "failing_rows",
    "quiet_details",
    "passed_rows",
)


@dataclass
class Counts:
    """What a budget kept, and left out, of each kind."""

    failing_rows: int = 0
    passed_rows: int = 0
    left: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))


def _changes(results: RunResults) -> dict[tuple[str, str, str], MetricChange]:
    if results.comparison is None:
        return {}
    return {(c.set_id, c.case_id, c.metric): c for c in results.comparison.changes}


def _problem(s: SetRecord, case: CaseRecord, item: Item, clip: Clipper) -> dict[str, Any]:
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
                "calls_from": d.calls_from,
                "spans_note": None if d.spans_note is None else clip(d.spans_note, 400),
            }
        )
    simulated = None
    if run is not None and run.simulation:
        sim = run.simulation
        simulated = clip(
            f"user turns written by {sim.get('kind', 'a simulated user')}"
            + (f" ({sim['model']})" if sim.get("model") else "")
            + f", {plural(sim.get('user_turns', len(run.invocations)), 'turn')}, "
            f"ended: {sim.get('ended', 'replayed')}",
            300,
        )
    return {
        "set": clip(title(s), 160),
        "case": clip(case.eval_id, 120),
        "status": case.status,
        "kind": str(item.kind),
        "blocking": item.blocking,
        "simulated": simulated,
        "icon": item.icon,
        "word": str(item.kind),
        "why": clip(item.why or item.change, 600),
        "where": clip(f"{case.file}:{case.line}" if case.line else case.file, 200),
        "run": run.run if run else None,
        "runs": len(case.runs),
        "runs_passed": runs_passed(case),
        "diffs": diffs,
    }


def _row(
    s: SetRecord,
    case: CaseRecord,
    item: Item | None,
    columns: list[str],
    changes: dict[tuple[str, str, str], MetricChange],
) -> tuple[dict[str, Any], int]:
    clip = Clipper()
    by_name = {m.name: m for m in case.metrics}
    row = {
        # a legacy file is one case named by its path: the heading already says it
        "id": clip(Path(case.eval_id).name if case.eval_id == s.file else case.eval_id, 120),
        "status": case.status,
        "icon": item.icon if item is not None else PASSED_ICON,
        "word": str(item.kind) if item is not None else "passed",
        "blocking": item is not None and item.blocking,
        "flaky": case.flaky,
        "adk_status": case.adk_status,  # ADK's own, where it is not ``status``
        "line": case.line,
        "runs_passed": case_rate_text(case),
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
    items: dict[tuple[str, str], Item],
    changes: dict[tuple[str, str, str], MetricChange],
    budget: Budget,
    counts: Counts,
    clip: Clipper,
    cache: dict[Any, Any],
) -> dict[str, Any]:
    key = ("set", id(s))
    if key not in cache:
        cache[key] = _set_parts(s, items)
    columns, failing, passing, fixed = cache[key]
    rows = []
    # the table lists listed cases first, then passing ones: each kind is a prefix of its list
    for kind, cases, allowed in (
        ("failing_rows", failing, budget.failing_rows),
        ("passed_rows", passing, budget.passed_rows),
    ):
        used = getattr(counts, kind)
        kept = _kept(allowed, used, len(cases))
        counts.left[kind] += len(cases) - kept
        setattr(counts, kind, used + kept)
        # the rows made so far for this kind, and the texts they shortened (running totals)
        made, shortened = cache.setdefault(("rows", id(s), kind), ([], [0]))
        while len(made) < kept:
            case = cases[len(made)]
            row, clipped = _row(s, case, items.get((s.eval_set_id, case.eval_id)), columns, changes)
            made.append(row)
            shortened.append(shortened[-1] + clipped)
        rows += made[:kept]
        clip.texts += shortened[kept]
    return {"title": clip(title(s), 160), **fixed, "rows": rows}


def _rank(item: Item | None) -> tuple[int, int]:
    """Table order: what blocks, what did not, then passes, then skips."""
    if item is None:
        return (2, 0)
    if item.kind in SKIPS:
        return (3, 0)
    return (0 if item.blocking else 1, ORDER.index(item.kind))


def _set_parts(
    s: SetRecord, items: dict[tuple[str, str], Item]
) -> tuple[list[str], list[CaseRecord], list[CaseRecord], dict[str, Any]]:
    """What a set's table shows whatever the budget: its columns, its listed and its passing
    cases in table order, and its means."""
    informational: set[str] = set()
    scores: dict[str, list[float]] = {}  # per metric, its scores in case order
    multi = False
    skipped = 0
    keyed = []  # (table order, listed?, case)
    for c in s.cases:  # one pass: on a large run each pass over them costs
        multi = multi or len(c.runs) > 1
        skipped += c.status == Status.SKIPPED
        for m in c.metrics:
            if m.informational:
                informational.add(m.name)
            if m.score is not None:
                scores.setdefault(m.name, []).append(m.score)
        item = items.get((s.eval_set_id, c.eval_id))
        listed = item is not None and item.kind not in SKIPS
        keyed.append((_rank(item), listed, c))
    names = [m.name for m in s.applied_metrics if m.name not in informational]
    columns = [n for n in names if n in scores]  # no column of n/a when nothing was scored
    ordered = sorted(keyed, key=lambda kfc: kfc[0])
    means = [{"name": n, "mean": fmt(sum(scores[n]) / len(scores[n]))} for n in columns]
    return (
        columns,
        [c for _, listed, c in ordered if listed],
        [c for _, listed, c in ordered if not listed],
        {
            "id": s.eval_set_id,
            "file": s.file,
            "legacy": s.eval_set_id in ("", s.file),
            "columns": columns,
            "means": means,
            "total": len(s.cases),
            "all_skipped": bool(s.cases) and skipped == len(s.cases),
            "no_scores": not columns and bool(names) and skipped < len(s.cases),
            "repeated": multi,
            "dialect": s.dialect,
        },
    )


def context(
    results: RunResults,
    budget: Budget,
    marker: str | None,
    where: Markup,
    cache: dict[Any, Any],
) -> tuple[dict[str, Any], Counts, Clipper]:
    """The template's variables under ``budget``; ``cache`` keeps each case's row and details
    across the renders that look for the largest budget that fits (and across the reports of
    one run: the summary and the comment)."""
    if "context" not in cache:
        decision = verdict(results)
        records = {(s.eval_set_id, c.eval_id): (s, c) for s, c in results.cases()}
        items = decision.by_case()  # a case's own item before what it spent

        def detailed(listed: list[Item]) -> list[tuple[SetRecord, CaseRecord, Item]]:
            out = []
            for i in listed:
                found = records.get((i.set_id, i.case_id))
                if (
                    found is not None
                    and found[1].status in PROBLEMS
                    and items.get((i.set_id, i.case_id)) is i
                ):  # once per case
                    out.append((*found, i))
            return out

        cache["context"] = (
            decision,
            items,
            _changes(results),
            detailed(decision.blocking),
            detailed(decision.not_blocking),
        )
    key = ("fixed", marker)
    if key not in cache:
        cache[key] = fixed_context(results, cache["context"][0], marker)
    (decision, items, changes, blocking_cases, quiet_cases), fixed = cache["context"], cache[key]
    clip = Clipper()
    counts = Counts()
    sets = [_set(s, items, changes, budget, counts, clip, cache) for s in results.sets]
    problems = []
    for kind, listed, allowed in (
        ("blocking_details", blocking_cases, budget.blocking_details),
        ("quiet_details", quiet_cases, budget.quiet_details),
    ):
        kept = _kept(allowed, 0, len(listed))
        counts.left[kind] = len(listed) - kept
        for s, c, item in listed[:kept]:
            key = ("problem", id(c))
            if key not in cache:
                one = Clipper()
                cache[key] = (_problem(s, c, item, one), one.texts)
            problem, clipped = cache[key]
            clip.texts += clipped
            problems.append(problem)
    lists = {}
    for kind, items, allowed in (
        ("blocking_items", decision.blocking, budget.blocking_items),
        ("quiet_items", decision.not_blocking, budget.quiet_items),
    ):
        kept = _kept(allowed, 0, len(items))
        counts.left[kind] = len(items) - kept
        made = cache.setdefault(("items", kind), [])  # an item's view reads its why: once
        while len(made) < kept:
            made.append(item_view(items[len(made)]))
        lists[kind] = made[:kept]
    context = {
        **fixed,
        "blocking": lists["blocking_items"],
        "blocking_left": counts.left["blocking_items"],
        "blocking_groups": groups(lists["blocking_items"]),
        "not_blocking": lists["quiet_items"],
        "not_blocking_left": counts.left["quiet_items"],
        "not_blocking_groups": groups(lists["quiet_items"]),
        "sets": sets,
        "problems": problems,
        "problems_total": len(blocking_cases) + len(quiet_cases),
        "notes": [],  # filled by the caller, once it knows what this budget left out
    }
    return context, counts, clip


def sizes(results: RunResults, cache: dict[Any, Any]) -> dict[str, int]:
    """How many of each budgeted kind there are (after :func:`context` filled the cache)."""
    decision, items, _, blocking_cases, quiet_cases = cache["context"]
    listed = sum(1 for i in items.values() if i.kind not in SKIPS)
    total = len(results.cases())
    return {
        "blocking_items": len(decision.blocking),
        "blocking_details": len(blocking_cases),
        "quiet_items": len(decision.not_blocking),
        "failing_rows": listed,
        "quiet_details": len(quiet_cases),
        "passed_rows": total - listed,
    }


WHAT = {
    "blocking_items": ("blocking case", "blocking cases"),
    "blocking_details": ("blocking case's details", "blocking cases' details"),
    "quiet_items": ("not-blocking case", "not-blocking cases"),
    "failing_rows": ("set table row of a listed case", "set table rows of listed cases"),
    "quiet_details": ("not-blocking case's details", "not-blocking cases' details"),
    "passed_rows": ("passing case's row", "passing cases' rows"),
}


def notes(
    counts: Counts, clip: Clipper, where: Markup, report: str, kinds: tuple[str, ...] = KINDS
) -> list[Markup]:
    """What this report (``report``: "summary", "comment") left out of what it shows
    (``kinds``), and where the rest is (already Markdown)."""
    left = [
        f"{n} {WHAT[kind][0] if n == 1 else WHAT[kind][1]}"
        for kind in kinds
        if (n := counts.left[kind])
    ]
    out = []
    if left:
        out.append(
            md(f"To fit GitHub's size limit this {report} leaves out {', '.join(left)}. ")
            + Markup("Everything is in ")
            + where
            + Markup(".")
        )
    if clip.texts:
        out.append(
            md(f"{plural(clip.texts, 'long text')} shortened (marked with their length); ")
            + where
            + Markup(" has them in full.")
        )
    return out


def _site(url: str | None) -> str | None:
    """The history site's address as a link may carry it: http(s) only, percent-quoted (no
    space or parenthesis to end a Markdown link early), no trailing slash."""
    if not url or not url.lower().startswith(("https://", "http://")):
        return None
    return quote(url.strip().rstrip("/"), safe=":/?#@!$&'*+,;=%~")


def history_pages(cache: dict[Any, Any], url: str | None) -> dict[str, Markup]:
    """Each listed case's page on the ``ci-eval history`` site at ``url`` (its index's
    folder), by the item's key; none without a site. Read after :func:`context` filled
    ``cache``: the items are its verdict's."""
    from ci_eval.report.history_site.site import case_page

    site = _site(url)
    if site is None or "context" not in cache:
        return {}
    decision = cache["context"][0]
    return {
        # a link as it is (the page's name is of a safe alphabet, the site's quoted)
        i.key: Markup(f"{site}/{case_page(i.set_id, i.case_id)}")
        for i in [*decision.blocking, *decision.not_blocking, *decision.quarantined]
        if i.case_id
    }
