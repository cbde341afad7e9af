"""The gate's verdict as one value every channel renders: the terminal, the job summary, the PR
comment, the annotations, the step outputs and JUnit say the same thing in the same order.

- ``line``: the decision in one line of at most :data:`LINE_LIMIT` characters — its clauses in a
  fixed order (the decision; what blocks, counted, with at most :data:`NAMES_SHOWN` case ids;
  what did not block, counted; notices), so later settings add a clause, never a new line;
- ``blocking``: every case (or suite-wide finding) that fails the gate, each with before → after,
  the history it was judged against and one line of why;
- ``not_blocking``: failures, errors and skips that did not fail the gate — a case is in exactly
  one of the two lists, or in neither when it simply passed;
- ``improved`` (cases the gate's test judged better than main, nothing else), ``new`` and
  ``removed`` cases, named; and per eval set its counts and its pass rate over all of this job's
  runs against main's.

Pure: computed from the results and their comparison, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from ci_eval.errors import EXIT_GATE, EXIT_INFRA, EXIT_OK
from ci_eval.history import run_fails
from ci_eval.model.comparison import (
    CaseJudgement,
    Comparison,
    Judgement,
    MetricChange,
    runs_label,
)
from ci_eval.model.status import Status
from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    invocation_diffs,
    not_evaluated_reason,
    run_outcome,
    shown_run,
    with_run,
)
from ci_eval.results import CaseRecord, RunResults, SetRecord

LINE_LIMIT = 200
NAMES_SHOWN = 3
ID_LIMIT = 40  # characters of a case id in the verdict line
WHY_LIMIT = 240  # characters of an item's one line of why


class Kind(StrEnum):
    """What a listed case (or finding) is; the same word in every channel."""

    REGRESSION = "regression"
    SUITE_DROP = "suite-wide drop"
    UNCONFIRMED = "unconfirmed"  # failed every run; an outage kept reruns from confirming it
    FAILURE = "failure"  # below its thresholds, judged without main's history
    ERROR = "error"
    NOT_EVALUATED = "not evaluated"
    NOTHING = "nothing evaluated"
    INTERRUPTED = "interrupted"
    REMOVED = "removed"  # a case main has that the pull request no longer has
    KNOWN_FAILURE = "known failure"
    NOISE = "usual noise"
    UNCONFIRMED_FAILURE = "unconfirmed failure"  # failed where main never did; not confirmed
    TOLERATED = "within tolerance"  # a regression whose scores fell no more than --tolerance
    FLAKY = "flaky"
    ACCEPTED = "accepted"
    NOT_SCORED = "not scored"
    SKIPPED = "skipped"
    IMPROVED = "improved"


# One icon per meaning (the legend says them): the gate, what blocks, what does not
PASSED_ICON, FAILED_ICON = "✅", "❌"
WORSE_ICON, UNMEASURED_ICON, QUIET_ICON, SKIPPED_ICON, IMPROVED_ICON = "🔴", "🔥", "⚪", "⏭", "🟢"
UNMEASURED = (
    Kind.ERROR,
    Kind.NOT_EVALUATED,
    Kind.NOTHING,
    Kind.INTERRUPTED,
    Kind.UNCONFIRMED,
    Kind.REMOVED,
)
MEANINGS = {
    PASSED_ICON: "passed",
    FAILED_ICON: "gate failed",
    WORSE_ICON: "blocks: failed or worse than main",
    UNMEASURED_ICON: "blocks: could not be measured",
    QUIET_ICON: "does not block",
    SKIPPED_ICON: "skipped",
    IMPROVED_ICON: "improved",
}


def legend(icons: set[str]) -> str:
    """The meaning of each icon a report shows, in one line (a passing report shows no ❌)."""
    return " · ".join(f"{icon} {meaning}" for icon, meaning in MEANINGS.items() if icon in icons)


# how each kind is counted in the verdict line: (one, many)
NOUNS = {
    Kind.REGRESSION: ("regression", "regressions"),
    Kind.SUITE_DROP: ("suite-wide drop", "suite-wide drops"),
    Kind.UNCONFIRMED: (
        "case failing every run could not be confirmed",
        "cases failing every run could not be confirmed",
    ),
    Kind.FAILURE: ("failed case", "failed cases"),
    Kind.ERROR: ("error", "errors"),
    Kind.NOT_EVALUATED: ("not evaluated", "not evaluated"),
    Kind.NOTHING: ("nothing was evaluated", "nothing was evaluated"),
    Kind.INTERRUPTED: ("the run was interrupted", "the run was interrupted"),
    Kind.REMOVED: ("case removed", "cases removed"),
    Kind.KNOWN_FAILURE: ("known failure", "known failures"),
    Kind.NOISE: ("failure within its usual noise", "failures within their usual noise"),
    Kind.UNCONFIRMED_FAILURE: ("unconfirmed failure", "unconfirmed failures"),
    Kind.TOLERATED: ("regression within the tolerance", "regressions within the tolerance"),
    Kind.FLAKY: ("flaky", "flaky"),
    Kind.ACCEPTED: ("accepted change", "accepted changes"),
    Kind.NOT_SCORED: ("not scored", "not scored"),
    Kind.SKIPPED: ("skipped", "skipped"),
    Kind.IMPROVED: ("improved", "improved"),
}
# the order of the clauses and of the lists: what blocks hardest first
ORDER = list(NOUNS)


def count(n: int, kind: Kind) -> str:
    one, many = NOUNS[kind]
    if kind in (Kind.NOTHING, Kind.INTERRUPTED):
        return one
    return f"{n} {one if n == 1 else many}"


def clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters; what it cut is counted."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    tail = f"… (+{len(text) - limit} characters)"
    return text[: max(0, limit - len(tail))] + tail


def short_id(key: str, limit: int = ID_LIMIT) -> str:
    """A case id short enough for the verdict line: its start and its end, which tell ids
    apart more often than their middles."""
    if len(key) <= limit:
        return key
    half = (limit - 1) // 2
    return f"{key[:half]}…{key[-(limit - 1 - half) :]}"


@dataclass(frozen=True)
class Item:
    """A case (or a suite-wide finding) in the verdict's lists."""

    kind: Kind
    blocking: bool
    set_id: str = ""
    case_id: str = ""
    set_title: str = ""
    file: str = ""
    line: int | None = None
    change: str = ""  # "passed 12 of 12 runs on main → failed 3 of 3 now"
    scores: str = ""  # "response_match_score 0.95 → 0.2"
    judged: str = ""  # the history it was judged against: "main's history (p=0.0002)"
    test: str = ""  # the judgement in a few words: "p=0.0002", "short history", "new case"
    said: str = ""  # why, when it is known without reading the case's runs
    # why, read from the case's runs when first asked: the gate's decision needs no why, and a
    # run of 100,000 cases keeps their runs on disk (reading them back costs)
    explain: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    @property
    def why(self) -> str:
        """One line: the tool-call difference, the response, the error."""
        if self.explain is not None:
            object.__setattr__(self, "said", self.explain())
            object.__setattr__(self, "explain", None)
        return self.said

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}" if self.case_id else ""

    @property
    def icon(self) -> str:
        if self.kind is Kind.IMPROVED:
            return IMPROVED_ICON
        if not self.blocking:
            return SKIPPED_ICON if self.kind is Kind.SKIPPED else QUIET_ICON
        return UNMEASURED_ICON if self.kind in UNMEASURED else WORSE_ICON

    @property
    def label(self) -> str:
        """The word in capitals, as the terminal and annotations show it: ``REGRESSION``."""
        return "FAILED" if self.kind is Kind.FAILURE else str(self.kind).upper()

    def text(self) -> str:
        """Everything about it in one line (terminal, annotations, JUnit)."""
        parts = [self.change, self.scores, self.judged, self.why]
        return "; ".join(p for p in parts if p)


@dataclass(frozen=True)
class SetLine:
    """An eval set's row: its cases by what they are, and its runs' pass rate against main's."""

    set_id: str
    title: str
    file: str
    cases: int
    passed: int
    blocking: int
    not_blocking: int
    skipped: int
    runs: int  # this job's runs of its evaluated cases, reruns included
    runs_passed: int
    main_runs: int  # main's runs of the same cases, in the window they were judged on
    main_passed: int

    @property
    def rate(self) -> float | None:
        return self.runs_passed / self.runs if self.runs else None

    @property
    def main_rate(self) -> float | None:
        return self.main_passed / self.main_runs if self.main_runs else None

    def rate_text(self) -> str:
        rate = self.rate
        return "n/a" if rate is None else f"{rate:.0%}"

    def delta_points(self) -> int | None:
        rate, main = self.rate, self.main_rate
        if rate is None or main is None:
            return None
        return round(100 * rate) - round(100 * main)

    def delta_text(self) -> str:
        """``▼12 pts`` against main; empty without main's runs or a change."""
        d = self.delta_points()
        if not d:
            return "" if d is None else "±0"
        return f"{'▲' if d > 0 else '▼'}{abs(d)} pts"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    exit_code: int
    line: str  # "gate failed: 1 regression (support:refund_policy); 1 known failure did not block"
    blocking: list[Item] = field(default_factory=list)
    not_blocking: list[Item] = field(default_factory=list)
    improved: list[Item] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # "set:case"
    removed: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # clauses after the counts
    # what the pull request changed that places the bar (not applied), one line each
    changed: list[str] = field(default_factory=list)
    # what the pull request changed that main had and is applied (thresholds), said
    said: list[str] = field(default_factory=list)
    sets: list[SetLine] = field(default_factory=list)

    @property
    def icon(self) -> str:
        return PASSED_ICON if self.passed else FAILED_ICON

    def icons(self) -> set[str]:
        """The icons a report of this verdict shows: the gate's, its items', and the sets'
        table's (passed, does not block, skipped)."""
        items = self.blocking + self.not_blocking + self.improved
        return {self.icon, PASSED_ICON, QUIET_ICON, SKIPPED_ICON} | {i.icon for i in items}

    def counts(self, blocking: bool) -> dict[Kind, int]:
        """Items per kind, in clause order."""
        items = self.blocking if blocking else self.not_blocking
        found: dict[Kind, int] = {}
        for kind in ORDER:
            n = sum(1 for i in items if i.kind is kind)
            if n:
                found[kind] = n
        return found

    def tally(self, blocking: bool) -> str:
        """``3 regressions, 2 errors`` (empty when there are none)."""
        return ", ".join(count(n, k) for k, n in self.counts(blocking).items())


# --- the items -------------------------------------------------------------------------------


def _why_failed(case: CaseRecord, metrics: bool = True) -> str:
    """The failing metrics (unless said elsewhere), then the first turn that went another way
    than expected."""
    said = "; ".join(failing_metrics(case)) if metrics else ""
    run = shown_run(case)
    turn = ""
    for d in invocation_diffs(run) if run is not None else []:
        if d.error:
            turn = f"turn {d.number}: error: {d.error}"
        elif d.actual_calls is None:
            turn = f"turn {d.number}: not run"
        elif d.calls_differ:
            wanted = ", ".join(d.expected_calls) or "no tool call"
            got = ", ".join(d.actual_calls) or "no tool call"
            turn = f"turn {d.number}: expected {wanted}, got {got}"
        elif d.actual_response is not None and d.actual_response != d.expected_response:
            turn = f'turn {d.number}: replied "{clip(d.actual_response, 80)}"'
        if turn:
            turn = with_run(case, run, turn) if run is not None else turn
            break
    return clip(" — ".join(p for p in (said, turn) if p), WHY_LIMIT)


def outcomes(case: CaseRecord) -> list[bool | None]:
    """Per run, did it pass (None: errored or not scored) — from the case's metrics' per-run
    scores where it has them, so its runs are not read back (a large run keeps them on disk)."""
    per_metric = [
        (list(m.runs), m.threshold)
        for m in case.metrics
        if not m.informational and m.threshold is not None and m.runs
    ]
    if per_metric and case.status != Status.ERROR:
        return [None if fail is None else not fail for fail in run_fails(per_metric)]
    return [
        None if outcome == Status.ERROR else outcome == Status.PASSED
        for outcome in map(run_outcome, case.runs)
    ]


def _runs_now(case: CaseRecord) -> str:
    runs = outcomes(case)
    if len(runs) < 2:  # one run: its status says it
        return ""
    failed = sum(1 for r in runs if r is not True)
    if case.status == Status.FAILED and not failed:
        return ""  # failed as a whole (its mean), no run on its own
    if case.status == Status.ERROR:
        errored = sum(1 for r in runs if r is None)
        return f"errored in {errored} of {runs_label(len(runs))}"
    if failed:
        return f"failed {failed} of {runs_label(len(runs))}"
    return f"passed {runs_label(len(runs))}"


def _judged(j: CaseJudgement, commit: str | None) -> str:
    """The history the case was judged against, and the test's number."""
    where = f"main's history ({commit[:7]})" if commit else "main's history"
    if j.history_runs == 0:
        text = "no history on main (a new case)"
    elif j.method == "history" or j.method.startswith("history"):
        text = f"judged against {where}"
        rest = j.method[len("history") :].strip(" ;:")
        if rest:
            text += f": {rest}"
    else:  # "short history: …", "judged by the simple rule: …" (a schema 1 file)
        text = f"{where}: {j.method}"
    if j.p_value is not None and j.failed_now and j.judgement is not Judgement.KNOWN_FAILURE:
        text += f", p={j.p_value:.2g}"
        if j.adjusted is not None and j.adjusted != j.p_value:
            text += f" ({j.adjusted:.2g} after Benjamini–Hochberg)"
    if j.judgement is Judgement.KNOWN_FAILURE and j.failing_since not in (None, "", "unknown"):
        text += f"; failing on main since {j.failing_since}"
    if j.reason:
        text += f"; accepted: {j.reason}"
    return text


def _test(j: CaseJudgement) -> str:
    if j.p_value is not None and j.failed_now and j.method.startswith("history"):
        return f"p={j.p_value:.2g}"
    return j.method.split(":", 1)[0] if j.method != "history" else ""


def _change(j: CaseJudgement) -> str:
    main = (
        f"passed {j.history_runs - j.history_failed} of {runs_label(j.history_runs)} on main"
        if j.history_runs
        else "new"
    )
    now = (
        f"failed {j.failed_now} of {j.runs_now} now"
        if j.failed_now
        else f"passed {j.runs_now} of {j.runs_now} now"
    )
    return f"{main} → {now}"


def _changes_of(comparison: Comparison, set_id: str, case_id: str) -> list[MetricChange]:
    """The case's metric changes, looked up (a scan of every change per listed case was
    thousands × thousands in a large run); the index is kept on the comparison while its
    changes are the same in number."""
    kept = comparison.__dict__.get("_changes_by_case")
    if kept is None or kept[0] != len(comparison.changes):
        index: dict[tuple[str, str], list[MetricChange]] = {}
        for c in comparison.changes:
            index.setdefault((c.set_id, c.case_id), []).append(c)
        kept = comparison.__dict__["_changes_by_case"] = (len(comparison.changes), index)
    return kept[1].get((set_id, case_id), [])


def _scores(comparison: Comparison, set_id: str, case_id: str, metrics: list[str]) -> str:
    moved = [
        f"{c.metric} {fmt(c.before)} → {fmt(c.after)}"
        for c in _changes_of(comparison, set_id, case_id)
        if (c.metric in metrics or not metrics)
        and c.before is not None
        and c.after is not None
        and abs(c.after - c.before) >= 5e-4
    ]
    return ", ".join(moved)


def _title(s: SetRecord) -> str:
    return s.eval_set_id or s.file


def _case_item(
    s: SetRecord,
    case: CaseRecord,
    j: CaseJudgement | None,
    fail_on: set[str],
    comparison: Comparison | None,
) -> Item | None:
    """The case's place in the verdict, or None when it simply passed."""
    status = case.status
    base = {
        "set_id": s.eval_set_id,
        "case_id": case.eval_id,
        "set_title": _title(s),
        "file": case.file,
        "line": case.line,
    }
    commit = comparison.baseline_commit if comparison is not None else None
    if j is not None and j.judgement is Judgement.REGRESSION:
        assert comparison is not None
        scores = _scores(comparison, s.eval_set_id, case.eval_id, j.metrics)
        return Item(
            Kind.REGRESSION,
            "regression" in fail_on,
            change=_change(j),
            scores=scores,
            judged=_judged(j, commit),
            test=_test(j),
            # the metrics' change says what fell: the why is the turn that went wrong
            explain=lambda: _why_failed(case, metrics=not scores) or _why_failed(case),
            **base,
        )
    if status == Status.ERROR:
        return Item(
            Kind.ERROR,
            "error" in fail_on,
            change=_runs_now(case),
            explain=lambda: clip(error_reason(case), WHY_LIMIT),
            **base,
        )
    if status == Status.NOT_EVALUATED:
        return Item(
            Kind.NOT_EVALUATED,
            "not-evaluated" in fail_on,
            said=clip(not_evaluated_reason(case), WHY_LIMIT),
            **base,
        )
    if status == Status.SKIPPED:
        return Item(Kind.SKIPPED, False, said=clip(case.skipped or "not run", WHY_LIMIT), **base)
    if status == Status.COMPLETED:
        return Item(Kind.NOT_SCORED, False, said="ran but was not scored", **base)
    if status == Status.FAILED:
        blocks = "failure" in fail_on
        if j is None or j.judgement in (Judgement.UNCHANGED, Judgement.IMPROVED):
            return Item(
                Kind.FAILURE,
                blocks,
                change=_runs_now(case),
                explain=lambda: _why_failed(case),
                **base,
            )
        assert comparison is not None
        if j.judgement is Judgement.ACCEPTED:
            kind = Kind.ACCEPTED
        elif j.judgement is Judgement.TOLERATED:
            kind = Kind.TOLERATED
        elif j.judgement is Judgement.KNOWN_FAILURE:
            kind = Kind.KNOWN_FAILURE
        elif comparison.outage and not j.history_failed and j.failed_now == j.runs_now:
            # fail closed: not measured enough to pass
            return Item(
                Kind.UNCONFIRMED,
                True,
                change=_change(j),
                judged=_judged(j, commit),
                explain=lambda: clip(f"{_why_failed(case)} — {comparison.outage}", WHY_LIMIT),
                **base,
            )
        elif j.history_failed:
            kind = Kind.NOISE
        else:
            kind = Kind.UNCONFIRMED_FAILURE
        if blocks:
            kind = Kind.FAILURE  # thresholds gate this run: it blocks as a failure
        return Item(
            kind,
            blocks,
            change=_change(j),
            judged=_judged(j, commit),
            explain=lambda: (
                _why_failed(case)
                + (
                    f" — {j.not_blocking()}"
                    if kind in (Kind.NOISE, Kind.UNCONFIRMED_FAILURE)
                    else ""
                )
            ),
            **base,
        )
    # PASSED: flaky when some of its runs failed
    if not case.flaky:
        return None
    runs = outcomes(case)
    if True in runs and len(set(runs)) > 1:
        return Item(
            Kind.FLAKY,
            False,
            change=f"passed {runs.count(True)} of {runs_label(len(runs))}",
            said="passed the gate; some runs failed",
            **base,
        )
    return None


def _improved(s: SetRecord, case: CaseRecord, j: CaseJudgement, comparison: Comparison) -> Item:
    return Item(
        Kind.IMPROVED,
        False,
        s.eval_set_id,
        case.eval_id,
        _title(s),
        case.file,
        case.line,
        change=_change(j),
        scores=_scores(comparison, s.eval_set_id, case.eval_id, []),
        judged=_judged(j, comparison.baseline_commit),
    )


def _set_line(
    s: SetRecord, items: dict[str, Item], judgements: dict[tuple[str, str], CaseJudgement]
) -> SetLine:
    passed = blocking = quiet = skipped = runs = runs_passed = main_runs = main_passed = 0
    for case in s.cases:
        item = items.get(case.eval_id)
        if item is None:
            passed += 1
        elif item.kind is Kind.SKIPPED:
            skipped += 1
        elif item.blocking:
            blocking += 1
        else:
            quiet += 1
        if case.status in (Status.PASSED, Status.FAILED, Status.ERROR):
            done = outcomes(case)
            runs += len(done)
            runs_passed += done.count(True)
            j = judgements.get((s.eval_set_id, case.eval_id))
            if j is not None and j.history_runs:
                main_runs += j.history_runs
                main_passed += j.history_runs - j.history_failed
    return SetLine(
        s.eval_set_id,
        _title(s),
        s.file,
        len(s.cases),
        passed,
        blocking,
        quiet,
        skipped,
        runs,
        runs_passed,
        main_runs,
        main_passed,
    )


# --- the line --------------------------------------------------------------------------------


def _clauses(blocking: list[Item], quiet: list[Item], names: int, id_limit: int) -> tuple[str, str]:
    """The blocking clause (counts, with up to ``names`` case ids) and the not-blocking one."""
    parts = []
    left = names
    for kind in ORDER:
        of_kind = [i for i in blocking if i.kind is kind]
        if not of_kind:
            continue
        text = count(len(of_kind), kind)
        if kind is Kind.NOTHING:
            text += f" ({of_kind[0].change})"
        keys = [short_id(i.key, id_limit) for i in of_kind if i.key]
        if keys and left > 0:
            shown = keys[:left]
            left -= len(shown)
            more = len(keys) - len(shown)
            text += f" ({', '.join(shown)}{f' +{more} more' if more else ''})"
        parts.append(text)
    tally = ", ".join(
        count(sum(1 for i in quiet if i.kind is k), k)
        for k in ORDER
        if any(i.kind is k for i in quiet)
    )
    return "; ".join(parts), (f"{tally} did not block" if tally else "")


def _line(
    passed: bool, head: str, blocking: list[Item], quiet: list[Item], notices: list[str]
) -> str:
    """At most LINE_LIMIT characters: fewer and shorter names first, then shorter notices."""
    decision = "gate passed" if passed else "gate failed"
    # a notice's detail (after its colon) is said in full in every report's own section
    brief = [n.split(": ", 1)[0] for n in notices]
    tries = ((NAMES_SHOWN, ID_LIMIT), (NAMES_SHOWN, 24), (1, 24), (0, 0))
    for said in (notices, brief):
        for names, id_limit in tries:
            what, did_not = _clauses(blocking, quiet, names, id_limit)
            parts = [p for p in (head, what, did_not, *said) if p]
            line = f"{decision}: " + "; ".join(parts)
            if len(line) <= LINE_LIMIT:
                return line
    return clip(line, LINE_LIMIT)


def changed_of(results: RunResults) -> list[str]:
    raw = results.settings.get("bar_changes")
    return [c for c in raw if isinstance(c, str)] if isinstance(raw, list) else []


def verdict(results: RunResults) -> Verdict:
    """The gate's decision per ``fail_on``, and why. Exit 3 when errors kept cases from being
    scored, 1 when the gate failed, 0 when it passed. Nothing evaluated never passes.

    Every channel asks for it (at 20,000 cases it costs most of a second): it is kept on the
    results while they stay as they were — the same statuses, comparison and settings, and no
    redaction since (texts computed before a scrub may hold what it removes)."""
    from ci_eval import redact

    comparison = results.comparison
    key = (
        tuple(results.fail_on),
        results.interrupted,
        id(comparison),
        None if comparison is None else (len(comparison.cases), comparison.outage),
        redact.current().scrubs,
        len(changed_of(results)),
        hash(tuple(c.status for s in results.sets for c in s.cases)),
    )
    kept = results.__dict__.get("_verdict")
    if kept is not None and kept[0] == key:
        return kept[1]
    decision = _verdict(results)
    results.__dict__["_verdict"] = (key, decision)
    return decision


def _verdict(results: RunResults) -> Verdict:
    fail_on = set(results.fail_on)
    comparison = results.comparison
    judgements = comparison.by_case() if comparison is not None else {}
    blocking: list[Item] = []
    quiet: list[Item] = []
    improved: list[Item] = []
    sets = []
    evaluated = passed_cases = total = 0
    for s in results.sets:
        items: dict[str, Item] = {}
        for case in s.cases:
            total += 1
            status = case.status
            evaluated += status in (Status.PASSED, Status.FAILED)
            passed_cases += status == Status.PASSED
            j = judgements.get((s.eval_set_id, case.eval_id))
            item = _case_item(s, case, j, fail_on, comparison)
            if item is not None:
                items[case.eval_id] = item
                (blocking if item.blocking else quiet).append(item)
            if j is not None and j.judgement is Judgement.IMPROVED and comparison is not None:
                improved.append(_improved(s, case, j, comparison))
        sets.append(_set_line(s, items, judgements))
    if results.interrupted:
        blocking.append(
            Item(Kind.INTERRUPTED, "error" in fail_on, said="cases that did not start are errors")
        )
    if not evaluated:
        blocking.append(
            Item(
                Kind.NOTHING,
                True,
                change=f"{total} {'case' if total == 1 else 'cases'}",
                said="no case passed or failed its thresholds",
            )
        )
    notices: list[str] = []
    # what the pull request changed that moves the bar: said first, whatever the decision
    # the results file's settings are not checked item by item: read what is text
    changed = changed_of(results)
    if changed:
        notices.append(
            "gate settings changed by this pull request (not applied): "
            + ", ".join(c.split(": ", 1)[0] for c in changed)
        )
    new: list[str] = []
    removed: list[str] = []
    said_changes: list[str] = []  # what the pull request changed and is applied, said
    if comparison is not None:
        if comparison.suite_regressed:
            suite = comparison.suite
            assert suite is not None
            blocking.append(
                Item(
                    Kind.SUITE_DROP,
                    "regression" in fail_on,
                    change=suite.describe(),
                    said=suite.caveat(),
                )
            )
            if suite.caveat():  # nothing on main tells a PR's drop from a provider's bad day
                notices.append("the suite-wide drop may be the provider's: run the job again")
        elif comparison.suite is not None and comparison.suite.regressed:
            notices.append("the suite-wide drop is accepted")
        # a case skipped every time is in no history: it is listed as skipped, not as new
        skipped = {(i.set_id, i.case_id) for i in quiet if i.kind is Kind.SKIPPED}
        new = [f"{s}:{c}" for s, c in comparison.new_cases if (s, c) not in skipped]
        if any(i.kind is Kind.UNCONFIRMED for i in blocking):
            notices.append("too many failed at once to confirm: run the job again")
        # removed cases are items (a pull request can remove the cases it would fail: more
        # than max_removed blocks); those an [[accept]] entry accepts are listed apart
        removed = list(comparison.removed_accepted)
        allowed = results.settings.get("max_removed") or 0
        allowed = allowed if isinstance(allowed, int) and allowed >= 0 else 0
        for set_id, case_id in comparison.removed_cases:
            blocking.append(
                Item(
                    Kind.REMOVED,
                    len(comparison.removed_cases) > allowed,
                    set_id,
                    case_id,
                    set_id,
                    said="in main's history, not found by this run: accept its removal with an "
                    "[[accept]] entry in .ci-eval/accept.toml",
                )
            )
        said_changes += list(comparison.changed)
        short = comparison.short_history
        if short:
            notices.append(
                f"{len(short)} {'case' if len(short) == 1 else 'cases'} with a short history "
                f"(fewer than {comparison.min_history} runs on main)"
            )
    if said_changes:
        notices.append(
            f"changed by this pull request: {len(said_changes)} "
            f"{'change' if len(said_changes) == 1 else 'changes'} to what main had"
        )
    # a blocking item that is not blocking (outside fail_on) moves to the other list
    quiet += [i for i in blocking if not i.blocking]
    blocking = [i for i in blocking if i.blocking]
    quiet.sort(key=lambda i: ORDER.index(i.kind))
    blocking.sort(key=lambda i: ORDER.index(i.kind))
    passed = not blocking
    if passed:
        if comparison is not None:
            judged = len(comparison.cases)
            head = (
                f"0 regressions against main's history "
                f"({judged} {'case' if judged == 1 else 'cases'} judged)"
            )
        else:
            head = f"{passed_cases} of {evaluated} {'case' if evaluated == 1 else 'cases'} passed"
        exit_code = EXIT_OK
    else:
        head = ""
        infra = any(i.kind in (Kind.ERROR, Kind.INTERRUPTED) for i in blocking)
        exit_code = EXIT_INFRA if infra else EXIT_GATE
    line = _line(passed, head, blocking, quiet, notices)
    return Verdict(
        passed,
        exit_code,
        line,
        blocking,
        quiet,
        improved,
        new,
        removed,
        notices=notices,
        changed=changed,
        said=said_changes,
        sets=sets,
    )
