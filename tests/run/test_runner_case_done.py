"""The runner hands each case on (``RunOptions.case_done``) as soon as its last run ends, on
the main thread, with its runs in order, while other cases are still running; with
``release_cases`` it drops the eval sets' cases it has taken."""

from __future__ import annotations

import threading
import time

import pytest

from ci_eval.connectors.base import ActualTurn
from ci_eval.model import Content, EvalCase, Part
from ci_eval.model.results import CaseRecord, SetRecord
from ci_eval.net.deadline import Deadline
from ci_eval.run.runner import RunOptions, run_sets
from tests.factories import loaded_set


class _Agent:
    """Answers with the case id and run; ``hold`` makes a case wait for an event first."""

    kind = "fake"

    def __init__(self, hold: dict[str, threading.Event] | None = None, slow_run: int = 0):
        self.hold = hold or {}
        self.slow_run = slow_run
        self.turns: list[str] = []

    def describe(self) -> str:
        return "fake"

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _Session:
        return _Session(self, case.eval_id, run)

    def close(self) -> None:
        return None


class _Session:
    def __init__(self, agent: _Agent, eval_id: str, run: int) -> None:
        self.agent, self.eval_id, self.run = agent, eval_id, run

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        event = self.agent.hold.get(self.eval_id)
        text = f"{self.eval_id} run {self.run}"
        if event is not None and not event.wait(30):
            text = "never released"
        if self.run == self.agent.slow_run:
            time.sleep(0.2)
        self.agent.turns.append(text)
        return ActualTurn(final_response=Content(role="model", parts=[Part(text=text)]))

    def close(self) -> None:
        return None


def test_each_case_is_handed_on_once_with_every_run_in_order() -> None:
    seen: list[tuple[str, list[int], bool]] = []

    def case_done(set_record: SetRecord, case: CaseRecord) -> None:
        on_main = threading.current_thread() is threading.main_thread()
        seen.append((case.eval_id, [r.run for r in case.runs], on_main))

    # run 1 is the slowest: runs 2 and 3 end first
    run_sets([loaded_set(3)], _Agent(slow_run=1), RunOptions(4, num_runs=3, case_done=case_done))
    assert sorted(seen) == [(f"c{n}", [1, 2, 3], True) for n in range(3)]


def test_a_case_is_handed_on_while_other_cases_still_run() -> None:
    # c1 answers only once c0 has been handed on: a hook called after the whole run would
    # leave c1 waiting, and its answer would say so
    release = threading.Event()

    def case_done(set_record: SetRecord, case: CaseRecord) -> None:
        if case.eval_id == "c0":
            release.set()

    results = run_sets(
        [loaded_set(2)], _Agent(hold={"c1": release}), RunOptions(2, case_done=case_done)
    )
    answers = [c.runs[0].invocations[0].actual.final_response.text() for c in results.sets[0].cases]
    assert answers == ["c0 run 1", "c1 run 1"]


def test_released_cases_leave_the_eval_sets_and_stay_in_the_results() -> None:
    loaded = loaded_set(3)
    results = run_sets([loaded], _Agent(), RunOptions(2, release_cases=True))
    assert loaded.eval_set.eval_cases == []
    assert [c.eval_id for c in results.sets[0].cases] == ["c0", "c1", "c2"]
    assert all(
        c.runs[0].invocations[0].expected.user_content.text() == "hi" for c in results.sets[0].cases
    )


def test_a_failing_hook_is_raised_once_every_run_has_ended() -> None:
    def case_done(set_record: SetRecord, case: CaseRecord) -> None:
        raise RuntimeError("cannot score")

    agent = _Agent(slow_run=2)
    with pytest.raises(RuntimeError, match="cannot score"):
        run_sets([loaded_set(3)], agent, RunOptions(2, num_runs=2, case_done=case_done))
    assert len(agent.turns) == 6  # the failure stopped no run


def test_the_agent_gets_only_so_far_ahead_of_the_cases_handed_on() -> None:
    # while the first case is being handed on (slowly), the workers may run a few cases
    # more but not the whole set: ended runs are not left piling up in memory
    agent = _Agent()
    seen_then: list[int] = []

    def case_done(set_record: SetRecord, case: CaseRecord) -> None:
        if not seen_then:
            time.sleep(1.0)
            seen_then.append(len(agent.turns))

    run_sets([loaded_set(100)], agent, RunOptions(1, case_done=case_done))
    assert seen_then[0] <= 2 * 1 + 16 + 1
    assert len(agent.turns) == 100
