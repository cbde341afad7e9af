"""Replay eval cases against an agent: concurrent across cases, turns in order within one.

Every (case, run) gets a fresh agent session. An agent failure makes that run ERROR with the
reason and never stops the others; a stop request (SIGINT/SIGTERM) lets running cases finish,
starts no new ones and keeps everything already done.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TextIO

from ci_eval import shard
from ci_eval.connectors.base import ActualTurn, AgentError, Connector
from ci_eval.load import LoadedEvalSet
from ci_eval.model import EvalCase, IntermediateData, Invocation
from ci_eval.results import CaseRecord, InvocationRecord, RunRecord, RunResults, SetRecord


@dataclass
class RunOptions:
    concurrency: int = 4
    num_runs: int = 1
    cases: list[str] = field(default_factory=list)  # SET_ID:CASE_ID or SET_ID filters
    shard: tuple[int, int] | None = None  # (I, N): only this shard's cases


def _selected(eval_set_id: str, case_id: str, filters: list[str]) -> bool:
    if not filters:
        return True
    return any(f in (eval_set_id, f"{eval_set_id}:{case_id}", f"*:{case_id}") for f in filters)


def actual_invocation(expected: Invocation, turn: ActualTurn, duration: float) -> Invocation:
    return Invocation(
        invocation_id=expected.invocation_id,
        user_content=expected.user_content,
        final_response=turn.final_response,
        duration=round(duration, 6),
        intermediate_data=IntermediateData(
            tool_uses=turn.tool_uses,
            tool_responses=turn.tool_responses,
            intermediate_responses=turn.intermediate_responses,
        ),
    )


def _skip_reason(case: EvalCase) -> str | None:
    if case.conversation_scenario is not None:
        return (
            "conversation_scenario needs a user simulator; ci-eval replays scripted conversations"
        )
    return None


class Progress:
    """A progress line on stderr for long runs: rewritten in place on a terminal, a line every
    few seconds in CI logs."""

    def __init__(self, total: int, stream: TextIO = sys.stderr, quiet_for: float = 2.0) -> None:
        self.total, self.stream, self.quiet_for = total, stream, quiet_for
        self.done = self.errors = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.tty = stream.isatty()
        self.shown = False
        self.lock = threading.Lock()

    def advance(self, error: bool) -> None:
        with self.lock:
            self.done += 1
            self.errors += int(error)
            now = time.monotonic()
            elapsed = now - self.start
            gap = 0.2 if self.tty else 5.0
            if elapsed < self.quiet_for or (now - self.last < gap and self.done < self.total):
                return
            self.last = now
            line = (
                f"ci-eval: {self.done}/{self.total} runs done, {self.errors} "
                f"error{'' if self.errors == 1 else 's'}, "
                f"{elapsed:.1f} s"
            )
            self.stream.write(("\r" + line) if self.tty else line + "\n")
            self.stream.flush()
            self.shown = True

    def finish(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def run_case(connector: Connector, eval_set_id: str, case: EvalCase, run: int) -> RunRecord:
    record = RunRecord(run=run)
    started = time.monotonic()
    expected = case.invocations()
    try:
        session = connector.open(eval_set_id, case, run)
    except AgentError as exc:
        record.error = f"cannot start a session: {exc}"
        record.invocations = [InvocationRecord(expected=e, error="not run") for e in expected]
        record.duration_s = time.monotonic() - started
        return record
    recorded, measured = 0.0, False
    try:
        for n, exp in enumerate(expected):
            t0 = time.monotonic()
            try:
                turn = session.send(exp.user_content)
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
                record.invocations += [
                    InvocationRecord(expected=e, error="not run") for e in expected[n + 1 :]
                ]
                break
            elapsed = time.monotonic() - t0
            if turn.recorded_duration_s is not None:
                elapsed = turn.recorded_duration_s
                recorded += elapsed
            else:
                measured = True
            record.invocations.append(
                InvocationRecord(
                    expected=exp,
                    actual=actual_invocation(exp, turn, elapsed),
                    duration_s=elapsed,
                    retries=turn.retries,
                )
            )
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


def run_sets(
    sets: list[LoadedEvalSet],
    connector: Connector,
    options: RunOptions,
    stop: threading.Event | None = None,
    agent: str | None = None,
    progress: Callable[[int], Progress] | None = None,
) -> RunResults:
    stop = stop or threading.Event()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    records: list[SetRecord] = []
    jobs: list[tuple[str, EvalCase, CaseRecord, int]] = []
    for loaded in sets:
        es = loaded.eval_set
        set_record = SetRecord(es.eval_set_id, loaded.path, loaded.dialect, loaded.metrics)
        for case in es.eval_cases:
            if not _selected(es.eval_set_id, case.eval_id, options.cases) or not (
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
            reason = _skip_reason(case)
            if reason:
                case_record.skipped = reason
                continue
            for run in range(1, options.num_runs + 1):
                jobs.append((es.eval_set_id, case, case_record, run))
        records.append(set_record)

    bar = (progress or (lambda total: Progress(total)))(len(jobs))

    def work(job: tuple[str, EvalCase, CaseRecord, int]) -> tuple[CaseRecord, RunRecord]:
        eval_set_id, case, case_record, run = job
        if stop.is_set():
            rec = RunRecord(run=run, error="not run: the run was interrupted")
            rec.invocations = [
                InvocationRecord(expected=e, error="not run") for e in case.invocations()
            ]
        else:
            began = time.monotonic()
            rec = run_case(connector, eval_set_id, case, run)
            if not rec.replayed:  # when it ran, relative to the run's start: sets' wall time
                rec.started_s = began - t0
        bar.advance(rec.error is not None)
        return case_record, rec

    with ThreadPoolExecutor(max_workers=max(1, options.concurrency)) as pool:
        for case_record, rec in pool.map(work, jobs):
            case_record.runs.append(rec)
    bar.finish()
    for set_record in records:
        for case_record in set_record.cases:
            case_record.runs.sort(key=lambda r: r.run)
    return RunResults(
        sets=records,
        agent=agent or connector.describe(),
        started=started_at,
        duration_s=time.monotonic() - t0,
        interrupted=stop.is_set(),
    )
