"""``--case`` filters: parsed once (``settings.parse.CaseFilter``) and used alike by the check
before the run, the agent check and the runner."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ci_eval.run.selection import case_selected, unmatched
from ci_eval.settings.parse import CaseFilter, parse_cases

KNOWN = {("weather", "paris"), ("weather", "rome"), ("travel", "paris")}


def test_a_set_id_selects_every_case_of_that_set() -> None:
    filters = parse_cases(["weather"])
    assert [k for k in sorted(KNOWN) if case_selected(filters, *k)] == [
        ("weather", "paris"),
        ("weather", "rome"),
    ]


def test_set_and_case_select_that_case_and_a_star_selects_it_in_every_set() -> None:
    assert [k for k in sorted(KNOWN) if case_selected(parse_cases(["weather:paris"]), *k)] == [
        ("weather", "paris")
    ]
    assert [k for k in sorted(KNOWN) if case_selected(parse_cases(["*:paris"]), *k)] == [
        ("travel", "paris"),
        ("weather", "paris"),
    ]


def test_no_filter_selects_every_case() -> None:
    assert all(case_selected([], *k) for k in KNOWN)


def test_a_case_id_may_hold_colons() -> None:
    assert CaseFilter.parse("s:a:b") == CaseFilter("s:a:b", "s", "a:b")
    assert case_selected(parse_cases(["s:a:b"]), "s", "a:b")


def test_the_first_filter_naming_nothing_is_reported() -> None:
    assert unmatched(parse_cases(["weather:paris", "*:rome", "travel"]), KNOWN) is None
    assert unmatched(parse_cases(["weather", "weather:nice", "nope"]), KNOWN) == CaseFilter(
        "weather:nice", "weather", "nice"
    )
    assert unmatched(parse_cases(["*:nice"]), KNOWN) == CaseFilter("*:nice", "*", "nice")


ids = st.text(alphabet="ab:*", min_size=1, max_size=4)


@given(st.lists(ids, max_size=3), ids, ids)
def test_a_filter_that_passes_the_check_selects_a_case(texts: list[str], s: str, c: str) -> None:
    """What the check accepts, the runner runs: a filter naming a known case selects it."""
    filters = parse_cases(texts)
    known = {(s, c)}
    if unmatched(filters, known) is None and filters:
        assert case_selected(filters, s, c)
