"""The gate's verdict without a baseline: which statuses block under which ``fail_on``, the
exit code each gives, and the one line that says why."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.gate.decision import EXIT_GATE, EXIT_INFRA, EXIT_OK, gate, verdict
from ci_eval.gate.items import Kind, legend
from ci_eval.settings.parse import FAIL_ON, parse_fail_on
from tests.factories import results

ALL = tuple(FAIL_ON)


def test_all_passed_passes_and_counts_them() -> None:
    v = verdict(results({"a": "PASSED", "b": "PASSED"}))
    assert (v.passed, v.exit_code, v.line) == (True, EXIT_OK, "gate passed: 2 of 2 cases passed")


def test_a_failed_case_fails_the_gate_naming_it() -> None:
    v = verdict(results({"a": "PASSED", "b": "FAILED"}))
    assert (v.passed, v.exit_code) == (False, EXIT_GATE)
    assert v.line == "gate failed: 1 failed case (s:b)"


def test_a_failure_outside_fail_on_is_a_note_not_a_block() -> None:
    v = verdict(results({"a": "PASSED", "b": "FAILED"}, fail_on=("error",)))
    assert v.passed and v.exit_code == EXIT_OK
    assert v.line == "gate passed: 1 of 2 cases passed; 1 failed case did not block"


def test_an_error_is_infrastructure_exit_3() -> None:
    v = verdict(results({"a": "PASSED", "b": "ERROR"}))
    assert (v.passed, v.exit_code, v.line) == (False, EXIT_INFRA, "gate failed: 1 error (s:b)")


def test_errors_outside_fail_on_do_not_block() -> None:
    v = verdict(results({"a": "PASSED", "b": "ERROR"}, fail_on=("failure",)))
    assert v.passed and v.line == "gate passed: 1 of 1 case passed; 1 error did not block"
    assert [(i.key, i.kind) for i in v.not_blocking] == [("s:b", Kind.ERROR)]


def test_an_interrupted_run_is_infrastructure_even_without_errors() -> None:
    v = verdict(results({"a": "PASSED"}, interrupted=True))
    assert v.exit_code == EXIT_INFRA and [i.kind for i in v.blocking] == [Kind.INTERRUPTED]
    assert v.line == "gate failed: the run was interrupted"


@pytest.mark.parametrize("fail_on", [(), ALL])
def test_nothing_evaluated_never_passes(fail_on: tuple[str, ...]) -> None:
    v = verdict(results({"a": "SKIPPED", "b": "SKIPPED"}, fail_on=fail_on))
    assert not v.passed and v.exit_code == EXIT_GATE
    assert "nothing was evaluated (2 cases)" in v.line


def test_not_evaluated_blocks_with_the_metrics_reason() -> None:
    statuses = {"a": "PASSED", "b": "NOT_EVALUATED"}
    v = verdict(results(statuses, fail_on=ALL, reasons={"b": "no judge configured"}))
    assert v.exit_code == EXIT_GATE
    assert v.line == "gate failed: 1 not evaluated (s:b)"
    assert [(i.key, i.why) for i in v.blocking] == [("s:b", "m: no judge configured")]
    v = verdict(results(statuses, fail_on=("failure",), reasons={"b": "no judge configured"}))
    assert v.passed and v.line.endswith("; 1 not evaluated did not block")
    assert [i.why for i in v.not_blocking] == ["m: no judge configured"]


def test_more_than_three_names_are_counted_not_listed() -> None:
    v = verdict(results({c: "FAILED" for c in "abcde"}))
    assert v.line == "gate failed: 5 failed cases (s:a, s:b, s:c +2 more)"


def test_errors_and_failures_together_exit_3_and_name_both() -> None:
    v = verdict(results({"a": "FAILED", "b": "ERROR"}))
    assert v.exit_code == EXIT_INFRA
    assert v.line == "gate failed: 1 failed case (s:a); 1 error (s:b)"


def test_gate_is_the_verdicts_exit_code() -> None:
    for statuses in ({"a": "PASSED"}, {"a": "FAILED"}, {"a": "ERROR"}):
        r = results(statuses)
        assert gate(r) == verdict(r).exit_code


@pytest.mark.parametrize(
    ("values", "parsed"),
    [
        (["failure"], ("failure",)),
        (["failure,error", " regression "], ("failure", "error", "regression")),
        ([""], ()),
    ],
)
def test_fail_on_takes_repeated_and_comma_separated_values(
    values: list[str], parsed: tuple[str, ...]
) -> None:
    assert parse_fail_on(values) == parsed


def test_an_unknown_fail_on_value_names_the_choices() -> None:
    with pytest.raises(InputError) as caught:
        parse_fail_on(["failure,flakes"])
    assert str(caught.value) == (
        "--fail-on: unknown flakes; choose from failure, regression, error, not-evaluated, usage, "
        "judging-changed"
    )


# --- the verdict's structure -------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet="abcxyz_:-é ", min_size=1, max_size=300),
            st.sampled_from(["PASSED", "FAILED", "ERROR", "SKIPPED", "NOT_EVALUATED"]),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda t: t[0],
    ),
    st.sampled_from([(), ("failure",), ALL, ("error", "not-evaluated")]),
)
def test_the_line_fits_200_characters_and_a_case_is_under_one_heading(
    cases: list[tuple[str, str]], fail_on: tuple[str, ...]
) -> None:
    v = verdict(results(dict(cases), fail_on=fail_on, reasons={c: "r" * 500 for c, _ in cases}))
    assert len(v.line) <= 200
    blocking = [i.key for i in v.blocking if i.key]
    quiet = [i.key for i in v.not_blocking if i.key]
    assert not set(blocking) & set(quiet)
    assert len(blocking) == len(set(blocking)) and len(quiet) == len(set(quiet))
    assert v.passed == (not v.blocking)


def test_a_skipped_case_is_listed_as_skipped_not_blocking() -> None:
    v = verdict(results({"a": "PASSED", "b": "SKIPPED"}))
    assert [(i.key, i.kind, i.blocking) for i in v.not_blocking] == [("s:b", Kind.SKIPPED, False)]
    assert v.line == "gate passed: 1 of 1 case passed; 1 skipped did not block"


def test_a_passing_verdict_has_no_failed_icon_in_its_legend() -> None:
    assert "❌" not in legend(verdict(results({"a": "PASSED"})).icons())
    assert "❌ gate failed" in legend(verdict(results({"a": "FAILED"})).icons())


def test_a_not_evaluated_case_with_mixed_runs_is_not_called_flaky() -> None:
    r = results({"a": "PASSED", "b": "NOT_EVALUATED"}, fail_on=("failure",))
    case = r.sets[0].cases[1]
    case.flaky = True  # one metric's runs differ; no run of the case passed as a whole
    assert [i.kind for i in verdict(r).not_blocking] == [Kind.NOT_EVALUATED]


def test_improved_is_what_the_gates_test_judged_improved_and_nothing_else() -> None:
    from ci_eval.model.comparison import Judgement
    from tests.report.scenarios import reviewer

    r = reviewer()
    assert r.comparison is not None
    judged = {j.key for j in r.comparison.cases if j.judgement is Judgement.IMPROVED}
    assert [i.key for i in verdict(r).improved] == sorted(judged) == ["weather:london_forecast"]


def test_each_set_says_its_runs_pass_rate_against_mains_window() -> None:
    from ci_eval.report.markdown_overview import chart
    from tests.report.scenarios import reviewer

    sets = {s.set_id: s for s in verdict(reviewer()).sets}
    billing = sets["billing"]  # invoice_copy broke, refund_status errors, balance passes
    assert (billing.now_rate.passed, billing.runs) == (3, 9)
    assert billing.main_pass_rate is not None
    assert (billing.main_pass_rate.passed, billing.main_pass_rate.runs) == (24, 24)
    assert billing.delta_text() == "▼67 pts [−94, −19]"
    skipped_only = sets["scenarios"]
    assert skipped_only.rate is None and skipped_only.delta_text() == ""
    drawn = chart(list(sets.values()))
    assert drawn is not None and '"scenarios"' not in drawn  # no 0 % bar for it


def test_new_cases_are_named_and_a_skipped_case_is_never_new() -> None:
    from tests.report.scenarios import reviewer

    v = verdict(reviewer())
    assert v.new == ["travel:seat_upgrade"]
    # a case main has that the run did not find blocks (none accepted its removal)
    assert [i.key for i in v.blocking if i.kind is Kind.REMOVED] == ["greetings:old_farewell"]
    assert v.removed == []  # the accepted removals


def test_a_long_line_gives_up_a_notices_detail_before_it_is_cut() -> None:
    from ci_eval.report.markdown import render_summary
    from tests.report.scenarios import reviewer

    r = reviewer()
    r.settings.bar_changes = ["[run] fail_on: ['error'] (base: unset)", "tpl: 1 file changed"]
    r.comparison.changed = ["threshold: weather (w.json): m 0.8 → 0 (4 cases)"]
    line = verdict(r).line
    assert len(line) <= 200 and "…" not in line
    assert "gate settings changed by this pull request (not applied)" in line
    summary = render_summary(r)  # the details, in full, in the report's own sections
    assert "- \\[run\\] fail_on: \\['error'\\] (base: unset)" in summary
    assert "- threshold: weather (w.json): m 0.8 → 0 (4 cases)" in summary


def test_the_verdict_cannot_be_changed_once_made() -> None:
    import dataclasses

    v = verdict(results({"a": "PASSED"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.exit_code = 1  # type: ignore[misc]


def test_an_accepted_judging_change_does_not_hide_the_next_one() -> None:
    from ci_eval.gate.verdict import judging_items
    from ci_eval.model.comparison import ChangeKind, Comparison, JudgingChange

    comparison = Comparison("abc", None)
    comparison.judging = [
        JudgingChange(ChangeKind.THRESHOLD, "s", "a", "m", accepted="looser on purpose"),
        JudgingChange(ChangeKind.EXPECTED, "s", "b"),
    ]
    items = judging_items(comparison, True)
    assert [(i.kind, i.key, i.blocking) for i in items] == [
        (Kind.JUDGING_ACCEPTED, "s:a", False),
        (Kind.JUDGING, "s:b", True),
    ]


def test_a_stop_is_said_before_the_selection_that_ran() -> None:
    r = results({"a": "PASSED"})
    r.settings.selection = "2 of 3 cases re-run (--select changed)"
    r.settings.stopped = "stopped starting cases: the agent failed 5 cases the same way"
    notices = verdict(r).notices
    assert notices[:2] == [r.settings.stopped, r.settings.selection]


def test_a_sets_rate_counts_first_runs_and_reruns_apart() -> None:
    """One case of 4 failing its 3 first runs and 2 confirmation reruns: 75 % of first runs
    (9/12), not 9/14 — the gate reruns only failing cases, and counted in, a rerun reads as
    a drop."""
    from ci_eval.gate.set_lines import set_line
    from tests.report.scenarios import _c, _results

    cases = [_c("four", n, "hi", "lookup", "ok", wrong_tool="other") for n in "abcd"]
    plan = {c: [True] * 3 for c in cases[:3]}
    results = _results(plan | {cases[3]: [False] * 5}, "2026-12-01T10:00:00+00:00")
    s = results.sets[0]
    line = set_line(s, {}, {}, first_runs=3)
    assert (line.now_rate.passed, line.runs, line.reruns, line.reruns_passed) == (9, 12, 2, 0)
    assert line.rate_text().startswith("75% [")
    assert line.rate_text().endswith("(9/12 first runs; +2 reruns)")
