"""A run's jobs (one run of one case each) and the opener that opens their agent sessions
ahead of the workers (see ``Opener``)."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

from ci_eval.connectors.base import AgentSession, Connector
from ci_eval.model import EvalCase
from ci_eval.results.file import CaseRecord, RunRecord
from ci_eval.simulate import scenario_of


@dataclass(eq=False)
class Job:
    eval_set_id: str
    case: EvalCase | None  # None once the job has finished: the runner needs it no more
    case_record: CaseRecord
    run: int
    loaded: Any = None  # the LoadedEvalSet (dialect, eval config) the case comes from
    # set when the job starts; filled in turn by turn; None again once its case holds it
    record: RunRecord | None = None
    started: float = 0.0
    finished: bool = False
    # its agent session, when opened ahead (Opener): set once whoever claimed it has opened it
    opened: threading.Event | None = None
    session: AgentSession | None = None
    open_error: Exception | None = None
    simulated: bool = False  # a user simulator plays the user (worked out before it runs)

    def __post_init__(self) -> None:
        self.simulated = scenario_of(self.case, self.loaded.dialect) is not None


class Opener:
    """Opens the agent sessions of the jobs next in line while the workers' turns are in
    flight, on one thread, for a connector whose ``open`` is a request to the agent (``adk
    api_server``: a session per case, ``opens_ahead = True``): a worker starts its case's first
    turn at once instead of after that round trip, for every case it runs. It keeps at most
    ``ahead`` sessions opened and not yet taken (the next wave), opens none after a stop
    request, and the first wave is the workers' own. Each session is opened once, by whoever
    claims its job first: a worker whose job is unclaimed opens it itself (a slow opener never
    holds a worker up), one being opened waits for it."""

    def __init__(self, jobs: list[Job], connector: Connector, stop: threading.Event, ahead: int):
        self.jobs, self.connector, self.stop, self.ahead = jobs, connector, stop, ahead
        self.cond = threading.Condition()
        self.taken = 0  # jobs the workers have taken, in queue order

    def start(self) -> None:
        threading.Thread(target=self._loop, name="ci-eval-opener", daemon=True).start()

    def _claim(self, job: Job) -> bool:
        with self.cond:
            if job.opened is not None:
                return False
            job.opened = threading.Event()
            return True

    def _open(self, job: Job) -> None:
        assert job.opened is not None and job.case is not None  # unfinished: claimed first
        try:
            job.session = self.connector.open(job.eval_set_id, job.case, job.run)
        except Exception as exc:  # given to the worker, which reports it as its own
            job.open_error = exc
        job.opened.set()

    def _loop(self) -> None:
        for index in range(self.ahead, len(self.jobs)):
            with self.cond:
                while index >= self.taken + self.ahead and not self.stop.is_set():
                    self.cond.wait(0.5)
            if self.stop.is_set():
                return
            job = self.jobs[index]
            if not job.simulated and self._claim(job):
                self._open(job)

    def took(self) -> None:
        """A worker took the next job from the queue."""
        with self.cond:
            self.taken += 1
            self.cond.notify()

    def session(self, job: Job) -> AgentSession:
        """The job's session: opened ahead, being opened (wait for it), or opened now."""
        if self._claim(job):
            self._open(job)
        assert job.opened is not None
        job.opened.wait()
        if job.open_error is not None:
            raise job.open_error
        assert job.session is not None
        return job.session

    def discard(self, job: Job) -> None:
        """A job that will not run: close the session opened for it, if one was."""
        if not self._claim(job):
            assert job.opened is not None
            job.opened.wait()
            if job.session is not None:
                with contextlib.suppress(Exception):  # closing is best effort
                    job.session.close()
