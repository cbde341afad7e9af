"""The reports as a reviewer reads them on GitHub (``benchmarks/reviewer.py``: rendered with
cmark-gfm, read as HTML): the verdict first, each case in one list, every blocking reason
shown, the same counts in every channel, within GitHub's sizes — for the fixed scenarios of
``tests/report/scenarios.py``. And the checks themselves fail on a doctored comment, so they
cannot pass by finding nothing."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks.reviewer import (
    Views,
    check_counts,
    check_lists,
    check_no_failure_when_passing,
    check_reasons,
    check_sizes,
    check_verdict_first,
    check_verdict_line,
    views,
)
from ci_eval.gate.items import Kind
from tests.report import scenarios

SCENARIOS = {"reviewer": scenarios.reviewer, "large": scenarios.large, "passing": scenarios.passing}


@pytest.fixture(scope="module", params=list(SCENARIOS))
def shown(request: pytest.FixtureRequest) -> Views:
    return views(request.param, SCENARIOS[request.param]())


@pytest.fixture(scope="module")
def reviewer() -> Views:
    return views("reviewer", scenarios.reviewer())


def test_the_first_heading_is_the_icon_and_the_verdict_line(shown: Views) -> None:
    assert check_verdict_first(shown) == []


def test_each_case_is_listed_once_blocking_or_not_and_none_is_missing(shown: Views) -> None:
    assert check_lists(shown) == []


def test_every_blocking_case_shows_its_reason_beside_it(shown: Views) -> None:
    assert check_reasons(shown) == []


def test_a_passing_verdict_shows_no_failure_icon(shown: Views) -> None:
    assert check_no_failure_when_passing(shown) == []


def test_every_channel_counts_the_same_cases(shown: Views) -> None:
    assert check_counts(shown) == []


def test_the_verdict_line_is_short_and_the_same_in_every_channel(shown: Views) -> None:
    assert check_verdict_line(shown) == []


def test_the_summary_and_the_comment_fit_githubs_limits(shown: Views) -> None:
    assert check_sizes(shown) == []


def test_the_passing_scenario_passes_the_gate_with_failures_that_do_not_block() -> None:
    decision = views("passing", scenarios.passing()).decision
    assert decision.passed
    assert [i.kind for i in decision.not_blocking].count(Kind.KNOWN_FAILURE) == 2


# --- the checks catch what they are for ------------------------------------------------------


def _doctored(v: Views, old: str, new: str) -> Views:
    assert old in v.comment
    return dataclasses.replace(v, comment=v.comment.replace(old, new, 1))


def _line_of(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_the_lists_check_fails_on_a_case_listed_under_both_headings(reviewer: Views) -> None:
    entry = _line_of(reviewer.comment, "- 🔴 **regression** · support › refund_policy")
    heading = _line_of(reviewer.comment, "**Not blocking:")
    doctored = _doctored(reviewer, heading, f"{heading}\n\n{entry}")
    problems = check_lists(doctored)
    assert any("both blocking and not blocking: support › refund_policy" in p for p in problems)


def test_the_lists_check_fails_on_a_blocking_case_left_out(reviewer: Views) -> None:
    entry = _line_of(reviewer.comment, "- 🔥 **error** · search › query_docs")
    problems = check_lists(_doctored(reviewer, entry + "\n", ""))
    assert problems == ["comment: blocking: missing 1 (search › query_docs)"]


def test_the_reasons_check_fails_on_a_blocking_case_without_its_reason(reviewer: Views) -> None:
    doctored = _doctored(reviewer, '<br>run 1 of 3, turn 1: replied "I do not know."', "")
    problems = check_reasons(doctored)
    assert len(problems) == 1
    assert problems[0].startswith("comment: weather › paris_weather: its reason")


def test_the_counts_check_fails_on_a_tally_that_disagrees(reviewer: Views) -> None:
    doctored = _doctored(reviewer, "**Blocking: 3 regressions,", "**Blocking: 2 regressions,")
    assert check_counts(doctored) == [
        "comment blocking: 5, the verdict's 6",
        "comment regressions: 2, the verdict's 3",
    ]


def test_the_passing_check_fails_on_a_failure_icon_under_a_passing_verdict() -> None:
    v = views("passing", scenarios.passing())
    legend = _line_of(v.comment, "<sub>")
    clean = dataclasses.replace(
        v, summary="", comment=v.comment.replace(legend, "<sub>✅ passed</sub>")
    )
    assert check_no_failure_when_passing(clean) == []
    doctored = dataclasses.replace(clean, comment=clean.comment + "\n\n:x: one more thing\n")
    assert check_no_failure_when_passing(doctored) == [
        "comment: :x: under a passing verdict: ':x: one more thing'"
    ]
