"""The gate's verdict without a baseline: which statuses block under which ``fail_on``, the
exit code each gives, and the one line that says why."""

from __future__ import annotations

import pytest

from ci_eval.errors import InputError
from ci_eval.gate import EXIT_GATE, EXIT_INFRA, EXIT_OK, FAIL_ON, gate, parse_fail_on, verdict
from ci_eval.verdict import Kind
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
        "--fail-on: unknown flakes; choose from failure, regression, error, not-evaluated"
    )
