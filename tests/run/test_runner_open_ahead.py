"""A connector whose sessions are requests to the agent (``opens_ahead``) gets the next cases'
sessions opened while turns are in flight: each (case, run) still gets exactly one fresh
session of its own, a session that cannot be opened is still that case's error, and after a
stop request no session is left open."""

from __future__ import annotations

import threading

from ci_eval.connectors.base import ActualTurn, AgentError
from ci_eval.model import Content, EvalCase, Part
from ci_eval.net.deadline import Deadline
from ci_eval.run.runner import RunOptions, run_sets
from tests.factories import loaded_set


class _Session:
    def __init__(self, agent: _Agent, case: str, run: int) -> None:
        self.agent, self.case, self.run = agent, case, run

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        self.agent.turn_hook(self)
        text = f"{self.case} run {self.run}"
        return ActualTurn(final_response=Content(role="model", parts=[Part(text=text)]))

    def close(self) -> None:
        with self.agent.lock:
            self.agent.closed.append((self.case, self.run))


class _Agent:
    kind = "fake"
    opens_ahead = True

    def __init__(self, fail_open: frozenset[str] = frozenset()) -> None:
        self.lock = threading.Lock()
        self.opened: list[tuple[str, int]] = []
        self.closed: list[tuple[str, int]] = []
        self.fail_open = fail_open

    def turn_hook(self, session: _Session) -> None:
        return None

    def describe(self) -> str:
        return "fake"

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _Session:
        if case.eval_id in self.fail_open:
            raise AgentError("HTTP 503: no sessions today")
        with self.lock:
            self.opened.append((case.eval_id, run))
        return _Session(self, case.eval_id, run)

    def close(self) -> None:
        return None


def test_every_run_answers_in_its_own_session_opened_once() -> None:
    agent = _Agent()
    results = run_sets([loaded_set(40)], agent, RunOptions(4, num_runs=2))
    answers = {
        (case.eval_id, run.run): run.invocations[0].actual.final_response.text()
        for case in results.sets[0].cases
        for run in case.runs
    }
    assert answers == {(f"c{n}", r): f"c{n} run {r}" for n in range(40) for r in (1, 2)}
    assert sorted(agent.opened) == sorted(answers)  # once each, none twice
    assert sorted(agent.closed) == sorted(answers)


def test_a_session_that_cannot_be_opened_is_that_cases_error() -> None:
    agent = _Agent(fail_open=frozenset({"c7"}))
    results = run_sets([loaded_set(20)], agent, RunOptions(2))
    errors = {c.eval_id: c.runs[0].error for c in results.sets[0].cases if c.runs[0].error}
    assert errors == {"c7": "cannot start a session: HTTP 503: no sessions today"}


def test_after_a_stop_request_the_session_opened_ahead_is_closed() -> None:
    stop = threading.Event()
    agent = _Agent()

    def stop_once_the_next_is_open(session: _Session) -> None:
        if session.case == "c5":  # one worker: c6 is opened ahead while c5 runs
            for _ in range(500):
                if ("c6", 1) in agent.opened:
                    break
                threading.Event().wait(0.01)
            stop.set()

    agent.turn_hook = stop_once_the_next_is_open  # type: ignore[method-assign]
    results = run_sets([loaded_set(20)], agent, RunOptions(1), stop=stop)
    not_run = [c.eval_id for c in results.sets[0].cases if c.runs[0].error]
    assert not_run == [f"c{n}" for n in range(6, 20)]
    assert agent.opened == [(f"c{n}", 1) for n in range(7)]
    assert sorted(agent.closed) == sorted(agent.opened)  # c6's too, though it never ran
