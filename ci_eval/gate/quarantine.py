"""``quarantine.toml`` (beside ci-eval.toml): the flaky cases that do not block, each with an
owner and an end date. It places the bar, so a pull request is judged by the base branch's copy
(read at the merge base, like ci-eval.toml's bar settings); what the PR's copy changed applies
once merged, and is said as a bar change::

    [[quarantine]]
    case = "weather_basic:berlin_expected_to_fail"   # SET_ID:CASE_ID: one case, no pattern
    reason = "upstream flakiness, tracked in #123"
    owner = "team-agents"
    until = "2027-01-31"                             # the last day it holds

A quarantined case still runs and is recorded; its failure does not block and is listed apart
in every report. Past ``until`` it blocks again, and the verdict says the quarantine expired.
Where ``accept.toml`` accepts an intended change (the PR's own file), this silences a flaky case
(the base's file): :doc:`docs/gate.md` sets them side by side.

Pure: the text in, the entries, the PR's changes, the hook and the suggestions out; the day is
passed in, never read here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, TypeAdapter, ValidationError

from ci_eval.errors import InputError
from ci_eval.gate.items import SKIPS, Item, Kind
from ci_eval.io import tomltext
from ci_eval.io.validation import table_problem
from ci_eval.model.quarantine import Quarantine
from ci_eval.text.plural import plural

FILE_NAME = "quarantine.toml"
KNOWN = ("case", "owner", "reason", "until")
# what a quarantine holds: the case's own outcome, not what it spent nor that it was not run
HELD = frozenset(Kind) - {*SKIPS, Kind.FLAKY, Kind.NOT_SCORED, Kind.IMPROVED}
_REQUIRED = {
    "case": 'case is required: "SET_ID:CASE_ID"',
    "reason": "reason is required: say why the case is quarantined (and where it is tracked)",
    "owner": "owner is required: the team or person who lifts the quarantine",
    "until": 'until is required: the last day the quarantine holds ("YYYY-MM-DD")',
}


def _said(field_name: str) -> Any:
    """A required text: refused when missing, blank or not text."""

    def check(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(_REQUIRED[field_name])
        return " ".join(value.split())

    return BeforeValidator(check)


def _case(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(_REQUIRED["case"])
    set_id, colon, case_id = value.strip().partition(":")
    if not colon or not set_id or not case_id:
        raise ValueError(f'case must be "SET_ID:CASE_ID", not {value.strip()!r}')
    return value.strip()


def _day(value: Any) -> date:
    """A TOML date (``until = 2027-01-31``) or its text (``"2027-01-31"``); not a time."""
    if isinstance(value, date) and not hasattr(value, "hour"):
        return value
    if isinstance(value, str):
        try:
            if len(value.strip()) == 10:
                return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(f'until must be a date "YYYY-MM-DD", not {value!r}')


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``[[quarantine]]`` table, as the file says it."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    case: Annotated[str, BeforeValidator(_case)]
    reason: Annotated[str, _said("reason")]
    owner: Annotated[str, _said("owner")]
    until: Annotated[date, BeforeValidator(_day)]

    def on(self, today: date) -> Quarantine:
        """The entry as it stands on ``today``: expired once ``until`` has passed."""
        return Quarantine(
            self.case, self.reason, self.owner, self.until.isoformat(), today > self.until
        )


@dataclass(slots=True)
class QuarantineFile:
    __pydantic_config__ = ConfigDict(extra="forbid")

    quarantine: list[Entry] = dataclasses.field(default_factory=list)


def _problem(exc: ValidationError) -> tuple[str, str | None]:
    """The first problem in the file's words, and where (``quarantine[0]``)."""
    return table_problem(exc, "quarantine", KNOWN, _REQUIRED, at_field=True)


def entries_of(data: Any, where: str) -> list[Entry]:
    """The parsed file's entries, checked: a bad one refused in one line naming the file, the
    entry and the field; one case quarantined twice too (which owner, which day?)."""
    try:
        found = TypeAdapter(QuarantineFile).validate_python(data).quarantine
    except ValidationError as exc:
        message, place = _problem(exc)
        raise InputError(message, path=where, json_path=place) from None
    seen: dict[str, int] = {}
    for at, entry in enumerate(found):
        if entry.case in seen:
            raise InputError(
                f"{entry.case} is quarantined twice (also quarantine[{seen[entry.case]}]): "
                "keep one entry",
                path=where,
                json_path=f"quarantine[{at}].case",
            )
        seen[entry.case] = at
    return found


def read_entries(text: str, where: str) -> list[Entry]:
    """``quarantine.toml``'s entries (read from ``where``), checked (see :func:`entries_of`)."""
    return entries_of(tomltext.parse(text, where), where)


def resolve(entries: Iterable[Entry], today: date) -> list[Quarantine]:
    """The entries as the gate applies them on ``today``."""
    return [e.on(today) for e in entries]


# --- what a pull request changed --------------------------------------------------------------


def changes(mine: list[Entry], theirs: list[Entry], where: str) -> list[str]:
    """What the pull request's copy (``mine``) changed of the base's (``theirs``), one bar
    change each (the base's applies until it is merged): ``quarantine.toml + set:case: …``."""
    base = {e.case: e for e in theirs}
    head = {e.case: e for e in mine}
    said = []
    for case in sorted(head.keys() - base.keys()):
        e = head[case]
        said.append(
            f"{where} + {case}: until {e.until} ({e.owner}): {e.reason}; applies once merged"
        )
    for case in sorted(head.keys() & base.keys()):
        e, b = head[case], base[case]
        moved = [
            f"{name} {new} (base: {old})"
            for name, new, old in (
                ("until", e.until, b.until),
                ("owner", e.owner, b.owner),
                ("reason", e.reason, b.reason),
            )
            if new != old
        ]
        if moved:
            said.append(f"{where} {case}: " + ", ".join(moved) + "; the base's applies")
    for case in sorted(base.keys() - head.keys()):
        said.append(f"{where} - {case}: lifted; the base's quarantine applies until merged")
    return said


# --- the gate's hook ----------------------------------------------------------------------------


def of_cases(quarantines: Iterable[Quarantine]) -> dict[tuple[str, str], Quarantine]:
    return {tuple(q.case.split(":", 1)): q for q in quarantines}  # type: ignore[misc]


def hold(item: Item, quarantine: Quarantine | None) -> Item:
    """A case's item under its quarantine: held (never blocking) while it holds, marked and as
    it was (blocking, if it blocks) once expired; any other item as it is."""
    if quarantine is None or item.kind not in HELD:
        return item
    if quarantine.expired:
        return dataclasses.replace(item, quarantine=quarantine)
    return dataclasses.replace(item, blocking=False, quarantine=quarantine)


def held_clause(held: list[Item]) -> str:
    """The verdict's clause for the held cases: ``1 quarantined case failed (quarantine until
    2027-01-31, team-agents)``."""
    if not held:
        return ""
    quarantines = [i.quarantine for i in held if i.quarantine is not None]
    if len(held) == 1 and quarantines:
        return f"1 quarantined case failed (quarantine {quarantines[0].terms()})"
    days = sorted({q.until for q in quarantines})
    span = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    return f"{plural(len(held), 'quarantined case')} failed (quarantines until {span})"


def expired_clause(blocking: list[Item]) -> str:
    """``quarantine of set:case expired on 2027-01-31`` for the blocking cases whose quarantine
    has passed (empty when none)."""
    lapsed = [i for i in blocking if i.quarantine is not None and i.quarantine.expired]
    if not lapsed:
        return ""
    if len(lapsed) == 1:
        q = lapsed[0].quarantine
        assert q is not None
        return f"quarantine of {q.case} expired on {q.until} ({q.owner})"
    named = ", ".join(f"{i.key} ({i.quarantine.until})" for i in lapsed if i.quarantine)
    return f"{len(lapsed)} quarantines expired: {named}"


def stale(quarantines: Iterable[Quarantine], cases: set[tuple[str, str]]) -> list[str]:
    """The entries to remove, said (never an error): one naming no case of the run; one whose
    day has passed (its case blocks again if it fails)."""
    said = []
    for q in quarantines:
        set_id, _, case_id = q.case.partition(":")
        if (set_id, case_id) not in cases:
            said.append(f"{FILE_NAME}: {q.case} matches no case of this run: remove the entry")
        elif q.expired:
            said.append(
                f"{FILE_NAME}: the quarantine of {q.case} ({q.owner}) expired on {q.until}: "
                "remove the entry, or extend it"
            )
    return said


# --- the cases to suggest -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FlipRate:
    """How often a case's outcome on main flipped between consecutive runs: ``flips`` of its
    ``runs - 1`` transitions (``ci-eval history``'s flip rates)."""

    set_id: str
    case_id: str
    runs: int
    flips: int

    @property
    def rate(self) -> float:
        return self.flips / (self.runs - 1) if self.runs > 1 else 0.0

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}"


MIN_RATE = 0.3  # a case that flips on nearly a third of its runs is not its change's to fix
MIN_RUNS = 5  # fewer runs on main say too little to quarantine on
DAYS = 30  # a quarantine ends: a month to fix the case, or to extend it on purpose


def _quoted(text: str) -> str:
    """A TOML basic string (case text is hostile: its quotes and controls escaped; JSON's
    escapes are TOML's, but for DEL, which TOML wants escaped too)."""
    import json

    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _named(rate: FlipRate) -> bool:
    """Can an entry name the case as it is (no blank set or case id, no space at either end,
    which the file's reader strips)?"""
    key = rate.key
    return (
        bool(rate.set_id.strip() and rate.case_id.strip())
        and key == key.strip()
        and (":" not in rate.set_id)
    )


# a suggested entry's owner until someone takes it: a valid entry (it pastes and applies), which
# says in the file and in every report that nobody owns it yet
UNASSIGNED = "unassigned: name who lifts it"


def suggest(
    rates: Iterable[FlipRate],
    today: date,
    *,
    quarantined: Iterable[str] = (),
    owner: str = UNASSIGNED,
    min_rate: float = MIN_RATE,
    min_runs: int = MIN_RUNS,
    days: int = DAYS,
) -> str:
    """``[[quarantine]]`` entries, ready to paste into quarantine.toml, for the cases whose
    flip rate on main is at least ``min_rate`` over at least ``min_runs`` runs and that are not
    ``quarantined`` already: the flakiest first, ending ``days`` after ``today``. Empty when
    no case qualifies."""
    skip = set(quarantined)
    picked = sorted(
        (
            r
            for r in rates
            if r.runs >= min_runs and r.rate >= min_rate and r.key not in skip and _named(r)
        ),
        key=lambda r: (-r.rate, r.key),
    )
    until = (today + timedelta(days=days)).isoformat()
    blocks = []
    for r in picked:
        reason = (
            f"flaky on main: its outcome flipped {r.flips} times in its last {r.runs} runs "
            f"({r.rate:.0%})"
        )
        blocks.append(
            "[[quarantine]]\n"
            f"case = {_quoted(r.key)}\n"
            f"reason = {_quoted(reason)}\n"
            f"owner = {_quoted(owner)}\n"
            f'until = "{until}"\n'
        )
    return "\n".join(blocks)
