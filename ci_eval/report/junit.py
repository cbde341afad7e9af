"""JUnit XML shaped for today's consumers (dorny/test-reporter, mikepenz/action-junit-report,
EnricoMi's publisher, GitLab, Jenkins, Azure) and valid against the schema they share.

One testsuite per eval set, one testcase per eval case (classname = set id, name = case id,
file, line, time). The testcase's result is its place in the verdict (``ci_eval.gate.verdict``), so
every consumer counts what the gate counted: what blocks is a ``failure`` (a regression, a
failure of its thresholds) or an ``error`` (the agent or a metric could not be measured); what
did not block — a known failure, the case's usual noise, an error outside ``fail_on``, a skip —
is ``skipped``. The element's message and the first line of its body both say the kind and the
reason ("regression: passed 12 of 12 runs on main → failed 3 of 3 now; …"): some consumers show
only the one, some only the other (``benchmarks/junit_consumers.py`` runs their parsers).

Repeated runs (``--num-runs``) use Maven Surefire's rerun elements: in a passing case each
failing run is a ``flakyFailure`` (``flakyError`` when it errored); in a failing case the first
failing run is the ``failure`` and the others are ``rerunFailure``/``rerunError``. Consumers
that know them (Jenkins, Surefire-aware tools) show the flakiness; the others ignore them and
still count one test with the right verdict — one testcase per run would make EnricoMi count a
flaky-but-passing case as failed and mikepenz count every run as a test.

Times are seconds rounded to milliseconds: a case's time is the sum of its runs (the recorded
times on replay), a suite's time is the wall time of its set (first run start to last run end),
the root's the wall time of the whole run. Every string is inert (see ``inert``): consumers
print messages raw into their own step's log.
"""

from __future__ import annotations

import functools

from ci_eval.gate.items import JUDGING_KINDS, SKIPS, Item, Kind
from ci_eval.gate.verdict import verdict
from ci_eval.model.describe import (
    fmt,
    invocation_diffs,
    run_outcome,
    run_reason,
    shorten,
    shown_run,
    trajectory_counts,
    with_run,
)
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, RunRecord, RunResults
from ci_eval.results.usage_totals import CaseUsage, of_results
from ci_eval.text.inert import inert, inert_line


def seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def case_time(case: CaseRecord) -> float:
    # the per-run durations as the results file keeps them, so `report` writes the same XML
    runs = case.runs
    if len(runs) == 1:  # nearly every case: sum() of one, without a generator
        return sum((round(runs[0].duration_s, 4),))
    return sum(round(r.duration_s, 4) for r in runs)


class _SetTime:
    """Wall time of a set, its cases added as they are written (a spilled case's runs are
    read back once): from its first run's start to its last run's end; the sum of its cases'
    times when runs were replayed or come from an older results file."""

    def __init__(self) -> None:
        self.cases: list[float] = []
        self.first: float | None = None
        self.last: float | None = None
        self.timed = True  # every run so far has its start

    def add(self, case: CaseRecord) -> None:
        self.cases.append(case_time(case))
        for r in case.runs if self.timed else ():
            if r.started_s is None:
                self.timed = False
                return
            start = round(r.started_s, 4)
            end = start + round(r.duration_s, 4)
            self.first = start if self.first is None else min(self.first, start)
            self.last = end if self.last is None else max(self.last, end)

    def seconds(self) -> float:
        if self.timed and self.first is not None and self.last is not None:
            return self.last - self.first
        return sum(self.cases)


def _run_details(case: CaseRecord, run: RunRecord | None) -> str:
    lines = [f"{case.eval_id} ({case.file}:{case.line}): {case.status}"]
    lines += [
        f"  {m.name}: {fmt(m.score)} (threshold {fmt(m.threshold)}) {m.status}"
        + (f" — {m.reason}" if m.reason else "")
        for m in case.metrics
    ]
    if case.skipped:
        lines.append(f"skipped: {case.skipped}")
    if run is not None:
        if len(case.runs) > 1:
            lines.append(f"run {run.run} of {len(case.runs)}")
        if run.error:
            lines.append(f"  error: {run.error}")
        for d in invocation_diffs(run):
            actual_calls = None if d.actual_calls is None else ", ".join(d.actual_calls)
            source = " — from the agent's spans" if d.calls_from == "spans" else ""
            lines += [
                f"turn {d.number}: {shorten(d.user)}",
                f"  expected tool calls: {shorten(', '.join(d.expected_calls)) or '(none)'}",
                "  actual tool calls:   "
                + ("(not run)" if actual_calls is None else shorten(actual_calls) or "(none)")
                + source,
                f"  expected response: {shorten(d.expected_response) or '(none)'}",
                "  actual response:   "
                + (
                    "(not run)"
                    if d.actual_response is None
                    else shorten(d.actual_response) or "(none)"
                ),
            ]
            if d.spans_note:
                lines.append(f"  spans: {d.spans_note}")
            if d.error:
                lines.append(f"  error: {d.error}")
    return "\n".join(lines)


def _system_out(case: CaseRecord) -> str | None:
    if len(case.runs) < 2:
        return None
    rows = []
    for run in case.runs:
        scored = ", ".join(f"{m.name}={fmt(m.score)} {m.status}" for m in run.metrics)
        rows.append(
            f"run {run.run} of {len(case.runs)} ({run.duration_s:.3f} s): "
            + (f"ERROR {run.error}" if run.error else scored or run_outcome(run))
        )
    passed = sum(1 for r in case.runs if run_outcome(r) == Status.PASSED)
    rows.append(f"{passed} of {len(case.runs)} runs passed")
    if case.flaky:
        rows.append("flaky: passed in some runs and failed in others")
    return "\n".join(rows)


# The XML is written as text, as ElementTree writes the same tree indented by two spaces
# (``ET.indent`` then ``ET.tostring``), byte for byte: on a large run, building the elements
# only to serialise them made the report slow. A test holds it to ElementTree's text.
_INDENT = ["\n" + "  " * level for level in range(6)]


def _escape_text(text: str) -> str:
    """Character data as ElementTree escapes it."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def _escape_attribute(text: str) -> str:
    """An attribute value as ElementTree escapes it (line breaks and tabs as references)."""
    text = _escape_text(text)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


def _tag(tag: str, attrs: dict[str, str]) -> str:
    return "<" + tag + "".join(f' {k}="{_escape_attribute(v)}"' for k, v in attrs.items())


def _leaf(tag: str, attrs: dict[str, str], text: str | None = None) -> str:
    """An element without children."""
    if text:
        return f"{_tag(tag, attrs)}>{_escape_text(text)}</{tag}>"
    return _tag(tag, attrs) + " />"


def _indent(level: int) -> str:
    return _INDENT[level] if level < len(_INDENT) else "\n" + "  " * level


def _parent(tag: str, attrs: dict[str, str], children: list[str], level: int) -> str:
    """An element at indentation ``level`` with its (already written) children."""
    if not children:
        return _tag(tag, attrs) + " />"
    inner = _indent(level + 1)
    return f"{_tag(tag, attrs)}>{inner}{inner.join(children)}{_indent(level)}</{tag}>"


@functools.lru_cache(maxsize=4096)
def _property(name: str, value: str) -> str:
    """A property element; ``name`` is already an attribute's text. A few metric names and
    scores make most of the properties of a large run."""
    return f'<property name="{name}" value="{_escape_attribute(value)}" />'


@functools.lru_cache(maxsize=1024)
def _line_attribute(text: str) -> str:
    """Inert one-line text as an attribute's text: set ids, files, metric names repeat."""
    return _escape_attribute(inert_line(text))


def _element(tag: str, message: str, kind: str | None, body: str) -> str:
    attrs = {"message": inert_line(message)}
    if kind is not None:
        attrs["type"] = kind
    return _leaf(tag, attrs, inert(body))


def _reruns(case: CaseRecord, skip: RunRecord | None, flaky: bool) -> list[str]:
    """The other runs that failed or errored, as Surefire writes reruns."""
    if len(case.runs) < 2:
        return []
    elements = []
    for run in case.runs:
        outcome = run_outcome(run)
        if run is skip or outcome == Status.PASSED:
            continue
        error = outcome == Status.ERROR
        tag = ("flaky" if flaky else "rerun") + ("Error" if error else "Failure")
        elements.append(
            _element(
                tag,
                with_run(case, run, run_reason(run)),
                ("AgentError" if run.error else "MetricError") if error else "ThresholdNotMet",
                _run_details(case, run),
            )
        )
    return elements


# what a testcase's verdict element is, per tag: what the suite counts
_COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}


# what blocks, per kind: the element that counts it as the gate did
TAGS = {
    Kind.REGRESSION: "failure",
    Kind.SUITE_DROP: "failure",
    Kind.UNCONFIRMED: "failure",
    Kind.FAILURE: "failure",
    Kind.BUDGET: "failure",
    Kind.TOKENS: "failure",
    Kind.LATENCY: "failure",
    Kind.ERROR: "error",
    Kind.NOT_EVALUATED: "error",
    Kind.INTERRUPTED: "error",
    Kind.NOTHING: "error",
    Kind.JUDGING: "failure",
}


def reason(item: Item) -> str:
    """The first line of the element's body, and its message: the kind, then why — so a
    consumer that shows only the body (GitLab) or only the message (dorny prefixes the type)
    says both. A kind that does not block says so."""
    kind = str(item.kind) + ("" if item.blocking or item.kind in SKIPS else ", not blocking")
    q = item.quarantine
    if q is not None:  # the real outcome, and the quarantine that held it (or no longer does)
        held = f"quarantine expired on {q.until}" if q.expired else "quarantined"
        kind = f"{item.kind}, {held}"
    return f"{kind}: {item.text()}"


def _usage_properties(spent: CaseUsage | None) -> list[str]:
    """The case's agent tokens per run and p95 turn latency, where measured."""
    if spent is None:
        return []
    props = []
    if spent.tokens_per_run is not None:
        props.append(_property("tokens per run", f"{spent.tokens_per_run:.0f}"))
    if spent.p95_latency is not None:
        props.append(_property("p95 turn latency s", f"{spent.p95_latency:.3f}"))
    return props


def _sources(case: CaseRecord) -> list[str]:
    """``--otlp``: where the case's turns' tool calls came from, as a property."""
    counts = trajectory_counts([case])
    value = ", ".join(f"{source} {n}" for source, n in counts.items() if n)
    return [_property("tool calls from", value)] if value else []


def _case(
    case: CaseRecord,
    set_id: str,
    item: Item | None,
    spent: CaseUsage | None = None,
    live: bool = False,
) -> tuple[str, str | None]:
    """The testcase element (at indentation level 2) and the tag of its verdict element."""
    opening = (
        f'<testcase name="{_escape_attribute(inert_line(case.eval_id))}" '
        f'classname="{_line_attribute(set_id)}" file="{_line_attribute(case.file)}" '
        f'time="{seconds(case_time(case))}"'
    )
    if case.line is not None:
        opening += f' line="{case.line}"'
    children = []
    multi = len(case.runs) > 1
    used = _usage_properties(spent) + (_sources(case) if live else [])
    held = item.quarantine if item is not None else None
    if case.metrics or case.flaky or multi or used or held:
        props = []
        for m in case.metrics:
            score, threshold = m.score, m.threshold  # as fmt() writes them
            value = f"{'n/a' if score is None else f'{score:.3g}'} {m.status}"
            if threshold is not None:
                value += f" threshold {threshold:.3g}"
            if m.pass_rate is not None and multi:
                value += f" pass rate {m.pass_rate:.0%}"
            props.append(_property(_line_attribute(m.name), value))
        if multi:
            passed = sum(1 for r in case.runs if run_outcome(r) == Status.PASSED)
            props.append(_property("runs passed", f"{passed}/{len(case.runs)}"))
        if case.flaky:
            props.append(_property("flaky", "true"))
        if case.adk_status is not None:  # ADK would give the case another status
            props.append(_property("adk status", case.adk_status))
        props += used
        if held is not None:  # quarantine.toml's: whose, until when, why
            props.append(_property("quarantine", inert_line(f"{held.terms()}: {held.reason}")))
        children.append(_parent("properties", {}, props, 3))
    verdict: str | None = None
    if item is None or item.kind is Kind.FLAKY:  # passed: its failing runs, if any, were flaky
        children += _reruns(case, None, flaky=True)
    else:
        # what did not block is skipped: a CI that reads only JUnit must not go red for it.
        # No type: dorny prints "type: message", and the message already starts with the kind
        verdict = TAGS[item.kind] if item.blocking else "skipped"
        shown = None if item.kind in SKIPS else shown_run(case)
        line = reason(item)
        children.append(_element(verdict, line, None, f"{line}\n{_run_details(case, shown)}"))
        if item.blocking:
            children += _reruns(case, shown, flaky=False)
    out = _system_out(case)
    if out:
        children.append(_leaf("system-out", {}, inert(out)))
    if not children:
        return opening + " />", verdict
    return f"{opening}>{_INDENT[3]}{_INDENT[3].join(children)}{_INDENT[2]}</testcase>", verdict


def _listed_suite(items: list[Item], title: str) -> tuple[list[str], dict[str, int]]:
    """A testsuite of the removed cases (or of the changes to how cases are judged): a
    ``failure`` each when it blocks, else ``skipped``; their set as classname, as a run of
    them would have written it."""
    counts = {"tests": len(items), "failures": 0, "errors": 0, "skipped": 0}
    cases = []
    for item in items:
        tag = "failure" if item.blocking else "skipped"
        counts[_COUNTED[tag]] += 1
        line = reason(item)
        element = _element(tag, line, None, line)
        # a case by its id (its set is the classname); a set's options by their pattern
        name = item.case_id if item.case_id not in ("", "*") else (item.key or item.change)
        opening = (
            f'<testcase name="{_escape_attribute(inert_line(name))}" '
            f'classname="{_line_attribute(item.set_id)}" time="0.000">'
        )
        cases.append(f"{_INDENT[2]}{opening}{_INDENT[3]}{element}{_INDENT[2]}</testcase>")
    attrs = {"name": title} | {k: str(v) for k, v in counts.items()}
    attrs["time"] = "0.000"
    return [_INDENT[1] + _tag("testsuite", attrs) + ">", *cases, _INDENT[1] + "</testsuite>"], {
        k: v for k, v in counts.items()
    }


def to_junit(results: RunResults) -> str:
    return "".join(junit_parts(results))


def junit_parts(results: RunResults) -> list[str]:
    """The JUnit file's text in pieces, a case each, whose concatenation is :func:`to_junit`:
    a writer takes them one by one, so a large run never holds its XML several times over
    (joined, redacted, encoded)."""
    decision = verdict(results)
    items = decision.by_case()  # a case's own item before what it spent
    # each case's tokens and latency, once usage is recorded (an older file's cases as then)
    spent = (
        {u.key: u for u in of_results(results).cases}
        if results.settings.usage_totals is not None
        else {}
    )
    suites: list[list[str]] = []
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    live = results.settings.trajectories is not None  # --otlp: each case says its sources
    for s in results.sets:
        counts = {"tests": len(s.cases), "failures": 0, "errors": 0, "skipped": 0}
        cases = []  # each with the line break and indentation before it
        clock = _SetTime()
        for c in s.cases:
            key = (s.eval_set_id, c.eval_id)
            element, tag = _case(
                c, s.eval_set_id, items.get(key), spent.get(f"{key[0]}:{key[1]}"), live
            )
            cases.append(_INDENT[2] + element)
            clock.add(c)
            if tag is not None:
                counts[_COUNTED[tag]] += 1
        attrs = {"name": inert_line(s.eval_set_id or s.file)}
        attrs |= {k: str(v) for k, v in counts.items()}
        attrs |= {"time": seconds(clock.seconds()), "file": inert_line(s.file)}
        if results.started:
            attrs["timestamp"] = results.started
        props = [
            _property(name, inert_line(value))
            for name, value in (
                ("file", s.file),
                ("dialect", s.dialect),
                ("metrics", ", ".join(m.describe() for m in s.applied_metrics)),
                ("metrics source", s.metrics.source),
            )
        ]
        # _parent's text in pieces (a suite always has its properties)
        opening = _tag("testsuite", attrs) + ">" + _INDENT[2] + _parent("properties", {}, props, 2)
        suites.append([_INDENT[1] + opening, *cases, _INDENT[1] + "</testsuite>"])
        del cases
        for k, v in counts.items():
            totals[k] += v
    listed = decision.blocking + decision.not_blocking
    # cases of main's history this run did not find, and (--fail-on judging-changed) what it
    # changed of how cases are judged: counted as the gate counts them
    for name, kinds in (
        ("removed from main's history", (Kind.REMOVED,)),
        ("changed how cases are judged", JUDGING_KINDS),
    ):
        found = [i for i in listed if i.kind in kinds]
        if found:
            suite = _listed_suite(found, name)
            suites.append(suite[0])
            for k, v in suite[1].items():
                totals[k] += v
    root = {"name": "ci-eval"} | {k: str(v) for k, v in totals.items()}
    root["time"] = seconds(results.duration_s)
    if results.started:
        root["timestamp"] = results.started
    head = '<?xml version="1.0" encoding="utf-8"?>\n' + _tag("testsuites", root)
    if not suites:
        return [head + " />\n"]
    pieces = [head + ">"]
    for suite in suites:
        pieces += suite
    pieces.append(_INDENT[0] + "</testsuites>\n")
    return pieces
