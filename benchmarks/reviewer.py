"""Look at the reports as a reviewer does: render the job summary and the PR comment as GitHub
would (``cmarkgfm``, GitHub's cmark-gfm, with its GFM extensions and raw HTML passed through),
read the HTML, and check that what a reader sees agrees with the gate's :class:`Verdict` and
with the other channels (terminal, step outputs, annotations, JUnit).

    python -m benchmarks.reviewer

Per scenario (``tests/report/scenarios.py``: ``reviewer``, ``large``, ``passing``) and check,
one row ``ok`` or ``FAIL``; then the figures (sizes, counts per channel). Exits 1 when a check
fails. The checks:

a. **verdict first** — the first heading reads ``<✅ or ❌> ci-eval: <Verdict.line>``;
b. **lists** — the cases listed under "Blocking" and under "Not blocking" (folded ``<details>``
   parts included) are disjoint, each listed once, and are the Verdict's lists (a "… N more
   not listed here" line accounts for the last N of the not-blocking list);
c. **reasons** — every blocking item's list entry carries its ``why`` (the comment: its first
   100 characters), as rendered text;
d. **no ❌ when passing** — under a passing verdict no ❌ (nor ``:x:``, which GitHub turns
   into one) after the first heading;
e. **counts** — blocking, not blocking, regressions, errors, improved, new and removed agree
   in the terminal, the summary's and the comment's headings and lists, the step outputs,
   the annotations (``::error``: at most 10) and JUnit (failures + errors);
f. **verdict line** — at most 200 characters, and the same in the terminal's last line, the
   summary, the comment and ``outputs["verdict"]``;
g. **sizes** — the summary at most 1 MiB (bytes), the comment at most 65,536 characters.

The check functions take a :class:`Views` (one scenario as every channel shows it) and return
the problems found, empty when none: ``tests/report/test_reviewer.py`` runs them too.
"""

from __future__ import annotations

import io
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

from ci_eval import publish
from ci_eval.gate.items import FAILED_ICON, NOUNS, Item, Kind
from ci_eval.gate.verdict import LINE_LIMIT, Verdict, verdict
from ci_eval.publish import github
from ci_eval.report.junit import to_junit
from ci_eval.report.markdown import render_comment, render_summary
from ci_eval.report.terminal import summary_lines
from ci_eval.results.file import RunResults
from ci_eval.settings import ReportSettings

SUMMARY_MAX_BYTES = 1024 * 1024  # GitHub's cap on a step summary
COMMENT_MAX_CHARS = 65_536  # GitHub's cap on a comment body
ANNOTATIONS_SHOWN = github.ANNOTATION_CAP  # ::error/::notice lines before the "more" notice
COMMENT_WHY = 100  # characters of a blocking item's why the comment must show
LINK = "https://github.com/acme/shop-agent/actions/runs/123"


# --- GitHub's rendering ----------------------------------------------------------------------


def gfm(markdown: str, *, comment: bool = False) -> str:
    """HTML as github.com renders it: cmark-gfm with the table, strikethrough, autolink,
    tagfilter and tasklist extensions, raw HTML kept (GitHub sanitises it afterwards; the
    elements ci-eval writes — details, summary, sub, br, b — all survive that). In comments a
    line break is a hard break, as GitHub renders issue and pull-request comments."""
    options = Options.CMARK_OPT_UNSAFE
    if comment:
        options |= Options.CMARK_OPT_HARDBREAKS
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options)


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
BLOCKS = {
    "p", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "thead", "tbody",
    "pre", "blockquote", "details", "summary", "hr", "div",
}  # fmt: skip
CELLS = {"td", "th"}


@dataclass(eq=False)
class Node:
    """An element of the rendered HTML; its children are elements and text (unescaped)."""

    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """The text a reader sees: ``<br>`` and block ends are line breaks, cells are
        separated by `` | ``."""
        out: list[str] = []
        self._text(out)
        return "".join(out)

    def _text(self, out: list[str]) -> None:
        if self.tag == "br":
            out.append("\n")
            return
        for child in self.children:
            if isinstance(child, str):
                out.append(child)
            else:
                child._text(out)
        if self.tag in BLOCKS:
            out.append("\n")
        elif self.tag in CELLS:
            out.append(" | ")

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]

    def walk(self) -> Iterator[Node]:
        """This element and every element inside it, in document order."""
        yield self
        for child in self.elements():
            yield from child.walk()


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return  # an end tag with no open element is ignored, as browsers do

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html_text: str) -> Node:
    builder = _Builder()
    builder.feed(html_text)
    builder.close()
    return builder.root


def read(markdown: str, *, comment: bool = False) -> Node:
    """The Markdown as a reader sees it on GitHub, as a tree."""
    return parse(gfm(markdown, comment=comment))


# --- one scenario, every channel -------------------------------------------------------------


@dataclass(frozen=True)
class Views:
    """One scenario as every channel shows it."""

    name: str
    decision: Verdict
    terminal: list[str]
    summary: str
    comment: str
    outputs: dict[str, object]
    annotations: str
    junit: str

    @cached_property
    def summary_html(self) -> Node:
        return read(self.summary)

    @cached_property
    def comment_html(self) -> Node:
        return read(self.comment, comment=True)

    def reports(self) -> list[tuple[str, Node]]:
        return [("summary", self.summary_html), ("comment", self.comment_html)]


def views(name: str, results: RunResults, link: str | None = LINK) -> Views:
    workflow = github.Workflow(out=io.StringIO())
    github.annotate(results, workflow)
    return Views(
        name=name,
        decision=verdict(results),
        terminal=summary_lines(results),
        summary=render_summary(results, link=link),
        comment=render_comment(results, "ci/evals", link=link),
        outputs=publish.outputs(results, ReportSettings()),
        annotations=workflow.out.getvalue(),
        junit=to_junit(results),
    )


# --- reading the reports as a reviewer -------------------------------------------------------

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
BLOCKING_HEAD = re.compile(r"^(?:[✅❌] )?Blocking: (?P<tally>.+)$")
NOT_BLOCKING_HEAD = re.compile(r"^Not blocking: (?P<tally>.+)$")
LISTED = re.compile(r"^\S+ (?P<kind>.+?)(?: · (?P<name>.+? › .+?))?(?: — .*)?$")
ELIDED = re.compile(r"^… (?P<n>\d+) more not listed here")


def name_of(item: Item) -> str:
    """How the reports name an item: ``set › case``, or its kind for a suite-wide finding."""
    return f"{item.set_title} › {item.case_id}" if item.case_id else str(item.kind)


def _first_line(node: Node) -> str:
    return next((line.strip() for line in node.text().split("\n") if line.strip()), "")


def first_heading(doc: Node) -> Node | None:
    return next((n for n in doc.walk() if n.tag in HEADINGS), None)


def _head(node: Node) -> tuple[str, str] | None:
    """("blocking" or "not blocking", its tally) when ``node`` starts one of the lists: a
    heading (the summary) or a paragraph that is one bold phrase (the comment)."""
    if node.tag == "p":
        parts = [c for c in node.children if not (isinstance(c, str) and not c.strip())]
        if len(parts) != 1 or not isinstance(parts[0], Node) or parts[0].tag != "strong":
            return None
    elif node.tag not in HEADINGS:
        return None
    text = node.text().strip()
    for which, pattern in (("blocking", BLOCKING_HEAD), ("not blocking", NOT_BLOCKING_HEAD)):
        m = pattern.match(text)
        if m:
            return which, m["tally"]
    return None


@dataclass
class Section:
    """A list as the reader sees it: its heading's tally and its entries."""

    tally: str
    entries: list[Node] = field(default_factory=list)  # <li>, folded ones included
    elided: int = 0  # "… N more not listed here"

    def names(self) -> list[str]:
        out = []
        for li in self.entries:
            line = _first_line(li)
            if ELIDED.match(line):
                continue
            m = LISTED.match(line)
            out.append((m["name"] or m["kind"]) if m else line)
        return out

    def entry(self, name: str) -> Node | None:
        return next(
            (li for li, n in zip(self.entries, self.names(), strict=True) if n == name), None
        )


def sections(doc: Node) -> tuple[dict[str, Section], list[str]]:
    """The Blocking and Not blocking lists (each a heading, then lists and folded lists up to
    the next other block), and problems reading them (a list headed twice)."""
    found: dict[str, Section] = {}
    problems: list[str] = []
    current: Section | None = None
    for node in doc.elements():
        head = _head(node)
        if head is not None:
            which, tally = head
            if which in found:
                problems.append(f"a second {which!r} heading")
            current = found[which] = Section(tally)
        elif current is not None and node.tag in ("ul", "ol"):
            _take(current, node)
        elif current is not None and node.tag == "details":
            for inner in node.elements():
                if inner.tag in ("ul", "ol"):
                    _take(current, inner)
        else:
            current = None
    return found, problems


def _take(section: Section, listing: Node) -> None:
    for li in listing.elements():
        if li.tag != "li":
            continue
        m = ELIDED.match(_first_line(li))
        if m:
            section.elided += int(m["n"])
        else:
            section.entries.append(li)


def parse_tally(tally: str) -> dict[Kind, int]:
    """``3 regressions, 2 errors`` → {REGRESSION: 3, ERROR: 2} (the Verdict's own words)."""
    words = {}
    for kind, (one, many) in NOUNS.items():
        words[one] = words[many] = kind
    out: dict[Kind, int] = {}
    for part in tally.split(", "):
        part = part.strip()
        m = re.match(r"^(\d+) (.+)$", part)
        if m and m[2] in words:
            out[words[m[2]]] = out.get(words[m[2]], 0) + int(m[1])
        elif part in words:  # "nothing was evaluated", "the run was interrupted"
            out[words[part]] = out.get(words[part], 0) + 1
        else:
            raise ValueError(f"a tally's part that is no count of a kind: {part!r}")
    return out


# --- the checks ------------------------------------------------------------------------------

Problems = list[str]


def verdict_first(doc: Node, decision: Verdict) -> Problems:
    heading = first_heading(doc)
    want = f"{decision.icon} ci-eval: {decision.line}"
    if heading is None:
        return ["no heading"]
    got = heading.text().strip()
    if got != want:
        return [f"first heading is {got[:120]!r}, not {want[:120]!r}"]
    return []


def lists_agree(doc: Node, decision: Verdict) -> Problems:
    found, problems = sections(doc)
    listed: dict[str, list[str]] = {}
    for which, items in (("blocking", decision.blocking), ("not blocking", decision.not_blocking)):
        section = found.get(which)
        want = [name_of(i) for i in items]
        if section is None:
            if want:
                problems.append(f"no {which!r} list: {len(want)} missing")
            listed[which] = []
            continue
        if not want:
            problems.append(f"a {which!r} list where the verdict has none")
        names = listed[which] = section.names()
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            problems.append(f"{which}: listed twice: {', '.join(twice[:3])}")
        shown = len(want) - section.elided  # what "… N more not listed here" leaves out: the end
        if names != want[:shown] or shown < 0:
            missing = [n for n in want if n not in names]
            extra = [n for n in names if n not in want]
            said = []
            if missing:
                said.append(f"missing {len(missing)} ({', '.join(missing[:3])})")
            if extra:
                said.append(f"not the verdict's {len(extra)} ({', '.join(extra[:3])})")
            if not said:
                said.append("in another order")
            problems.append(f"{which}: " + "; ".join(said))
    both = sorted(set(listed.get("blocking", [])) & set(listed.get("not blocking", [])))
    if both:
        problems.append(f"both blocking and not blocking: {', '.join(both[:3])}")
    return problems


def reasons_shown(doc: Node, decision: Verdict, limit: int | None = None) -> Problems:
    """Each blocking item's why (its first ``limit`` characters) in its own list entry."""
    found, _ = sections(doc)
    section = found.get("blocking")
    problems = []
    for item in decision.blocking:
        why = " ".join(item.why.split())[:limit].strip()
        if not why:
            continue
        entry = section.entry(name_of(item)) if section else None
        if entry is None:
            problems.append(f"{name_of(item)}: not listed, its reason nowhere beside it")
        elif why not in " ".join(entry.text().replace("\u200b", "").split()):  # URLs broken
            problems.append(f"{name_of(item)}: its reason {why[:60]!r}… is not shown")
    return problems


FAILED_MARKS = (FAILED_ICON, ":x:")  # GitHub renders the shortcode as the emoji


def no_failure_when_passing(doc: Node, decision: Verdict) -> Problems:
    if not decision.passed:
        return []
    heading = first_heading(doc)
    text = doc.text()
    start = text.find(heading.text()) + len(heading.text()) if heading is not None else 0
    problems = []
    for line in text[start:].split("\n"):
        for mark in FAILED_MARKS:
            if mark in line:
                problems.append(f"{mark} under a passing verdict: {line.strip()[:100]!r}")
    return problems


def check_verdict_first(v: Views) -> Problems:
    return [f"{name}: {p}" for name, doc in v.reports() for p in verdict_first(doc, v.decision)]


def check_lists(v: Views) -> Problems:
    return [f"{name}: {p}" for name, doc in v.reports() for p in lists_agree(doc, v.decision)]


def check_reasons(v: Views) -> Problems:
    return [f"summary: {p}" for p in reasons_shown(v.summary_html, v.decision)] + [
        f"comment: {p}" for p in reasons_shown(v.comment_html, v.decision, COMMENT_WHY)
    ]


def check_no_failure_when_passing(v: Views) -> Problems:
    return [
        f"{name}: {p}"
        for name, doc in v.reports()
        for p in no_failure_when_passing(doc, v.decision)
    ]


FIGURES = ("blocking", "not blocking", "regressions", "errors", "improved", "new", "removed")


def expected(decision: Verdict) -> dict[str, int]:
    listed = decision.blocking + decision.not_blocking
    return {
        "blocking": len(decision.blocking),
        "not blocking": len(decision.not_blocking),
        "regressions": sum(1 for i in listed if i.kind is Kind.REGRESSION),
        "errors": sum(1 for i in listed if i.kind is Kind.ERROR),
        "improved": len(decision.improved),
        "new": len(decision.new),
        "removed": len(decision.removed),
    }


def _terminal_counts(lines: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    tallies: dict[Kind, int] = {}
    for which, head in (("blocking", "BLOCKING: "), ("not blocking", "NOT BLOCKING: ")):
        at = next((n for n, line in enumerate(lines) if line.startswith(head)), None)
        if at is None:
            out[which] = out[f"{which} listed"] = 0
            continue
        counts = parse_tally(lines[at][len(head) :])
        for kind, n in counts.items():
            tallies[kind] = tallies.get(kind, 0) + n
        out[which] = sum(counts.values())
        rest = lines[at + 1 :]
        out[f"{which} listed"] = next(
            (n for n, line in enumerate(rest) if not line.startswith("  ")), len(rest)
        )
    out["regressions"] = tallies.get(Kind.REGRESSION, 0)
    out["errors"] = tallies.get(Kind.ERROR, 0)
    for figure, pattern in (
        ("improved", r"^IMPROVED \((\d+)\):"),
        ("new", r"^NEW \((\d+)[,)]"),
        ("removed", r"^REMOVAL ACCEPTED \((\d+)\)"),
    ):
        m = next((m for line in lines if (m := re.match(pattern, line))), None)
        out[figure] = int(m[1]) if m else 0
    return out


AGAINST_MAIN = {
    "improved": re.compile(r"^(?:\S+ )?Improved \((\d+)\)"),
    "new": re.compile(r"^New \((\d+)[,)]"),
    "removed": re.compile(r"^Removal accepted \((\d+)\)"),
}


def _report_counts(doc: Node, decision: Verdict) -> dict[str, int]:
    found, _ = sections(doc)
    out: dict[str, int] = {}
    tallies: dict[Kind, int] = {}
    for which in ("blocking", "not blocking"):
        section = found.get(which)
        if section is None:
            out[which] = out[f"{which} listed"] = 0
            continue
        counts = parse_tally(section.tally)
        for kind, n in counts.items():
            tallies[kind] = tallies.get(kind, 0) + n
        out[which] = sum(counts.values())
        out[f"{which} listed"] = len(section.entries) + section.elided
    out["regressions"] = tallies.get(Kind.REGRESSION, 0)
    out["errors"] = tallies.get(Kind.ERROR, 0)
    names = {
        "improved": [f"{i.set_title} › {i.case_id}" for i in decision.improved],
        # the Markdown writes a case "set › case", as its lists do
        "new": [key.replace(":", " › ", 1) for key in decision.new],
        "removed": [key.replace(":", " › ", 1) for key in decision.removed],
    }
    for figure, pattern in AGAINST_MAIN.items():
        out[figure] = out[f"{figure} named"] = 0
        for node in doc.walk():
            if node.tag not in ("p", "details"):
                continue
            block = node.elements()[0] if node.tag == "details" and node.elements() else node
            m = pattern.match(_first_line(block))
            if m:
                text = node.text()
                out[figure] = int(m[1])
                out[f"{figure} named"] = sum(1 for n in names[figure] if n in text)
                break
    return out


def counts(v: Views) -> dict[str, dict[str, int]]:
    """Per channel, each figure it shows (``… listed``: entries in its list, ``… named``:
    the Verdict's names found in its text)."""
    d = v.decision
    out = {
        "verdict": expected(d),
        "terminal": _terminal_counts(v.terminal),
        "summary": _report_counts(v.summary_html, d),
        "comment": _report_counts(v.comment_html, d),
        "outputs": {
            figure: int(v.outputs[key])  # type: ignore[call-overload]
            for figure, key in zip(
                FIGURES,
                ("blocking", "not-blocking", "regressions", "errors", "improved", "new", "removed"),
                strict=True,
            )
        },
    }
    lines = v.annotations.splitlines()
    out["annotations"] = {
        "blocking": sum(1 for line in lines if line.startswith("::error ")),
        "not blocking": sum(1 for line in lines if line.startswith("::notice ")),
    }
    root = ET.fromstring(v.junit.encode("utf-8"))
    out["junit"] = {"blocking": int(root.get("failures", 0)) + int(root.get("errors", 0))}
    return out


def expected_counts(d: Verdict) -> dict[str, dict[str, int]]:
    """What each channel should show: the Verdict's figures, as each channel counts them."""
    want = expected(d)
    everything = {f: want[f] for f in FIGURES}
    report = everything | {f"{w} listed": want[w] for w in ("blocking", "not blocking")}
    report |= {f"{f} named": want[f] for f in ("improved", "new", "removed")}
    cases_blocking = sum(1 for i in d.blocking if i.case_id)
    annotated_quiet = sum(1 for i in d.not_blocking if i.case_id and i.kind is not Kind.SKIPPED)
    errors = min(cases_blocking, ANNOTATIONS_SHOWN)
    return {
        "verdict": want,
        "terminal": everything | {f"{w} listed": want[w] for w in ("blocking", "not blocking")},
        "summary": report,
        "comment": report,
        "outputs": everything,
        "annotations": {
            "blocking": errors,
            "not blocking": min(annotated_quiet, ANNOTATIONS_SHOWN - errors),
        },
        "junit": {"blocking": cases_blocking},
    }


def check_counts(v: Views) -> Problems:
    got, want = counts(v), expected_counts(v.decision)
    problems = []
    for channel, figures in want.items():
        for figure, n in figures.items():
            seen = got[channel].get(figure)
            if seen != n:
                problems.append(f"{channel} {figure}: {seen}, the verdict's {n}")
    return problems


def check_verdict_line(v: Views) -> Problems:
    line = v.decision.line
    problems = []
    if len(line) > LINE_LIMIT:
        problems.append(f"the line has {len(line)} characters (at most {LINE_LIMIT})")
    shown = {
        "terminal": v.terminal[-1] if v.terminal else "",
        "outputs": str(v.outputs.get("verdict", "")),
    }
    for name, doc in v.reports():
        heading = first_heading(doc)
        text = heading.text().strip() if heading is not None else ""
        shown[name] = text.split(" ci-eval: ", 1)[1] if " ci-eval: " in text else text
    for channel, text in shown.items():
        if text != line:
            problems.append(f"{channel} says {text[:80]!r}, not the verdict's line")
    return problems


def sizes(v: Views) -> dict[str, int]:
    return {"summary bytes": len(v.summary.encode("utf-8")), "comment chars": len(v.comment)}


def check_sizes(v: Views) -> Problems:
    got = sizes(v)
    problems = []
    if got["summary bytes"] > SUMMARY_MAX_BYTES:
        problems.append(f"summary: {got['summary bytes']} bytes > {SUMMARY_MAX_BYTES}")
    if got["comment chars"] > COMMENT_MAX_CHARS:
        problems.append(f"comment: {got['comment chars']} characters > {COMMENT_MAX_CHARS}")
    return problems


CHECKS: dict[str, Callable[[Views], Problems]] = {
    "a verdict first": check_verdict_first,
    "b lists disjoint, complete": check_lists,
    "c blocking reasons shown": check_reasons,
    "d no ❌ when passing": check_no_failure_when_passing,
    "e counts agree": check_counts,
    "f verdict line": check_verdict_line,
    "g sizes": check_sizes,
}


def scenarios() -> dict[str, Callable[[], RunResults]]:
    from tests.report import scenarios as s

    return {"reviewer": s.reviewer, "large": s.large, "passing": s.passing}


def main() -> int:
    rows: list[tuple[str, str, bool, str]] = []
    figures: dict[str, tuple[dict[str, int], dict[str, dict[str, int]]]] = {}
    started = time.perf_counter()
    for name, make in scenarios().items():
        v = views(name, make())
        for check, run in CHECKS.items():
            problems = run(v)
            rows.append((name, check, not problems, "; ".join(problems)))
        figures[name] = (sizes(v), counts(v))
    width = max(len(c) for c in CHECKS) + 2
    print(f"{'scenario':<10}{'check':<{width}}result")
    for name, check, ok, said in rows:
        print(f"{name:<10}{check:<{width}}{'ok' if ok else 'FAIL'}" + (f"  {said}" if said else ""))
    print()
    for name, (size, by_channel) in figures.items():
        print(
            f"{name}: summary {size['summary bytes']:,} bytes "
            f"({size['summary bytes'] / SUMMARY_MAX_BYTES:.1%} of 1 MiB), "
            f"comment {size['comment chars']:,} characters "
            f"({size['comment chars'] / COMMENT_MAX_CHARS:.1%} of 65,536)"
        )
        channels = list(by_channel)
        print("  " + f"{'':<20}" + "".join(f"{c:>12}" for c in channels))
        keys = list(dict.fromkeys(k for c in channels for k in by_channel[c]))
        for key in keys:
            cells = "".join(f"{by_channel[c].get(key, ''):>12}" for c in channels)
            print(f"  {key:<20}{cells}")
    print(
        "  (annotations: ::error lines, at most 10, and ::notice lines for the not-blocking\n"
        "  cases but skips, in what the 10 leave; junit: failures + errors)"
    )
    failed = sum(1 for *_, ok, _ in rows if not ok)
    print(
        f"\n{len(rows) - failed} of {len(rows)} checks ok, {failed} failed "
        f"({time.perf_counter() - started:.1f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
