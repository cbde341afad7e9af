"""The runner's main thread does the pipeline's ``meanwhile`` work while the agent's turns are
in flight, and a failure there neither stops the turns nor loses their records."""

from __future__ import annotations

import threading

import pytest

from ci_eval.connectors.base import ActualTurn
from ci_eval.model import Content, EvalCase, Part
from ci_eval.net.deadline import Deadline
from ci_eval.run.runner import RunOptions, run_sets
from tests.factories import loaded_set


class _WaitingAgent:
    """Each turn answers only once ``ready`` is set (or fails after a while)."""

    kind = "fake"

    def __init__(self, ready: threading.Event) -> None:
        self.ready = ready

    def describe(self) -> str:
        return "fake"

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _WaitingAgent:
        return self

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        text = "answered" if self.ready.wait(30) else "the meanwhile work never ran"
        return ActualTurn(final_response=Content(role="model", parts=[Part(text=text)]))

    def close(self) -> None:
        return None


def _answers(results: object) -> list[str]:
    return [
        run.invocations[0].actual.final_response.text()
        for case in results.sets[0].cases  # type: ignore[attr-defined]
        for run in case.runs
    ]


def test_the_meanwhile_work_runs_while_the_turns_are_in_flight() -> None:
    ready = threading.Event()
    results = run_sets([loaded_set(3)], _WaitingAgent(ready), RunOptions(3, meanwhile=ready.set))
    assert _answers(results) == ["answered"] * 3


def test_a_failing_meanwhile_is_raised_after_every_turn_has_its_record() -> None:
    ready = threading.Event()
    records: list[object] = []

    def fail() -> None:
        ready.set()
        raise RuntimeError("cannot prepare the reports")

    agent = _WaitingAgent(ready)
    original = agent.send

    def send(user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        turn = original(user_content, deadline)
        records.append(turn)
        return turn

    agent.send = send  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="cannot prepare the reports"):
        run_sets([loaded_set(3)], agent, RunOptions(3, meanwhile=fail))
    assert len(records) == 3  # every turn ran to its end before the failure surfaced
