"""Replay eval cases against an agent: concurrent across cases, turns in order within one (a
replay of recorded runs, which waits on nothing, plays them one by one on the main thread).

Every (case, run) gets a fresh agent session and every turn a wall-clock deadline. An agent
failure makes that run ERROR with the reason and never stops the others. A stop request (the
first SIGINT/SIGTERM, see ``deadline.Cancellation``) starts no new turn; running turns get a
short grace, then end as ``cancelled`` and the run returns at once with everything done so far:
the workers are daemon threads, so a turn that cannot be unblocked does not hold the process.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ci_eval.connectors.base import (
    TOO_MUCH,
    AgentError,
    AgentSession,
    Connector,
    KeptReplies,
    with_features,
)
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model import EvalCase, Invocation
from ci_eval.model.status import Status
from ci_eval.net import llm
from ci_eval.net.deadline import Cancellation, Deadline
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord, RunResults, SetRecord
from ci_eval.run import selection as shard
from ci_eval.run.early_stop import SameFailures
from ci_eval.run.jobs import Job, Opener
from ci_eval.run.progress import Progress
from ci_eval.settings.parse import CaseFilter
from ci_eval.simulate import NO_SIMULATOR, scenario_of
from ci_eval.simulate.conversation import replay_simulated, run_simulated


@dataclass
class RunOptions:
    concurrency: int = 4
    num_runs: int = 1
    cases: tuple[CaseFilter, ...] = ()  # --case: none selects all
    shard: tuple[int, int] | None = None  # (I, N): only this shard's cases
    timeout: float = 60.0  # each turn's wall-clock deadline, seconds
    simulator: Any = None  # ci_eval.simulate.SimulatorFactory: plays the user of scenario cases
    # work for the main thread while the agent's turns are in flight (it only waits then):
    # whatever the steps after the run will need and can prepare now, off the critical path
    meanwhile: Callable[[], object] | None = None
    # called on the main thread as each case's last run ends (its runs in order), so that the
    # steps after the run (scoring) go on while other cases are still in flight
    case_done: Callable[[SetRecord, CaseRecord], object] | None = None
    # the eval sets' cases are the runner's to drop: each one goes as its runs end, so that a
    # run holds only the cases still to run (a big eval set is mostly what a run holds)
    release_cases: bool = False
    # --select changed: cases not re-run, each with what it says (main's latest result carried)
    carried: dict[tuple[str, str], str] = field(default_factory=dict)
    # [budget]'s binding limits (ci_eval.run.ceiling.Ceiling): no call past them
    ceiling: Any = None


def _skip_reason(
    case: EvalCase, loaded: LoadedEvalSet, connector: Connector, options: RunOptions
) -> str | None:
    if scenario_of(case, loaded.dialect) is None:
        return None
    if connector.kind == "replay":  # a recorded simulated conversation replays without one
        if (loaded.eval_set.eval_set_id, case.eval_id) in connector.recordings:
            return None
        return "no recorded conversation to replay (the recorded run skipped it?); " + NO_SIMULATOR
    if options.simulator is None:
        return NO_SIMULATOR
    return options.simulator.unavailable(case, loaded.dialect, loaded.metrics.extras)


def _run_simulated_job(
    connector: Connector, loaded: LoadedEvalSet, case: EvalCase, run: int, options: RunOptions
) -> RunRecord:
    """A case whose user an LLM plays (ci_eval.simulate), or its recorded conversation."""
    eval_set_id = loaded.eval_set.eval_set_id
    if connector.kind == "replay":
        try:
            session: Any = connector.open(eval_set_id, case, run)
            usage = session.recorded_usage()
        except AgentError as exc:
            return RunRecord(run=run, error=str(exc))  # a replay has no session: it says why
        return replay_simulated(session.invocations, run, usage, session.expected)
    user = options.simulator.make(case, loaded.dialect, loaded.metrics.extras)
    with llm.one_case(run):
        return run_simulated(connector, user, eval_set_id, case, run, options.ceiling)


CANCELLED = "cancelled"


def _not_run(expected: list[Invocation]) -> list[InvocationRecord]:
    return [InvocationRecord(expected=e, error="not run") for e in expected]


def run_case(
    connector: Connector,
    eval_set_id: str,
    case: EvalCase,
    run: int,
    timeout: float = 60.0,
    stop: threading.Event | None = None,
    record: RunRecord | None = None,
    open_session: Callable[[], AgentSession] | None = None,
    ceiling: Any = None,
) -> RunRecord:
    """Play one run of a case, turn by turn, each by its own deadline. ``record`` (filled in
    as turns finish) lets the caller keep the finished turns of a run it abandons;
    ``open_session`` gives the run's session instead of ``connector.open`` (one opened ahead)."""
    record = record if record is not None else RunRecord(run=run)
    cancel = stop if isinstance(stop, Cancellation) else None
    started = time.monotonic()
    expected = case.invocations()
    try:
        session = (
            open_session() if open_session is not None else connector.open(eval_set_id, case, run)
        )
    except AgentError as exc:
        # a replay opens no session: what it lacks is a recording, which its message says
        record.error = str(exc) if connector.kind == "replay" else f"cannot start a session: {exc}"
        record.invocations = _not_run(expected)
        record.duration_s = time.monotonic() - started
        return record
    reported = getattr(session, "reported", None)
    if reported is not None:  # a report's scores, no conversation: the turns are expected only
        record.reported = reported
        record.invocations = [InvocationRecord(expected=e) for e in expected]
        record.replayed = True
        with contextlib.suppress(Exception):
            session.close()
        return record
    recorded, measured, kept = 0.0, False, KeptReplies()
    try:
        for n, exp in enumerate(expected):
            if stop is not None and stop.is_set():  # no new turn after a stop request
                record.error = f"turn {n + 1}: {CANCELLED}"
                record.invocations += [
                    InvocationRecord(expected=exp, error=CANCELLED),
                    *_not_run(expected[n + 1 :]),
                ]
                break
            refused = ceiling.agent_call() if ceiling is not None else None
            if refused is not None:  # [budget]: no call past it
                record.error = f"turn {n + 1}: not run: {refused}"
                record.invocations += _not_run(expected[n:])
                break
            t0 = time.monotonic()
            deadline = Deadline(timeout, cancel) if cancel is not None else Deadline(timeout)
            try:
                turn = session.send(exp.user_content, deadline=deadline)
            except AgentError as exc:
                record.error = f"turn {n + 1}: {exc}"
                record.invocations.append(
                    InvocationRecord(
                        expected=exp,
                        duration_s=time.monotonic() - t0,
                        retries=exc.retries,
                        error=str(exc),
                    )
                )
                record.invocations += _not_run(expected[n + 1 :])
                break
            elapsed = time.monotonic() - t0 - turn.waited_s
            if turn.recorded_duration_s is not None:
                elapsed = turn.recorded_duration_s
                recorded += elapsed
            else:
                measured = True
            actual = turn.to_invocation(exp, elapsed)
            if not kept.fits(actual):
                record.error = f"turn {n + 1}: {TOO_MUCH}"
                record.invocations.append(
                    InvocationRecord(expected=exp, duration_s=elapsed, error=TOO_MUCH)
                )
                record.invocations += _not_run(expected[n + 1 :])
                break
            record.invocations.append(
                InvocationRecord(
                    exp, actual, elapsed, turn.retries, usage=turn.usage, trajectory=turn.trajectory
                )
            )
            if ceiling is not None:
                ceiling.agent_spent(turn.usage)
    except Exception as exc:  # a connector bug must not take the other cases down
        record.error = f"{type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):  # closing is best effort
            session.close()
    record.duration_s = time.monotonic() - started
    if not measured and record.invocations and record.error is None:
        record.duration_s = recorded  # a replay: the recorded run's time
        record.replayed = True
    return record


def _abandoned(partial: RunRecord, expected: list[Invocation], started: float) -> RunRecord:
    """What is kept of a run whose turn was still going when the run was abandoned: its
    finished turns, the running one as cancelled, the rest not run."""
    done = list(partial.invocations)[: len(expected)]
    record = RunRecord(run=partial.run, error=f"turn {len(done) + 1}: {CANCELLED}")
    record.invocations = done
    if len(done) < len(expected):
        record.invocations.append(InvocationRecord(expected=expected[len(done)], error=CANCELLED))
        record.invocations += _not_run(expected[len(done) + 1 :])
    record.duration_s = time.monotonic() - started
    return record


def _execute(
    jobs: list[Job],
    connector: Connector,
    options: RunOptions,
    stop: threading.Event,
    bar: Progress,
    t0: float,
    finished: Callable[[Job], None],
    same: SameFailures | None = None,
) -> None:
    """Run the jobs on daemon worker threads (a replay's on the main thread, one by one) until
    all are done or the run is abandoned; then every job holds its final record. ``finished``
    sees each job that ends before that, on the main thread, as it ends. ``same`` stops a run
    whose first cases fail the same way."""
    abandoned = getattr(stop, "abandoned", None) or threading.Event()
    # a replay makes no call: nothing of it counts against [budget]
    ceiling = options.ceiling if connector.kind != "replay" else None
    pending: queue.SimpleQueue[Job] = queue.SimpleQueue()
    for job in jobs:
        pending.put(job)
    lock = threading.Lock()
    ended: queue.SimpleQueue[Job] = queue.SimpleQueue()
    width = max(1, min(options.concurrency, len(jobs)))
    opener = Opener(jobs, connector, stop, width) if connector.opens_ahead else None

    def finish(job: Job, record: RunRecord) -> None:
        with lock:
            if job.finished:  # abandoned meanwhile: the main thread's record stands
                return
            job.record, job.finished, job.case = record, True, None
        if same is not None and job.run == 1:
            same.saw(record.error)
        ended.put(job)
        bar.advance()

    # a worker takes a job only while fewer than ``ahead`` are taken and not yet handed on: when
    # the main thread's work on ended jobs (scoring) is slower than the agent (a replay), the
    # ended runs wait in the workers' stead, not by the thousand in memory
    ahead = threading.Semaphore(2 * width + 16)

    def play(job: Job) -> None:
        """One job, start to end: its run, or the reason it was not run."""
        if opener is not None:
            opener.took()
        case = job.case
        assert case is not None  # a job is finished only once
        closed = None
        if not (stop.is_set() or (same is not None and same.reason)) and ceiling is not None:
            closed = ceiling.closed()
        if stop.is_set() or (same is not None and same.reason) or closed:
            if opener is not None:
                opener.discard(job)
            why = (
                "the run was interrupted" if stop.is_set() else closed or same.not_run  # type: ignore[union-attr]
            )
            record = RunRecord(run=job.run, error=f"not run: {why}")
            record.invocations = _not_run(case.invocations())
            finish(job, record)
            return
        with lock:
            job.record, job.started = RunRecord(run=job.run), time.monotonic()
        if job.simulated:
            record = _run_simulated_job(connector, job.loaded, case, job.run, options)
        else:
            record = run_case(
                connector,
                job.eval_set_id,
                case,
                job.run,
                options.timeout,
                stop,
                job.record,
                None if opener is None else lambda job=job: opener.session(job),
                ceiling,
            )
        if not record.replayed:  # when it ran, relative to the run's start: sets' wall time
            record.started_s = job.started - t0
        finish(job, record)

    def worker() -> None:
        while True:
            while not ahead.acquire(timeout=0.2):
                if abandoned.is_set():
                    return
            try:
                job = pending.get_nowait()
            except queue.Empty:
                ahead.release()
                return
            play(job)

    if not jobs:
        return
    failure: Exception | None = None

    def hand_on(job: Job) -> None:
        nonlocal failure
        if failure is None:
            try:
                finished(job)
            except Exception as exc:  # raised once every job has its record, not mid-run
                failure = exc

    # a replay waits on nothing: on worker threads its runs would only take turns with the
    # main thread's scoring for the interpreter's lock, and pay for every hand-over
    inline = connector.kind == "replay" and opener is None
    workers = [
        threading.Thread(target=worker, name=f"ci-eval-worker-{n}", daemon=True)
        for n in range(0 if inline else width)
    ]
    for thread in workers:
        thread.start()
    if opener is not None:
        opener.start()
    if options.meanwhile is not None:
        try:
            options.meanwhile()
        except Exception as exc:  # raised once every job has its record, not mid-run
            failure = exc
    if inline:
        for job in jobs:
            if abandoned.is_set():
                break
            play(job)
            hand_on(ended.get_nowait())
    # short waits, so the main thread runs the signal handlers promptly
    seen = 0
    while not inline and seen < len(jobs) and not abandoned.is_set():
        try:
            job = ended.get(timeout=0.2)
        except queue.Empty:
            continue
        seen += 1
        hand_on(job)
        ahead.release()
    with lock:
        for job in jobs:
            if job.finished:
                continue
            assert job.case is not None
            expected = job.case.invocations()
            if job.record is not None:
                job.record = _abandoned(job.record, expected, job.started)
                job.record.started_s = job.started - t0
            else:
                job.record = RunRecord(run=job.run, error="not run: the run was interrupted")
                job.record.invocations = _not_run(expected)
            job.finished = True
    if failure is not None:
        raise failure


def run_sets(
    sets: list[LoadedEvalSet],
    connector: Connector,
    options: RunOptions,
    stop: threading.Event | None = None,
) -> RunResults:
    stop = stop or threading.Event()
    connector = with_features(connector)  # a test's or a plugin's: the protocol's defaults
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    records: list[SetRecord] = []
    jobs: list[tuple[str, EvalCase, CaseRecord, int, LoadedEvalSet]] = []
    # a case is done when its last job ends; the main thread then hands it on, runs in order
    runs_left: dict[int, int] = {}  # per case (by id) with jobs
    set_of: dict[int, SetRecord] = {}
    for loaded in sets:
        es = loaded.eval_set
        set_record = SetRecord(es.eval_set_id, loaded.path, loaded.dialect, loaded.metrics)
        for case in es.eval_cases:
            if not shard.case_selected(options.cases, es.eval_set_id, case.eval_id) or not (
                shard.selected(es.eval_set_id, case.eval_id, options.shard)
            ):
                continue
            source = case.source
            case_record = CaseRecord(
                case.eval_id,
                source.file if source else loaded.path,
                source.line if source else None,
                extensions=dict(case.extensions),
                rubrics=[r.model_dump(mode="json", exclude_none=True) for r in case.rubrics]
                if case.rubrics
                else None,
                scenario=scenario_of(case, loaded.dialect),
            )
            set_record.cases.append(case_record)
            actuals = case.trace_actuals
            if actuals is not None:  # trace mode: the recording is scored, no agent call
                case_record.runs = [
                    RunRecord(
                        run=1,
                        invocations=[
                            InvocationRecord(expected=e, actual=a)
                            for e, a in zip(case.invocations(), actuals, strict=False)
                        ],
                    )
                ]
                continue
            carried = options.carried.get((es.eval_set_id, case.eval_id))
            reason = carried or _skip_reason(case, loaded, connector, options)
            if reason:
                case_record.skipped, case_record.carried = reason, carried is not None
                continue
            for run in range(1, options.num_runs + 1):
                jobs.append((es.eval_set_id, case, case_record, run, loaded))
            runs_left[id(case_record)] = options.num_runs
            set_of[id(case_record)] = set_record
        records.append(set_record)

    bar = Progress(len(runs_left), len(jobs), ceiling=options.ceiling)
    work = [Job(*job) for job in jobs]
    del jobs
    if options.release_cases:
        for loaded in sets:  # the jobs hold what is left to run
            loaded.eval_set.eval_cases = []

    def job_finished(job: Job) -> None:
        case_record = job.case_record
        assert job.record is not None
        case_record.runs.append(job.record)
        job.record = None  # the case holds it now, and may let it go
        runs_left[id(case_record)] -= 1
        if runs_left[id(case_record)] == 0:
            case_record.runs.sort(key=lambda r: r.run)
            if options.case_done is not None:
                options.case_done(set_of[id(case_record)], case_record)
            bar.case(case_record.status)  # COMPLETED: not scored yet

    same = SameFailures(applies=connector.kind in ("http", "command"))
    _execute(work, connector, options, stop, bar, t0, job_finished, same)
    late: dict[int, CaseRecord] = {}  # cases with runs not handed on: their runs in order too
    for job in work:  # those that ended after the run was abandoned, or after a failure
        if job.record is not None:
            job.case_record.runs.append(job.record)
            late[id(job.case_record)] = job.case_record
    bar.finish()
    for case_record in late.values():
        case_record.runs.sort(key=lambda r: r.run)
    results = RunResults(
        sets=records,
        agent=connector.describe(),
        started=started_at,
        run_id=uuid.uuid4().hex,
        duration_s=time.monotonic() - t0,
        interrupted=stop.is_set(),
    )
    if same.reason:
        results.settings.stopped = same.reason  # said in the verdict
    return results


@dataclass(frozen=True)
class Reran:
    """A round of confirmation reruns: the runs made, and the cases that got none because the
    connector has no different run of them left (a replay past its recordings)."""

    made: int
    none_left: tuple[tuple[str, str], ...] = ()


def rerun(
    targets: list[tuple[LoadedEvalSet, EvalCase, CaseRecord]],
    connector: Connector,
    options: RunOptions,
    stop: threading.Event | None = None,
) -> Reran:
    """Confirmation reruns: one more run of each target case, numbered on from its last (a
    replay replays its next recording), marked as a confirmation and added to its runs in
    order. A recorded run is evidence once: a case whose recordings are all replayed gets no
    rerun (:attr:`Reran.none_left`), and the gate judges the runs that exist."""
    stop = stop or threading.Event()
    connector = with_features(connector)
    work = []
    none_left = []
    for loaded, case, record in targets:
        set_id = loaded.eval_set.eval_set_id
        run = max((r.run for r in record.runs), default=0) + 1
        recorded = connector.runs_recorded(set_id, case)
        if recorded is not None and run > recorded:
            none_left.append((set_id, case.eval_id))
            continue
        record.runs = list(record.runs)  # runs kept as text (spilled) become objects again
        work.append(Job(set_id, case, record, run, loaded))
    bar = Progress(len(work), what="confirmation reruns", ceiling=options.ceiling)

    def finished(job: Job) -> None:
        assert job.record is not None
        bar.case(Status.ERROR if job.record.error else None)
        job.record.confirmation = True
        job.case_record.runs.append(job.record)
        job.record = None

    if work:
        _execute(work, connector, options, stop, bar, time.monotonic(), finished)
    for job in work:
        if job.record is not None:
            job.record.confirmation = True
            job.case_record.runs.append(job.record)
    bar.finish()
    for job in work:
        job.case_record.runs.sort(key=lambda r: r.run)
    return Reran(len(work), tuple(none_left))
