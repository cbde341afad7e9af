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

from dataclasses import dataclass, field
from typing import Any

from ci_eval.connectors.base import UNREADABLE
from ci_eval.errors import EXIT_GATE, EXIT_INFRA, EXIT_INPUT, EXIT_OK
from ci_eval.gate.items import (
    FAILED_ICON,
    ID_LIMIT,
    JUDGING_KINDS,
    NAMES_SHOWN,
    ORDER,
    PASSED_ICON,
    QUIET_ICON,
    SKIPPED_ICON,
    SKIPS,
    USAGE_KINDS,
    Item,
    Kind,
    case_item,
    clip,
    count,
    improved_item,
    short_id,
)
from ci_eval.gate.quarantine import expired_clause, held_clause, hold, of_cases
from ci_eval.gate.set_lines import SetLine, set_line
from ci_eval.gate.usage_items import usage_items
from ci_eval.model.comparison import ChangeKind, Comparison, Judgement
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, RunResults
from ci_eval.text import plural as words
from ci_eval.text.plural import plural

LINE_LIMIT = 200


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
    bar_changes: list[str] = field(default_factory=list)
    # what the pull request changed that main had and is applied (thresholds), said
    applied_changes: list[str] = field(default_factory=list)
    sets: list[SetLine] = field(default_factory=list)
    # a passing verdict's "what this run could detect: …" (ci_eval.gate.power); empty else
    power: str = ""
    # the cases quarantine.toml holds that did not pass: never blocking, listed apart (a case
    # is in one of the three lists, or in none)
    quarantined: list[Item] = field(default_factory=list)

    @property
    def icon(self) -> str:
        return PASSED_ICON if self.passed else FAILED_ICON

    def icons(self) -> set[str]:
        """The icons a report of this verdict shows: the gate's, its items', and the sets'
        table's (passed, does not block, skipped)."""
        items = self.blocking + self.not_blocking + self.improved + self.quarantined
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

    def by_case(self) -> dict[tuple[str, str], Item]:
        """Each listed case's item by (set id, case id): its own (how it did), else what it
        spent (a budget, a token or latency regression)."""
        found: dict[tuple[str, str], Item] = {}
        for i in self.blocking + self.not_blocking + self.quarantined:
            if i.kind in JUDGING_KINDS:  # about how cases are judged, listed apart
                continue
            key = (i.set_id, i.case_id)
            if key not in found or (found[key].kind in USAGE_KINDS and i.kind not in USAGE_KINDS):
                found[key] = i
        return found

    def tally(self, blocking: bool) -> str:
        """``3 regressions, 2 errors`` (empty when there are none)."""
        return ", ".join(count(n, k) for k, n in self.counts(blocking).items())


# --- the line --------------------------------------------------------------------------------


def _clauses(
    blocking: list[Item], quiet: list[Item], names: int, id_limit: int | None
) -> tuple[str, str]:
    """The blocking clause (counts, with up to ``names`` case ids) and the not-blocking one."""
    parts = []
    left = names
    for kind in ORDER:
        of_kind = [i for i in blocking if i.kind is kind]
        if of_kind:
            text, left = _clause(kind, of_kind, left, id_limit)
            parts.append(text)
    tally = ", ".join(
        count(sum(1 for i in quiet if i.kind is k), k)
        for k in ORDER
        if any(i.kind is k for i in quiet)
    )
    return "; ".join(parts), (f"{tally} did not block" if tally else "")


def _clause(kind: Kind, of_kind: list[Item], left: int, id_limit: int | None) -> tuple[str, int]:
    """One kind's count, with up to ``left`` of its case ids; and how many ids are left."""
    text = count(len(of_kind), kind)
    if kind is Kind.NOTHING:
        text += f" ({of_kind[0].change})"
    keys = [short_id(i.key, id_limit) for i in of_kind if i.key]
    if keys and left > 0:
        shown = keys[:left]
        left -= len(shown)
        more = len(keys) - len(shown)
        text += f" ({', '.join(shown)}{f' +{more} more' if more else ''})"
    return text, left


CHANGED = "gate settings changed by this pull request (not applied)"


def _line(
    passed: bool, head: str, blocking: list[Item], quiet: list[Item], notices: list[str]
) -> str:
    """At most LINE_LIMIT characters: fewer names first, each whole, then one name cut at its
    end, then shorter notices."""
    decision = "gate passed" if passed else "gate failed"
    # a notice's detail (after its colon) is said in full in every report's own section; what
    # the pull request changed of the bar keeps its detail longest, then the names of what
    # blocks, then the other notices' details
    brief = [n.partition(": ")[0] for n in notices]
    changes = [n if n.startswith(CHANGED) else b for n, b in zip(notices, brief, strict=True)]
    # (names shown, characters of each; None: whole): whole ids, fewer of them, before one
    # is cut
    tries = ((NAMES_SHOWN, None), (2, None), (1, None), (1, ID_LIMIT), (1, 24), (0, None))
    attempts = [(notices, tries[0])] + [(changes, t) for t in tries] + [(brief, t) for t in tries]
    for said, (names, id_limit) in attempts:
        what, did_not = _clauses(blocking, quiet, names, id_limit)
        parts = [p for p in (head, what, did_not, *said) if p]
        line = f"{decision}: " + "; ".join(parts)
        if len(line) <= LINE_LIMIT:
            return line
    return clip(line, LINE_LIMIT)


def judging_items(comparison: Comparison, blocks: bool) -> list[Item]:
    """With ``--fail-on judging-changed``, each change to how cases are judged: blocking
    unless an ``[[accept]]`` entry accepts it (then listed as accepted). Its key is the
    pattern an entry names: ``SET:CASE``, ``SET:*`` for a set's options."""
    if not blocks:
        return []
    out = []
    for change in comparison.judging:
        # a custom metric's code is every set's: no key
        set_id, case_id = ("", "") if change.set_id == "*" else (change.set_id, change.case_id)
        where = f" ({change.where})" if change.where and change.kind is not ChangeKind.CODE else ""
        base = {"set_id": set_id, "case_id": case_id, "set_title": set_id, "file": change.where}
        what = f"{change.kind.value}: {change.what()}{where}"
        if change.accepted is not None:
            out.append(
                Item(Kind.JUDGING_ACCEPTED, False, change=what, said=change.accepted, **base)
            )
            continue
        out.append(
            Item(
                Kind.JUDGING,
                True,
                change=what,
                said=f'accept it with an [[accept]] entry (case = "{change.set_id}:'
                f'{change.case_id}") in .ci-eval/accept.toml, or undo it',
                **base,
            )
        )
    return out


def _error_kinds(results: RunResults, errored: set[tuple[str, str]]) -> set[str]:
    """Why the ``errored`` cases errored: ``budget``, ``input`` or ``infra``, each once."""
    found: set[str] = set()
    if not errored:
        return found
    budget = results.settings.budget_reached is not None  # a limit was reached: said so
    for s in results.sets:
        for case in s.cases:
            if (s.eval_set_id, case.eval_id) in errored:
                found.add(_error_kind(case, budget))
    return found


def _error_kind(case: CaseRecord, budget: bool) -> str:
    """``budget`` when only a [budget] limit refused its calls (its agent's: not run; its
    judge's: not asked), ``input`` when its recording could not be read, else ``infra``."""
    error = case.error or ""
    if error.startswith(UNREADABLE):
        return "input"
    if not budget:
        return "infra"
    mark = "not run: budget reached ([budget] "
    if error.startswith(mark) or (error.startswith("turn ") and f": {mark}" in error):
        return "budget"
    failed = [m for m in case.metrics if m.status == Status.ERROR]
    if failed and all("not asked: budget reached ([budget] " in (m.reason or "") for m in failed):
        return "budget"
    return "infra"


def changed_of(results: RunResults) -> list[str]:
    return list(results.settings.bar_changes)


def verdict(results: RunResults) -> Verdict:
    """The gate's decision per ``fail_on``, and why. Exit 3 when errors kept cases from being
    scored, 1 when the gate failed, 0 when it passed. Nothing evaluated never passes.

    Every channel asks for it (on a large run it is not cheap): it is kept on the results
    while they stay as they were — the same statuses, comparison and settings, and no redaction
    since (texts computed before a scrub may hold what it removes)."""
    from ci_eval.text import redact

    comparison = results.comparison
    key = (
        tuple(results.fail_on),
        results.interrupted,
        id(comparison),
        None if comparison is None else (len(comparison.cases), comparison.outage),
        redact.current().scrubs,
        # every fact the stages left for the gate (max_removed, budget, selection...): a key
        # that named them one by one left some out
        repr(results.settings),
        hash(tuple(c.status for s in results.sets for c in s.cases)),
    )
    kept = getattr(results, "_verdict", None)  # not a field: never read from nor written to a file
    if kept is not None and kept[0] == key:
        return kept[1]
    decision = _verdict(results)
    results._verdict = (key, decision)  # type: ignore[attr-defined]
    return decision


@dataclass(slots=True)
class _Listed:
    """What the verdict lists as it is built: its items, its notices, and its counts."""

    blocking: list[Item] = field(default_factory=list)
    quiet: list[Item] = field(default_factory=list)
    improved: list[Item] = field(default_factory=list)
    quarantined: list[Item] = field(default_factory=list)  # held by quarantine.toml
    sets: list[Any] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    applied_changes: list[str] = field(default_factory=list)  # what the PR changed, applied
    evaluated: int = 0
    passed: int = 0
    total: int = 0


def _cases(results: RunResults, fail_on: set[str], listed: _Listed) -> None:
    """Each case's item, by its status and its judgement, and each set's line."""
    comparison = results.comparison
    judgements = comparison.by_case() if comparison is not None else {}
    quarantines = of_cases(results.settings.quarantine)
    for s in results.sets:
        items: dict[str, Item] = {}
        for case in s.cases:
            listed.total += 1
            listed.evaluated += case.status in (Status.PASSED, Status.FAILED)
            listed.passed += case.status == Status.PASSED
            j = judgements.get((s.eval_set_id, case.eval_id))
            item = case_item(s, case, j, fail_on, comparison)
            if item is not None:
                item = hold(item, quarantines.get((s.eval_set_id, case.eval_id)))
                items[case.eval_id] = item
                if item.quarantine is not None and not item.quarantine.expired:
                    listed.quarantined.append(item)
                else:
                    (listed.blocking if item.blocking else listed.quiet).append(item)
            if j is not None and j.judgement is Judgement.IMPROVED and comparison is not None:
                listed.improved.append(improved_item(s, case, j, comparison))
        listed.sets.append(set_line(s, items, judgements, results.settings.num_runs or 0))


def _run_items(results: RunResults, fail_on: set[str], listed: _Listed) -> None:
    """An interrupted run, and a run that measured nothing."""
    if results.interrupted:
        listed.blocking.append(
            Item(Kind.INTERRUPTED, "error" in fail_on, said="cases that did not start are errors")
        )
    carried = sum(1 for s in results.sets for c in s.cases if c.carried)
    if not listed.evaluated and not carried:  # every case carried main's result: none measured
        total = listed.total
        listed.blocking.append(
            Item(
                Kind.NOTHING,
                True,
                change=plural(total, "case"),
                said="no case passed or failed its thresholds",
            )
        )


def _suite_items(
    comparison: Comparison, fail_on: set[str], listed: _Listed, ruled_out: str | None
) -> None:
    suite = comparison.suite
    if comparison.suite_regressed and suite is not None:
        # --control auto: the merge base's agent showed no drop today, so not the provider's
        caveat = "" if ruled_out else suite.caveat()
        listed.blocking.append(
            Item(
                Kind.SUITE_DROP,
                "regression" in fail_on,
                change=suite.describe(),
                said=ruled_out or caveat,
            )
        )
        if caveat:  # nothing on main tells a PR's drop from a provider's bad day
            listed.notices.append("the suite-wide drop may be the provider's: run the job again")
    elif suite is not None and suite.regressed:
        listed.notices.append("the suite-wide drop is accepted")


def _removed_items(comparison: Comparison, allowed: int, listed: _Listed) -> None:
    """Removed cases are items (a pull request can remove the cases it would fail: more than
    ``max_removed`` blocks); those an ``[[accept]]`` entry accepts are listed apart."""
    listed.removed = list(comparison.removed_accepted)
    for set_id, case_id in comparison.removed_cases:
        listed.blocking.append(
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


def _comparison_items(results: RunResults, fail_on: set[str], listed: _Listed) -> None:
    """What the comparison with main's history adds: the suite-wide drop, new and removed
    cases, changes to how cases are judged, short histories."""
    comparison = results.comparison
    if comparison is None:
        return
    _suite_items(comparison, fail_on, listed, results.settings.day_ruled_out)
    # a case skipped every time is in no history: it is listed as skipped, not as new
    skipped = {(i.set_id, i.case_id) for i in listed.quiet if i.kind in SKIPS}
    listed.new = [f"{s}:{c}" for s, c in comparison.new_cases if (s, c) not in skipped]
    if any(i.kind is Kind.UNCONFIRMED for i in listed.blocking):
        listed.notices.append("too many failed at once to confirm: run the job again")
    _removed_items(comparison, results.settings.max_removed or 0, listed)
    listed.applied_changes += [c.text() for c in comparison.judging]
    listed.applied_changes += comparison.changed
    listed.blocking += judging_items(comparison, "judging-changed" in fail_on)
    short = comparison.short_history
    if short:
        listed.notices.append(
            f"{plural(len(short), 'case')} with a short history "
            f"(fewer than {plural(comparison.min_history, 'run')} on main)"
        )


def _run_notices(results: RunResults, listed: _Listed) -> None:
    """What the run's stages said: a selection, a stop, no baseline, the PR's changes."""
    facts = results.settings
    if facts.day_shared is not None:
        listed.notices.append(facts.day_shared)
    if facts.selection is not None:
        listed.notices.insert(0, facts.selection)
    if facts.stopped is not None:
        listed.notices.insert(0, facts.stopped)
    if facts.no_run_left:  # why a failure stayed unconfirmed: before the line can cut it
        listed.notices.insert(
            0,
            f"no recorded run left to confirm {plural(len(facts.no_run_left), 'case')}: "
            + words.listed(facts.no_run_left, 3),
        )
    if results.comparison is None and facts.no_baseline is not None:
        listed.notices.append(f"gate on thresholds only: no baseline at {facts.no_baseline}")
    said = listed.applied_changes
    if said:
        listed.notices.append(
            f"changed by this pull request: {plural(len(said), 'change')} to how cases are judged"
        )


def _decision(results: RunResults, listed: _Listed) -> tuple[str, int]:
    """The line's head when the gate passed, and the exit code."""
    if not listed.blocking:
        comparison = results.comparison
        if comparison is not None:
            judged = len(comparison.cases)
            head = f"0 regressions against main's history ({plural(judged, 'case')} judged)"
        else:
            evaluated = listed.evaluated
            head = f"{listed.passed} of {plural(evaluated, 'case')} passed"
        return head, EXIT_OK
    # why each errored case errored: a [budget] limit is the gate's, an unreadable recording
    # is bad input, anything else an outage
    errored = {(i.set_id, i.case_id) for i in listed.blocking if i.kind is Kind.ERROR}
    why = _error_kinds(results, errored)
    infra = any(i.kind is Kind.INTERRUPTED for i in listed.blocking) or "infra" in why
    return "", EXIT_INPUT if "input" in why else EXIT_INFRA if infra else EXIT_GATE


def _verdict(results: RunResults) -> Verdict:
    fail_on = set(results.fail_on)
    listed = _Listed()
    _cases(results, fail_on, listed)
    _run_items(results, fail_on, listed)
    # what the pull request changed that moves the bar: said first, whatever the decision
    changed = changed_of(results)
    if changed:
        listed.notices.append(f"{CHANGED}: " + ", ".join(c.partition(": ")[0] for c in changed))
    _comparison_items(results, fail_on, listed)
    listed.blocking += usage_items(results)  # [budget] limits; token and latency regressions
    _run_notices(results, listed)
    # a blocking item that is not blocking (outside fail_on) moves to the other list
    quiet = sorted(
        listed.quiet + [i for i in listed.blocking if not i.blocking],
        key=lambda i: ORDER.index(i.kind),
    )
    blocking = sorted((i for i in listed.blocking if i.blocking), key=lambda i: ORDER.index(i.kind))
    listed.blocking = blocking
    # quarantine.toml's clauses next to the counts: what it held, what no longer is
    for clause in (held_clause(listed.quarantined), expired_clause(blocking)):
        if clause:
            listed.notices.insert(0, clause)
    head, exit_code = _decision(results, listed)
    passed = not blocking
    return Verdict(
        passed,
        exit_code,
        _line(passed, head, blocking, quiet, listed.notices),
        blocking,
        quiet,
        listed.improved,
        listed.new,
        listed.removed,
        notices=listed.notices,
        bar_changes=changed,
        applied_changes=listed.applied_changes,
        sets=listed.sets,
        power=_power(results) if passed else "",
        quarantined=listed.quarantined,
    )


def _power(results: RunResults) -> str:
    """What a pass proves: the drop it would have caught, by the gate's own model."""
    comparison = results.comparison
    if comparison is None or comparison.power is None:
        return ""
    return comparison.power.sentence()
