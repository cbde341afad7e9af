"""Markdown for the job summary and the PR comment, rendered from Jinja templates in a sandbox.

Agent text is escaped for the context it lands in, at the moment it is printed:

- every ``{{ value }}`` is escaped for Markdown inline text by default (the environment's
  ``finalize``): backslash escapes for the few characters that start Markdown syntax, HTML
  entities for ``<``, ``>`` and ``&``, table pipes escaped, line breaks folded;
- ``{{ value | html }}`` for HTML blocks such as ``<details><summary>``, where Markdown is not
  parsed and a backslash would print literally: HTML escaping only;
- ``{{ value | code }}`` for a fenced block whose fence outgrows any backticks inside.

Everywhere, ANSI and control characters are gone, CI command prefixes are broken (see
``ci_eval.text.inert``) and ``@`` is followed by a zero-width space so nobody is pinged.

Size caps (GitHub: 1 MiB per step summary, 65,536 characters per comment) are met by leaving
out, in order, passing rows, then the details of cases that did not block, then the set tables'
rows of listed cases, then the list of what did not block, then the details of blocking cases —
each as little as needed (found by growing from nothing: a render costs what it shows) — and
the report says what it left out and where to find it. The list of what blocks is never cut.
What the templates are given is built in ``markdown_context`` (rows and details, under a
budget) and ``markdown_overview`` (the rest).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from ci_eval.gate.items import UNMEASURED_ICON, WORSE_ICON
from ci_eval.report.markdown_context import (
    KINDS,
    Budget,
    context,
    history_pages,
    notes,
    plural,
    sizes,
)
from ci_eval.results.file import RunResults
from ci_eval.text import templates
from ci_eval.text.escape import code, html, md

SUMMARY_LIMIT = 1024 * 1024 - 1024  # bytes; GitHub's step summary cap is 1 MiB
COMMENT_LIMIT = 65_536 - 256  # characters; GitHub rejects longer comment bodies
MARKER = "<!-- ci-eval report (id: {id}) -->"
SHORT = ("blocking_items", "quiet_items")  # what the comment's budget holds


def _finalizer() -> Callable[[Any], Any]:
    """Every ``{{ expression }}``: Markdown-inline escaping unless a filter already escaped it.
    The escaped form of each string is kept for the renders of one report: the size budget
    renders the same case ids, words and scores several times."""
    escaped: dict[str, Markup] = {}

    def finalize(value: Any) -> Any:
        if type(value) is str:
            found = escaped.get(value)
            if found is None:
                found = escaped[value] = md(value)
            return found
        if isinstance(value, Markup):
            return value
        if value is None:
            return ""
        if isinstance(value, bool | int | float):
            return str(value)
        return md(value)

    return finalize


def _environment(template_dir: Path | None) -> SandboxedEnvironment:
    env = templates.environment(
        template_dir,
        finalize=_finalizer(),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md
    env.filters["html"] = html
    env.filters["code"] = code
    env.globals["n"] = plural  # n(2, "error") → "2 errors"
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
    where: str | None = None,
    link: str | None = None,
    size: Callable[[str], int] = len,
    problems: list[str] | None = None,
    cache: dict[Any, Any] | None = None,
    history: str | None = None,
) -> str:
    """A user's template that fails (error, sandbox violation, time limit) is reported in
    ``problems`` (raised when None) as one line naming its file and line, and the built-in
    template renders instead: the report is never lost. Reports of the same results may share
    a ``cache`` of what their templates are given (rows, details), made once."""
    cache = {} if cache is None else cache
    where_md = _where(where, link)
    try:
        return _render(
            results, template, limit, template_dir, marker, where_md, link, size, cache, history
        )
    except templates.TemplateProblem as exc:
        if template_dir is None or problems is None:
            raise
        problems.append(f"{exc}; the built-in template was used instead")
        return _render(results, template, limit, None, marker, where_md, link, size, cache, history)


def _render(
    results: RunResults,
    template: str,
    limit: int,
    template_dir: Path | None,
    marker: str | None,
    where: Markup,
    link: str | None,
    size: Callable[[str], int],
    cache: dict[Any, Any],
    history: str | None = None,
) -> str:
    env = _environment(template_dir)
    report = "comment" if marker else "summary"
    # the comment is the short form: its lists and the sets' table, no case rows or details
    # (none are made for it, and its note does not count them)
    shown = SHORT if marker else KINDS
    # by budget, the last probe that fitted: the report is it. Only that one is kept: a probe
    # of a large run's summary is a megabyte of text, held at four bytes a character once an
    # icon is in it, and a search renders ten of them
    rendered: dict[tuple[int | None, ...], str] = {}

    def key_of(budget: Budget) -> tuple[int | None, ...]:
        return tuple(getattr(budget, k) for k in KINDS)

    def attempt(budget: Budget) -> str:
        key = key_of(budget)
        if key in rendered:
            return rendered[key]
        variables, counts, clip = context(results, budget, marker, where, cache)
        variables["notes"] = notes(counts, clip, where, report, shown)
        variables["details_link"] = Markup(link) if link else None
        # each listed case's page on the `ci-eval history` site, where one is published
        variables["history_pages"] = history_pages(cache, history)
        # only a user's templates get the time limit: the built-in ones are trusted and their
        # time grows with the number of cases (a large run can take longer than the limit)
        limit_s = None if template_dir is not None else math.inf
        text = templates.render(env, template, variables, timeout=limit_s)
        if template_dir is not None:
            text = _verdict_first(text, variables, marker)
        return text

    def size_of(budget: Budget) -> int:
        text = attempt(budget)
        found = size(text)
        if found <= limit:
            rendered.clear()
            rendered[key_of(budget)] = text
        return found

    # Grow from nothing rather than shrink from everything: a render costs what it shows, so
    # rendering all of a large run's cases (over and over, while bisecting) costs the most.
    # Kinds grow in the order they are kept (Budget): the same choice as leaving out the last
    # kind first.
    budget = Budget(**dict.fromkeys(KINDS, 0))
    least = size_of(budget)
    available = {k: n for k, n in sizes(results, cache).items() if k in shown}
    if least <= limit:
        for kind, count in available.items():

            def size_at(n: int, kind: str = kind, count: int = count) -> int:
                # all of them is the same text as None, which the last render asks for
                return size_of(Budget(**{**budget.__dict__, kind: None if n == count else n}))

            kept, least = _grow(size_at, limit, count, least)
            if kept < count:
                setattr(budget, kind, kept)
                return attempt(budget)
            setattr(budget, kind, None)  # all of them: the same text as count
        return attempt(budget)
    # still too long (thousands of blocking cases): cut, and say what was cut and where the rest is
    text = attempt(budget)
    note = (
        "\n\n… this {report} is cut here to fit GitHub's size limit ({n} more characters{k}); "
        "everything is in {w}.\n"
    )

    def cut(keep: int) -> str:
        rest = text[keep:]
        lines = "\n" + rest  # a cut at a line's end leaves the next item's line first
        blocking = sum(lines.count(f"\n- {icon} ") for icon in (WORSE_ICON, UNMEASURED_ICON))
        k = f", {blocking} more blocking items among them" if blocking else ""
        return text[:keep] + note.format(report=report, n=len(rest), k=k, w=where)

    low, high = 0, len(text)  # the longest prefix, cut at a line's end, that fits
    while low < high:
        middle = (low + high + 1) // 2
        if size(cut(middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    line_end = text.rfind("\n", 0, low)
    return cut(line_end + 1 if line_end > 0 else low)


def _verdict_first(text: str, variables: dict[str, Any], marker: str | None) -> str:
    """A user's template renders below the verdict, which ci-eval writes: a template (one a
    pull request could edit) never decides what the first line says."""
    decision = variables["decision"]
    head = f"{'###' if marker else '##'} {decision['icon']} ci-eval: {md(decision['line'])}\n\n"
    if marker:
        text = text.replace(marker, "", 1).lstrip("\n")
        head = f"{marker}\n{head}"
    return head + text


def _where(where: str | None, link: str | None) -> Markup:
    """Where the rest is, as Markdown: the workflow run's page (its artifacts) on GitHub, else
    the results file."""
    if link:
        return Markup(f"[the workflow run's artifacts]({link})")
    return md(where or "the results file (write one with --results FILE)")


def details_link(env: Mapping[str, str]) -> str | None:
    """The workflow run's page, from the runner's environment (where its artifacts are)."""
    server, repo, run = (
        env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if not (server and repo and run and run.isdigit()):
        return None
    return quote(f"{server.rstrip('/')}/{repo}/actions/runs/{run}", safe=":/")


def render_summary(
    results: RunResults,
    template_dir: Path | None = None,
    artifact: str | None = None,
    problems: list[str] | None = None,
    cache: dict[Any, Any] | None = None,
    link: str | None = None,
) -> str:
    """``artifact``: the results file, named where the summary leaves something out (off
    GitHub); ``link``: the workflow run's page, named instead (on GitHub)."""
    return render(
        results,
        "summary.md.j2",
        SUMMARY_LIMIT,
        template_dir=template_dir,
        where=artifact and f"the results file {artifact}",
        link=link,
        size=lambda t: len(t.encode("utf-8", "surrogatepass")),
        problems=problems,
        cache=cache,
    )


def render_comment(
    results: RunResults,
    comment_id: str,
    template_dir: Path | None = None,
    artifact: str | None = None,
    problems: list[str] | None = None,
    cache: dict[Any, Any] | None = None,
    link: str | None = None,
    history: str | None = None,
) -> str:
    """``history``: where ``ci-eval history``'s site is published (``history_url``): the cases
    the comment names link to their pages there."""
    marker = MARKER.format(id=comment_id)
    text = render(
        results,
        "comment.md.j2",
        COMMENT_LIMIT,
        template_dir=template_dir,
        marker=marker,
        where=artifact and f"the results file {artifact}",
        link=link,
        problems=problems,
        cache=cache,
        history=history,
    )
    if marker not in text:  # a custom template must keep it, or the comment would duplicate
        text = f"{marker}\n{text}"
    return text
