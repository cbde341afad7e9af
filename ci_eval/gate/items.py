"""What the verdict lists: each case (or suite-wide finding) as an :class:`Item` — its kind, before
→ after, the history it was judged against and one line of why — and each eval set's line, with
the words and icons every channel uses for them. Pure: from the results and their comparison."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ci_eval.gate.history import case_metric_fails, run_fails
from ci_eval.model.comparison import (
    Basis,
    CaseJudgement,
    Comparison,
    Judgement,
    MetricChange,
    runs_label,
)
from ci_eval.model.describe import (
    error_reason,
    failing_metrics,
    fmt,
    invocation_diffs,
    not_evaluated_reason,
    run_outcome,
    shown_run,
    with_run,
)
from ci_eval.model.quarantine import Quarantine
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, SetRecord

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
    # --fail-on judging-changed: a change to how cases are judged no [[accept]] accepts
    JUDGING = "judging changed"
    BUDGET = "over budget"  # a [budget] limit exceeded (ci_eval.gate.usage_items)
    TOKENS = "token regression"  # tokens per run rose beyond the case's history
    LATENCY = "latency regression"  # slower per run beyond the case's history and the runner
    UNMEASURED_USAGE = "usage not measured"  # a budget or main's history needs what is unreported
    KNOWN_FAILURE = "known failure"
    NOISE = "usual noise"
    UNCONFIRMED_FAILURE = "unconfirmed failure"  # failed where main never did; not confirmed
    TOLERATED = "within tolerance"  # a regression whose scores fell no more than --tolerance
    FLAKY = "flaky"
    ACCEPTED = "accepted"
    JUDGING_ACCEPTED = "judging change accepted"  # one an [[accept]] entry accepts
    NOT_SCORED = "not scored"
    SKIPPED = "skipped"
    NOT_RERUN = "not re-run"  # --select changed: unchanged since main's latest run of it
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
    Kind.UNMEASURED_USAGE,
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
    Kind.JUDGING: ("judging change not accepted", "judging changes not accepted"),
    Kind.BUDGET: ("budget exceeded", "budgets exceeded"),
    Kind.TOKENS: ("token regression", "token regressions"),
    Kind.LATENCY: ("latency regression", "latency regressions"),
    Kind.UNMEASURED_USAGE: ("case's usage not measured", "cases' usage not measured"),
    Kind.KNOWN_FAILURE: ("known failure", "known failures"),
    Kind.NOISE: ("failure within its usual noise", "failures within their usual noise"),
    Kind.UNCONFIRMED_FAILURE: ("unconfirmed failure", "unconfirmed failures"),
    Kind.TOLERATED: ("regression within the tolerance", "regressions within the tolerance"),
    Kind.FLAKY: ("flaky", "flaky"),
    Kind.ACCEPTED: ("accepted change", "accepted changes"),
    Kind.JUDGING_ACCEPTED: ("accepted judging change", "accepted judging changes"),
    Kind.NOT_SCORED: ("not scored", "not scored"),
    Kind.SKIPPED: ("skipped", "skipped"),
    Kind.NOT_RERUN: ("not re-run", "not re-run"),
    Kind.IMPROVED: ("improved", "improved"),
}
# the order of the clauses and of the lists: what blocks hardest first
ORDER = list(NOUNS)
# what a case spent rather than how it did: listed beside the case's own item, if any
USAGE_KINDS = (Kind.BUDGET, Kind.TOKENS, Kind.LATENCY, Kind.UNMEASURED_USAGE)
SKIPS = (Kind.SKIPPED, Kind.NOT_RERUN)  # not run: listed apart, never blocking
# a change to how cases are judged, not a case's outcome: listed apart from the cases
JUDGING_KINDS = (Kind.JUDGING, Kind.JUDGING_ACCEPTED)


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


def short_id(key: str, limit: int | None = ID_LIMIT) -> str:
    """A case id of at most ``limit`` characters (None: whole), cut at its end: the set and the
    id's start read as they are, and "…" says there is more (a cut in the middle made
    "momo_ledger…acy_boundary" of an id no one could then find)."""
    if limit is None or len(key) <= limit:
        return key
    return f"{key[: limit - 1]}…"


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
    # the case's quarantine (quarantine.toml) when one names it: held, or expired
    quarantine: Quarantine | None = None
    # why, read from the case's runs when first asked: the gate's decision needs no why, and a
    # large run keeps their runs on disk (reading them back costs)
    explain: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    @functools.cached_property
    def why(self) -> str:
        """One line: the tool-call difference, the response, the error — read once, then
        kept beside the item's fields (which it leaves as they were)."""
        return self.explain() if self.explain is not None else self.said

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}" if self.case_id else ""

    @property
    def icon(self) -> str:
        if self.kind is Kind.IMPROVED:
            return IMPROVED_ICON
        if not self.blocking:
            return SKIPPED_ICON if self.kind in SKIPS else QUIET_ICON
        return UNMEASURED_ICON if self.kind in UNMEASURED else WORSE_ICON

    @property
    def label(self) -> str:
        """The word in capitals, as the terminal and annotations show it: ``REGRESSION``."""
        return "FAILED" if self.kind is Kind.FAILURE else str(self.kind).upper()

    def text(self) -> str:
        """Everything about it in one line (terminal, annotations, JUnit)."""
        parts = [self.change, self.scores, self.judged, self.why]
        return "; ".join(p for p in parts if p)


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
    gating = [m for m in case.metrics if not m.informational and m.threshold is not None and m.runs]
    if gating and case.status != Status.ERROR:
        if all(len(m.runs) == 1 and not m.run_fails for m in gating):
            # one run, each verdict its score against the threshold (a large run's every case,
            # asked for by each report): what run_fails works out, said directly
            fails = [m.runs[0] < m.threshold for m in gating if m.runs[0] is not None]  # type: ignore[operator]
            return [not any(fails) if fails else None]
        per_metric = [case_metric_fails(m) for m in gating]
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
    elif j.basis is Basis.HISTORY:
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
    if j.p_value is not None and j.failed_now and j.basis is Basis.HISTORY:
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
    kept = getattr(comparison, "_changes_by_case", None)  # not a field: never in a file
    if kept is None or kept[0] != len(comparison.changes):
        index: dict[tuple[str, str], list[MetricChange]] = {}
        for c in comparison.changes:
            index.setdefault((c.set_id, c.case_id), []).append(c)
        kept = (len(comparison.changes), index)
        comparison._changes_by_case = kept  # type: ignore[attr-defined]
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


def case_item(
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
    if j is not None and j.judgement is Judgement.REGRESSION and comparison is not None:
        return _regression_item(case, j, fail_on, comparison, base)
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
        kind = Kind.NOT_RERUN if case.carried else Kind.SKIPPED
        return Item(kind, False, said=clip(case.skipped or "not run", WHY_LIMIT), **base)
    if status == Status.COMPLETED:
        return Item(Kind.NOT_SCORED, False, said="ran but was not scored", **base)
    if status == Status.FAILED:
        return _failed_item(case, j, fail_on, comparison, base)
    return _flaky_item(case, base)  # PASSED: flaky when some of its runs failed


def _regression_item(
    case: CaseRecord,
    j: CaseJudgement,
    fail_on: set[str],
    comparison: Comparison,
    base: dict[str, Any],
) -> Item:
    scores = _scores(comparison, base["set_id"], case.eval_id, j.metrics)
    return Item(
        Kind.REGRESSION,
        "regression" in fail_on,
        change=_change(j),
        scores=scores,
        judged=_judged(j, comparison.baseline_commit),
        test=_test(j),
        # the metrics' change says what fell: the why is the turn that went wrong
        explain=lambda: _why_failed(case, metrics=not scores) or _why_failed(case),
        **base,
    )


# a failing case's kind of item, by its judgement when it is not a regression
FAILED_KINDS = {
    Judgement.ACCEPTED: Kind.ACCEPTED,
    Judgement.TOLERATED: Kind.TOLERATED,
    Judgement.KNOWN_FAILURE: Kind.KNOWN_FAILURE,
}


def _failed_item(
    case: CaseRecord,
    j: CaseJudgement | None,
    fail_on: set[str],
    comparison: Comparison | None,
    base: dict[str, Any],
) -> Item:
    """A case below its thresholds that is no regression: by its thresholds alone without
    main's history, else as its judgement says (accepted, tolerated, known, noise...)."""
    blocks = "failure" in fail_on
    if j is None or comparison is None or j.judgement in (Judgement.UNCHANGED, Judgement.IMPROVED):
        return Item(
            Kind.FAILURE,
            blocks,
            change=_runs_now(case),
            explain=lambda: _why_failed(case),
            **base,
        )
    commit = comparison.baseline_commit
    kind = FAILED_KINDS.get(j.judgement)
    if kind is None and comparison.outage and not j.history_failed and j.failed_now == j.runs_now:
        # fail closed: not measured enough to pass
        return Item(
            Kind.UNCONFIRMED,
            True,
            change=_change(j),
            judged=_judged(j, commit),
            explain=lambda: clip(f"{_why_failed(case)} — {comparison.outage}", WHY_LIMIT),
            **base,
        )
    if kind is None:
        kind = Kind.NOISE if j.history_failed else Kind.UNCONFIRMED_FAILURE
    if blocks:
        kind = Kind.FAILURE  # thresholds gate this run: it blocks as a failure
    quiet = kind in (Kind.NOISE, Kind.UNCONFIRMED_FAILURE)
    return Item(
        kind,
        blocks,
        change=_change(j),
        judged=_judged(j, commit),
        explain=lambda: _why_failed(case) + (f" — {j.not_blocking()}" if quiet else ""),
        **base,
    )


def _flaky_item(case: CaseRecord, base: dict[str, Any]) -> Item | None:
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


def improved_item(s: SetRecord, case: CaseRecord, j: CaseJudgement, comparison: Comparison) -> Item:
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
