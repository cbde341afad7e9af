"""A replay waits on nothing, so the runner plays its runs on the main thread, one by one, each
handed on as it ends: no worker thread takes turns with the scoring for the interpreter's lock.
A stop request still leaves every case with a record."""

from __future__ import annotations

import threading
from typing import ClassVar

from ci_eval.connectors.base import ActualTurn
from ci_eval.model import Content, EvalCase, Part
from ci_eval.model.results import CaseRecord, SetRecord
from ci_eval.net.deadline import Deadline
from ci_eval.run.runner import RunOptions, run_sets
from tests.factories import loaded_set


class _Replay:
    """Answers each turn with its case id, noting the thread that played it."""

    kind = "replay"
    recordings: ClassVar[dict[tuple[str, str], object]] = {}

    def __init__(self, stop_after: int | None = None, stop: threading.Event | None = None):
        self.threads: list[threading.Thread] = []
        self.stop_after, self.stop = stop_after, stop

    def describe(self) -> str:
        return "replay"

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _Session:
        return _Session(self, case.eval_id)

    def close(self) -> None:
        return None


class _Session:
    def __init__(self, agent: _Replay, eval_id: str) -> None:
        self.agent, self.eval_id = agent, eval_id

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        self.agent.threads.append(threading.current_thread())
        if self.agent.stop is not None and len(self.agent.threads) == self.agent.stop_after:
            self.agent.stop.set()
        return ActualTurn(final_response=Content(role="model", parts=[Part(text=self.eval_id)]))

    def close(self) -> None:
        return None


def test_a_replay_plays_every_run_on_the_main_thread() -> None:
    agent = _Replay()
    run_sets([loaded_set(5)], agent, RunOptions(8, num_runs=2))
    assert len(agent.threads) == 10
    assert all(t is threading.main_thread() for t in agent.threads)


def test_each_replayed_case_is_handed_on_before_the_next_is_played() -> None:
    agent = _Replay()
    played_when_done: list[int] = []

    def case_done(set_record: SetRecord, case: CaseRecord) -> None:
        played_when_done.append(len(agent.threads))

    run_sets([loaded_set(3)], agent, RunOptions(8, case_done=case_done))
    assert played_when_done == [1, 2, 3]


def test_a_stop_during_a_replay_leaves_every_case_a_record() -> None:
    stop = threading.Event()
    agent = _Replay(stop_after=2, stop=stop)
    results = run_sets([loaded_set(4)], agent, RunOptions(8), stop)
    runs = [case.runs for case in results.sets[0].cases]
    assert [len(r) for r in runs] == [1, 1, 1, 1]
    assert [r[0].error for r in runs[2:]] == ["not run: the run was interrupted"] * 2
    assert results.interrupted
