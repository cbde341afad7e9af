"""The trend site's files: ``index.html`` (the suite: each set's pass rate per push, the cases
that flip most, spend and latency per push) and ``cases/<page>.html`` (one per case, its runs).
The numbers are :mod:`.data`'s; this module words them, draws the charts (:mod:`.charts`) and
renders ci-eval's own templates (``templates/history/``) autoescaped: case ids, set ids and error
texts are hostile, and every one passes the redactor before it lands on a page."""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

from ci_eval import __version__
from ci_eval.model.baseline import Baseline
from ci_eval.report.history_site import charts
from ci_eval.report.history_site.data import CaseHistory, PushPoint, Suite, suite
from ci_eval.text import redact

INDEX = "index.html"


def case_page(set_id: str, case_id: str) -> str:
    """A case's page, relative to the site's root: a readable name cut to a safe alphabet and
    a hash of the ids (two ids that read alike are two pages; no id names a path)."""
    readable = re.sub(r"[^A-Za-z0-9_-]+", "_", case_id).strip("_")[:48] or "case"
    digest = hashlib.sha256(f"{set_id}\0{case_id}".encode()).hexdigest()[:10]
    return f"cases/{readable}-{digest}.html"


def _r(value: Any) -> str:
    return "" if value is None else redact.text(str(value))


def _short(commit: str | None) -> str:
    return _r(commit)[:12] if commit else "—"


def _number(value: float | None) -> str:
    """A value as a data attribute holds it: exact enough to compare, empty when unknown."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(round(float(value), 6))


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{round(value):,}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _dollars(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.2f}" if value >= 1 else f"${value:.4f}"


def _when(date: str | None) -> str:
    return _r(date)[:16].replace("T", " ") if date else "—"


def _now(failing: bool | None, since: str | None) -> str:
    if failing is None:
        return "no scored run kept"
    word = "failing" if failing else "passing"
    return f"{word} since {_r(since)[:12]}" if since else word


def _rate_cell(point: PushPoint) -> dict[str, Any]:
    rate = point.rate
    return {
        "passed": rate.passed,
        "runs": rate.runs,
        "low": _number(round(rate.low, 4)),
        "high": _number(round(rate.high, 4)),
        "text": rate.text(),
    }


def _push_row(point: PushPoint, all_runs: int) -> dict[str, Any]:
    return {
        "seq": point.seq,
        "commit": _short(point.commit),
        "when": _when(point.date),
        "total": _rate_cell(point) | {"all_runs": all_runs},
        "errors": point.errors,
        "tokens_value": _number(point.tokens),
        "tokens_text": _tokens(point.tokens),
        "cost_value": _number(point.cost_usd),
        "cost_text": _dollars(point.cost_usd),
        "p95_value": _number(point.p95_latency_s),
        "p95_text": _seconds(point.p95_latency_s),
    }


def _flake(rate: float) -> str:
    return f"{rate:.0%}"


def suite_context(found: Suite, source: str) -> dict[str, Any]:
    """The suite page's words and numbers (strings redacted; the template escapes them)."""
    labels = [f"#{p.seq}" for p in found.pushes]
    runs_of = {
        p.seq: sum(1 for c in found.cases for r in c.runs if r.seq == p.seq) for p in found.pushes
    }
    sets = []
    for s in found.sets:
        by_seq = {p.seq: _rate_cell(p) for p in s.points}
        cases = [{"case_id": _r(c), "href": case_page(s.set_id, c)} for c in s.cases]
        sets.append({"set_id": _r(s.set_id), "file": _r(s.file), "by_seq": by_seq, "cases": cases})
    series = []
    for s in found.sets:
        at = {p.seq: p.rate for p in s.points}
        series.append(
            (
                s.set_id,
                [
                    (at[p.seq].value, at[p.seq].low, at[p.seq].high)
                    if p.seq in at and at[p.seq].runs
                    else None
                    for p in found.pushes
                ],
            )
        )
    flips = [
        {
            "set_id": _r(f.set_id),
            "case_id": _r(f.case_id),
            "href": case_page(f.set_id, f.case_id),
            "flips": f.flips,
            "runs": f.runs,
            "failed": f.failed,
            "flake_rate": _number(f.flake_rate),
            "flake_text": _flake(f.flake_rate),
            "last_failure": f.last_failure,
            "last_failure_commit": _short(f.last_failure_commit),
            "now": _now(f.failing, f.since),
        }
        for f in found.flips
    ]
    totals = found.totals
    return {
        "version": __version__,
        "source": _r(source),
        "pushes": [_push_row(p, runs_of[p.seq]) for p in totals],
        "sets": sets,
        "case_count": len(found.cases),
        "flips": flips,
        "rate_svg": charts.rate_chart("rates", "Each eval set's pass rate", labels, series),
        "tokens_svg": charts.bar_chart(
            "tokens",
            "Agent tokens per push",
            labels,
            "tokens",
            [p.tokens for p in totals],
            "tokens",
        ),
        "cost_svg": charts.bar_chart(
            "cost",
            "Agent cost per push (priced runs)",
            labels,
            "cost",
            [p.cost_usd for p in totals],
            "dollars",
        ),
        "latency_svg": charts.bar_chart(
            "latency",
            "p95 run latency per push",
            labels,
            "p95",
            [p.p95_latency_s for p in totals],
            "seconds",
        ),
    }


def _score(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}".rstrip("0").rstrip(".") if math.isfinite(value) else str(value)


def case_context(case: CaseHistory, source: str) -> dict[str, Any]:
    """One case page's words and numbers."""
    points = [
        _rate_cell(p)
        | {
            "seq": p.seq,
            "commit": _short(p.commit),
            "when": _when(p.date),
            "errors": p.errors,
            "tokens_value": _number(p.tokens),
            "tokens_text": _tokens(p.tokens),
            "p95_value": _number(p.p95_latency_s),
            "p95_text": _seconds(p.p95_latency_s),
        }
        for p in case.points
    ]
    runs = []
    for r in case.runs:
        outcome = (
            "error"
            if r.error is not None
            else {True: "pass", False: "fail"}.get(r.passed, "unscored")
        )  # type: ignore[arg-type]
        runs.append(
            {
                "seq": r.seq,
                "outcome": outcome,
                "scores": [
                    {"name": _r(m), "value": _number(r.scores[m]), "text": _score(r.scores[m])}
                    for m in case.metrics
                ],
                "latency_value": _number(r.latency_s),
                "latency_text": _seconds(r.latency_s),
                "tokens_value": _number(r.tokens),
                "tokens_text": _tokens(r.tokens),
                "error": _r(r.error),
            }
        )
    labels = [f"#{p.seq}" for p in case.points]
    series = [
        (case.case_id, [(p.rate.value, p.rate.low, p.rate.high) if p.rate.runs else None
                        for p in case.points])
    ]  # fmt: skip
    f = case.flips
    return {
        "version": __version__,
        "source": _r(source),
        "case": {
            "set_id": _r(case.set_id),
            "case_id": _r(case.case_id),
            "now": _now(f.failing, f.since),
            "flips": {"flips": f.flips, "runs": f.runs, "flake_text": _flake(f.flake_rate)},
        },
        "metrics": [_r(m) for m in case.metrics],
        "points": points,
        "runs": runs,
        "rate_svg": charts.rate_chart(
            "case-rate", "Pass rate per push", labels, series, legend=False
        ),
    }


def render_site(baseline: Baseline, source: str) -> dict[str, str]:
    """Every page of the site, by its path relative to the site's root."""
    from markupsafe import Markup

    from ci_eval.text.templates import environment, render

    env = environment(None, autoescape=True)
    found = suite(baseline)

    def page(name: str, context: dict[str, Any]) -> str:
        for key in [k for k in context if k.endswith("_svg")]:
            context[key] = Markup(context[key])  # drawn by pygal from escaped, redacted text
        return render(env, name, context, timeout=math.inf)

    pages = {INDEX: page("history/suite.html.j2", suite_context(found, source))}
    for case in found.cases:
        pages[case_page(case.set_id, case.case_id)] = page(
            "history/case.html.j2", case_context(case, source)
        )
    return pages


def write_site(pages: dict[str, str], folder: Path) -> None:
    """The pages written under ``folder`` (created), and the case pages an earlier site left
    there for cases the history no longer holds removed: a stale page would read as current."""
    from ci_eval.io.files import write_text_atomic

    for name, text in pages.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    for old in (folder / "cases").glob("*.html"):
        if f"cases/{old.name}" not in pages and old.is_file() and not old.is_symlink():
            old.unlink()
