"""A run's turn-by-turn diffs are worked out once while the reports render (``diffs_kept``): the
terminal's reason, JUnit's body and the summary read the same failing runs. Outside it, each call
reads the run as it is then."""

from __future__ import annotations

import threading

import pytest

from ci_eval.model import Content, Invocation, Part, describe
from ci_eval.model.describe import diffs_kept, invocation_diffs
from ci_eval.results.file import InvocationRecord, RunRecord


def _inv(text: str) -> Invocation:
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="Weather in Paris?")]),
        final_response=Content(role="model", parts=[Part(text=text)]),
    )


def _run(answer: str = "Rain") -> RunRecord:
    return RunRecord(1, [InvocationRecord(_inv("Sunny"), _inv(answer))])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = describe._diff

    def diff(number: int, record: InvocationRecord) -> describe.InvocationDiff:
        calls.append(number)
        return real(number, record)

    monkeypatch.setattr(describe, "_diff", diff)
    return calls


def test_while_kept_a_runs_diffs_are_worked_out_once(counted: list[int]) -> None:
    run = _run()
    with diffs_kept():
        first, again = invocation_diffs(run), invocation_diffs(run)
    assert first == again and first[0].actual_response == "Rain"
    assert counted == [1]


def test_outside_each_call_reads_the_run_as_it_is_then(counted: list[int]) -> None:
    run = _run()
    assert invocation_diffs(run)[0].actual_response == "Rain"
    run.invocations[0] = InvocationRecord(_inv("Sunny"), _inv("Snow"))
    assert invocation_diffs(run)[0].actual_response == "Snow"
    assert counted == [1, 1]


def test_nothing_is_kept_after_it_ends(counted: list[int]) -> None:
    run = _run()
    with diffs_kept():
        invocation_diffs(run)
    run.invocations[0] = InvocationRecord(_inv("Sunny"), _inv("Snow"))
    with diffs_kept():
        assert invocation_diffs(run)[0].actual_response == "Snow"


def test_a_caller_changing_the_list_it_got_changes_nothing_kept() -> None:
    run = _run()
    with diffs_kept():
        invocation_diffs(run).clear()
        assert len(invocation_diffs(run)) == 1


def test_another_thread_keeps_nothing(counted: list[int]) -> None:
    run = _run()
    with diffs_kept():
        invocation_diffs(run)
        worker = threading.Thread(target=lambda: invocation_diffs(run))
        worker.start()
        worker.join()
    assert counted == [1, 1]
