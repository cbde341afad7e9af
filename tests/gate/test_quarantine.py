"""``quarantine.toml`` read as a typed record (a bad entry refused in one line naming the file,
the entry and the field), resolved against a day passed in, what a pull request changed of it,
the gate's hook, and the entries suggested from main's flip rates."""

from __future__ import annotations

import tomllib
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.gate.items import Item, Kind
from ci_eval.gate.quarantine import (
    FlipRate,
    changes,
    entries_of,
    expired_clause,
    held_clause,
    hold,
    read_entries,
    resolve,
    stale,
    suggest,
)

GOOD = """
[[quarantine]]
case = "weather_basic:berlin_expected_to_fail"
reason = "upstream flakiness, tracked in #123"
owner = "team-agents"
until = "2027-01-31"
"""


def _entry(case: str = "s:c", until: str = "2027-01-31", **more: str) -> str:
    fields = {"case": case, "reason": "flaky (#1)", "owner": "team", "until": until, **more}
    return "[[quarantine]]\n" + "".join(f'{k} = "{v}"\n' for k, v in fields.items())


def test_an_entry_is_read_with_its_day() -> None:
    (entry,) = read_entries(GOOD, "quarantine.toml")
    assert entry.case == "weather_basic:berlin_expected_to_fail"
    assert entry.owner == "team-agents" and entry.until == date(2027, 1, 31)


def test_a_toml_date_is_a_day_too() -> None:
    text = GOOD.replace('until = "2027-01-31"', "until = 2027-01-31")
    assert read_entries(text, "quarantine.toml")[0].until == date(2027, 1, 31)


def test_an_empty_file_quarantines_nothing() -> None:
    assert read_entries("", "quarantine.toml") == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (GOOD.replace('owner = "team-agents"\n', ""), "quarantine[0].owner: owner is required"),
        (GOOD.replace('owner = "team-agents"', 'owner = " "'), "quarantine[0].owner: owner is"),
        (GOOD.replace('reason = "upstream', 'reazon = "upstream'), "unknown key(s) reazon; known"),
        (GOOD.replace('"2027-01-31"', '"31/01/2027"'), "quarantine[0].until: until must be a date"),
        (GOOD.replace('"2027-01-31"', "2027-01-31T10:00:00"), "until must be a date"),
        (GOOD.replace('"2027-01-31"', '"2027-02-30"'), "until must be a date"),
        (GOOD.replace('until = "2027-01-31"\n', ""), "quarantine[0].until: until is required"),
        (
            GOOD.replace("weather_basic:berlin_expected_to_fail", "berlin"),
            'must be "SET_ID:CASE_ID"',
        ),
        (GOOD + GOOD, "quarantined twice (also quarantine[0]): keep one entry"),
        ("quarantine = 1\n", "quarantine must be an array of tables ([[quarantine]])"),
        ("quarantine = [1]\n", "quarantine[0]: expected a table"),
        ("[[accept]]\n", "unknown key(s) accept; the file holds [[quarantine]] entries"),
        ("[[quarantine]\n", "not valid TOML"),
    ],
)
def test_a_bad_entry_is_refused_in_one_line_naming_the_file_entry_and_field(
    text: str, said: str
) -> None:
    with pytest.raises(InputError) as refused:
        read_entries(text, "quarantine.toml")
    line = str(refused.value)
    assert said in line and line.startswith("quarantine.toml") and "\n" not in line


VALUES = st.recursive(
    st.booleans() | st.integers(-5, 5) | st.text(max_size=12) | st.dates(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["case", "reason", "owner", "until", "x"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["quarantine", "other"]), VALUES, max_size=2))
def test_any_toml_is_read_or_refused_in_one_line(data: dict[str, Any]) -> None:
    try:
        found = entries_of(data, "quarantine.toml")  # what the TOML parser gives
    except InputError as refused:
        assert "\n" not in str(refused) and str(refused).startswith("quarantine.toml")
        return
    for entry in found:
        assert ":" in entry.case and entry.reason and entry.owner
        assert isinstance(entry.until, date)


def test_a_quarantine_holds_through_its_last_day_and_expires_after_it() -> None:
    entries = read_entries(GOOD, "quarantine.toml")
    assert not resolve(entries, date(2027, 1, 31))[0].expired
    assert resolve(entries, date(2027, 2, 1))[0].expired


def _failed(blocking: bool = True) -> Item:
    return Item(Kind.REGRESSION, blocking, "s", "c", "s", change="passed 6 of 6 → failed 3 of 3")


def test_a_held_failure_does_not_block_and_keeps_its_outcome() -> None:
    (q,) = resolve(read_entries(_entry(), "q"), date(2026, 1, 1))
    held = hold(_failed(), q)
    assert not held.blocking and held.kind is Kind.REGRESSION and held.quarantine == q
    assert held.change == "passed 6 of 6 → failed 3 of 3"
    assert held_clause([held]) == "1 quarantined case failed (quarantine until 2027-01-31, team)"


def test_an_expired_quarantine_blocks_again_and_says_so() -> None:
    (q,) = resolve(read_entries(_entry(), "q"), date(2027, 2, 1))
    lapsed = hold(_failed(), q)
    assert lapsed.blocking and lapsed.quarantine == q
    assert expired_clause([lapsed]) == "quarantine of s:c expired on 2027-01-31 (team)"


def test_a_skip_is_not_held() -> None:
    (q,) = resolve(read_entries(_entry(), "q"), date(2026, 1, 1))
    skipped = Item(Kind.SKIPPED, False, "s", "c")
    assert hold(skipped, q) is skipped


def test_an_entry_naming_no_case_is_said_not_refused() -> None:
    quarantines = resolve(read_entries(_entry("s:gone"), "q"), date(2026, 1, 1))
    assert stale(quarantines, {("s", "c")}) == [
        "quarantine.toml: s:gone matches no case of this run: remove the entry"
    ]


def test_what_a_pull_request_added_extended_and_lifted_is_said() -> None:
    base = read_entries(_entry("s:a", "2027-01-31") + _entry("s:b"), "q")
    head = read_entries(_entry("s:a", "2027-06-30") + _entry("s:new"), "q")
    assert changes(head, base, "quarantine.toml") == [
        "quarantine.toml + s:new: until 2027-01-31 (team): flaky (#1); applies once merged",
        "quarantine.toml s:a: until 2027-06-30 (base: 2027-01-31); the base's applies",
        "quarantine.toml - s:b: lifted; the base's quarantine applies until merged",
    ]
    assert changes(base, base, "quarantine.toml") == []


def test_the_flakiest_cases_on_main_are_suggested_as_entries_to_paste() -> None:
    rates = [
        FlipRate("s", "steady", runs=20, flips=0),
        FlipRate("s", "flaky", runs=20, flips=10),
        FlipRate("s", "flakier", runs=11, flips=8),
        FlipRate("s", "young", runs=3, flips=2),  # too few runs to say
        FlipRate("s", "held", runs=20, flips=15),  # quarantined already
    ]
    text = suggest(rates, date(2026, 12, 1), quarantined=["s:held"], owner="team-agents")
    entries = read_entries(text, "suggested")
    assert [e.case for e in entries] == ["s:flakier", "s:flaky"]
    assert {e.until for e in entries} == {date(2026, 12, 31)}
    assert (
        entries[1].reason == "flaky on main: its outcome flipped 10 times in its last 20 runs (53%)"
    )
    assert suggest(rates[:1], date(2026, 12, 1)) == ""


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_a_suggestion_reads_back_whatever_the_case_ids_hold(set_id: str, case_id: str) -> None:
    """Case ids are hostile text: quotes, backslashes and controls must not break the TOML; an
    id no entry can name as it is (blank, or spaces at its ends) is not suggested."""
    text = suggest([FlipRate(set_id, case_id, runs=10, flips=9)], date(2026, 1, 1))
    found = [e.case for e in entries_of(tomllib.loads(text), "s")]
    assert found in ([f"{set_id}:{case_id}"], [])
    if set_id.strip() and case_id.strip() == case_id and set_id.strip() == set_id:
        assert found or ":" in set_id
