"""Real deadlines and prompt, lossless cancellation.

`--timeout` is a wall-clock deadline per turn (a dripping agent fails at it); the first
SIGINT/SIGTERM starts no new turn and cancels running ones after a short grace; a second signal
cancels them at once; either way every case is in every report. Signal tests run ci-eval in its
own process, since signals are the point; the rest run in-process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors.base import ActualTurn, AgentError
from ci_eval.connectors.command import CommandConnector
from ci_eval.connectors.http import HttpConnector
from ci_eval.errors import InputError
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model import Content, EvalCase, EvalSet, Part
from ci_eval.model.metric_spec import MetricConfig
from ci_eval.net.deadline import Cancellation, Deadline, grace_from
from ci_eval.net.http import HttpSettings
from ci_eval.run.runner import RunOptions, run_sets
from tests.loopback_agent import LoopbackAgent

HANG_S = 300  # far beyond any test's patience: only cancellation can end such a turn


def _text(message: str) -> Content:
    return Content(role="user", parts=[Part(text=message)])


def _case(n: int, *messages: str) -> dict[str, Any]:
    return {
        "eval_id": f"c{n}",
        "conversation": [
            {"invocation_id": f"t{i}", "user_content": {"role": "user", "parts": [{"text": m}]}}
            for i, m in enumerate(messages)
        ],
    }


def _case_model(n: int, *messages: str) -> EvalCase:
    return EvalCase.model_validate(_case(n, *messages))


def _write_set(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": cases}))
    return path


# ---- deadlines, in-process ----------------------------------------------------------------


def test_a_guarded_block_is_aborted_at_its_deadline() -> None:
    aborted = threading.Event()
    deadline = Deadline(0.2)
    with deadline.guard(aborted.set):
        assert aborted.wait(30)
    assert deadline.fired and deadline.expired()
    assert deadline.message() == "no reply within 0.2 s"


def test_deadlines_fire_in_their_order_whatever_order_they_were_guarded_in() -> None:
    # the watchdog sleeps until the earliest deadline it knows: one guarded later but due
    # sooner must wake it, one due later must still fire after the sooner one has
    events = {name: threading.Event() for name in ("late", "soon", "later")}
    late, soon, later = Deadline(600), Deadline(0.5), Deadline(0.7)
    with late.guard(events["late"].set):
        time.sleep(0.2)  # the watchdog settles into sleeping until the late one
        with soon.guard(events["soon"].set), later.guard(events["later"].set):
            assert events["soon"].wait(30) and events["later"].wait(30)
    assert soon.fired and later.fired
    assert not late.fired and not events["late"].is_set()


def test_a_block_that_ends_in_time_is_not_aborted() -> None:
    aborted = threading.Event()
    deadline = Deadline(30)
    with deadline.guard(aborted.set):
        pass
    assert not deadline.fired and not aborted.is_set()


def test_abandoning_a_cancellation_aborts_its_turns_at_once() -> None:
    cancel = Cancellation(grace=3600)
    aborted = threading.Event()
    deadline = Deadline(3600, cancel)
    with deadline.guard(aborted.set):
        cancel.set()  # the first signal: the grace runs
        assert not aborted.wait(0.1)
        cancel.abandon()  # the second signal
        assert aborted.wait(30)
    assert deadline.message() == "cancelled"
    assert Deadline(3600, cancel).expired()  # nothing new starts once abandoned


def test_the_grace_period_ends_in_abandonment() -> None:
    cancel = Cancellation(grace=0.1)
    cancel.set()
    assert cancel.is_set()
    assert cancel.abandoned.wait(30)


def test_the_grace_comes_from_the_environment_and_is_checked() -> None:
    assert grace_from({}) == 3.0
    assert grace_from({"CI_EVAL_CANCEL_GRACE": "0.5"}) == 0.5
    for bad in ("soon", "-1", "nan", "inf"):
        with pytest.raises(InputError, match="CI_EVAL_CANCEL_GRACE"):
            grace_from({"CI_EVAL_CANCEL_GRACE": bad})


def test_an_http_agent_dripping_its_reply_fails_at_the_deadline() -> None:
    """requests' timeout is per read: a byte every 0.2 s would never trip it."""
    with LoopbackAgent() as agent:
        connector = HttpConnector(agent.url, HttpSettings(timeout=1, retries=0))
        session = connector.open("s", _case_model(1, "drip 0.2"), 1)
        with pytest.raises(AgentError, match=r"no reply within 1 s"):
            session.send(_text("drip 0.2"), Deadline(1))
        connector.close()


def test_retry_after_beyond_the_deadline_is_not_slept_through() -> None:
    with LoopbackAgent() as agent:  # Retry-After: 1, three times; the turn has 0.5 s
        connector = HttpConnector(agent.url, HttpSettings(timeout=0.5, retries=3))
        session = connector.open("s", _case_model(1, "limit 429 3"), 1)
        with pytest.raises(AgentError, match=r"no reply within 0.5 s"):
            session.send(_text("limit 429 3"), Deadline(0.5))
        assert agent.requests["limit 429 3"] == 1
        connector.close()


def test_a_command_agent_dripping_without_a_newline_fails_at_the_deadline(
    tmp_path: Path,
) -> None:
    script = tmp_path / "drip.py"
    script.write_text(
        "import sys, time\n"
        "sys.stdin.readline()\n"
        "while True:\n"
        "    sys.stdout.write('x'); sys.stdout.flush(); time.sleep(0.1)\n"
    )
    connector = CommandConnector(f"{sys.executable} {script}", timeout=1)
    session = connector.open("s", _case_model(1, "hi"), 1)
    try:
        with pytest.raises(AgentError, match=r"no reply within 1 s"):
            session.send(_text("hi"), Deadline(1))
    finally:
        session.close()


class _TwoTurnAgent:
    """Turn one answers and, meanwhile, the run is stopped; turn two must not be sent."""

    kind = "fake"

    def __init__(self, stop: Cancellation) -> None:
        self.stop = stop
        self.sent: list[str] = []

    def describe(self) -> str:
        return "fake"

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _TwoTurnAgent:
        return self

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        self.sent.append(user_content.text())
        self.stop.set()
        return ActualTurn(final_response=Content(role="model", parts=[Part(text="ok")]))

    def close(self) -> None:
        return None


def test_no_new_turn_starts_after_a_stop_request(tmp_path: Path) -> None:
    stop = Cancellation(grace=3600)
    agent = _TwoTurnAgent(stop)
    loaded = LoadedEvalSet(
        eval_set=EvalSet.model_validate({"eval_set_id": "s", "eval_cases": [_case(1, "a", "b")]}),
        path="s.evalset.json",
        dialect="adk",
        metrics=MetricConfig([], "default", "default"),
    )
    results = run_sets([loaded], agent, RunOptions(concurrency=1), stop=stop)
    run = results.sets[0].cases[0].runs[0]
    assert agent.sent == ["a"]
    assert run.error == "turn 2: cancelled"
    assert [i.error for i in run.invocations] == [None, "cancelled"]
    assert results.interrupted


# ---- signals, in a process of its own --------------------------------------------------------


def _start(args: list[str], cwd: Path, grace: str) -> subprocess.Popen[str]:
    """ci-eval in its own process; stderr goes to cwd/stderr.txt, to be watched meanwhile."""
    env = dict(os.environ, CI_EVAL_CANCEL_GRACE=grace)
    return subprocess.Popen(
        [sys.executable, "-m", "ci_eval", *args],
        stdout=subprocess.PIPE,
        stderr=(cwd / "stderr.txt").open("w"),
        text=True,
        cwd=cwd,
        env=env,
    )


def _wait_until(condition: Any, limit: float = 60) -> None:
    end = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < end, "the agent was never reached"
        time.sleep(0.05)


def _statuses(results: Path) -> dict[str, tuple[str, str | None]]:
    data = json.loads(results.read_text())
    assert data["interrupted"] is True
    return {
        c["eval_id"]: (c["status"], c["runs"][0]["error"] if c["runs"] else None)
        for c in data["sets"][0]["cases"]
    }


def test_a_signal_cancels_hung_http_turns_and_every_report_is_written(tmp_path: Path) -> None:
    """--timeout is an hour; the first SIGTERM alone ends the run after the grace."""
    evals = _write_set(
        tmp_path / "s.evalset.json",
        [_case(1, "hello"), *[_case(n, f"slow {HANG_S}") for n in (2, 3)], _case(4, "later")],
    )
    with LoopbackAgent() as agent:
        proc = _start(
            [
                "run",
                str(evals),
                "--agent",
                "http",
                "--agent-url",
                agent.url,
                "--concurrency",
                "2",
                "--timeout",
                "3600",
                "--results",
                "r.json",
                "--junit",
                "j.xml",
            ],
            tmp_path,
            grace="0.5",
        )
        _wait_until(lambda: agent.requests[f"slow {HANG_S}"] >= 2)
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 3, stdout + stderr
    assert "Traceback" not in stderr
    statuses = _statuses(tmp_path / "r.json")
    assert statuses["c1"][1] is None  # finished before the signal: kept, scored
    for hung in ("c2", "c3"):
        status, error = statuses[hung]
        assert status == "ERROR" and error is not None
        assert error.startswith("turn 1: ") and error.endswith("cancelled"), error
    assert statuses["c4"][0] == "ERROR" and "interrupted" in (statuses["c4"][1] or "")
    junit = (tmp_path / "j.xml").read_text()
    assert all(f'name="c{n}"' in junit for n in (1, 2, 3, 4))


def test_a_second_signal_cancels_at_once_without_waiting_for_the_grace(tmp_path: Path) -> None:
    """The grace is an hour here: only the second signal can end the run."""
    evals = _write_set(tmp_path / "s.evalset.json", [_case(n, "hi") for n in (1, 2, 3)])
    marker = tmp_path / "started"
    agent = f"sh -c 'touch {marker}; exec sleep {HANG_S}'"
    proc = _start(
        [
            "run",
            str(evals),
            "--agent",
            "command",
            "--agent-command",
            agent,
            "--concurrency",
            "1",
            "--timeout",
            "3600",
            "--results",
            "r.json",
            "--junit",
            "j.xml",
        ],
        tmp_path,
        grace="3600",
    )
    _wait_until(marker.exists)
    proc.send_signal(signal.SIGINT)
    _wait_until(lambda: "stopping:" in (tmp_path / "stderr.txt").read_text())
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=60)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 3, stdout + stderr
    assert "stopping now" in stderr and "Traceback" not in stderr
    statuses = _statuses(tmp_path / "r.json")
    assert statuses["c1"][0] == "ERROR" and (statuses["c1"][1] or "").endswith("cancelled")
    assert all(statuses[c][0] == "ERROR" for c in ("c2", "c3"))
    assert (tmp_path / "j.xml").is_file()
