"""The command connector: the agent's whole process group dies with the case (no orphaned
grandchildren), long reply lines are read in one pass, and an agent that closes its stdout but
keeps running is reported at the turn's deadline."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import pytest

from ci_eval.connectors.base import AgentError
from ci_eval.connectors.command import CommandConnector
from ci_eval.model import Content, EvalCase, Part
from ci_eval.net.deadline import Deadline

TURN = {"user_content": {"role": "user", "parts": [{"text": "hi"}]}}
CASE = EvalCase.model_validate({"eval_id": "c", "conversation": [TURN]})
HI = Content(role="user", parts=[Part(text="hi")])

SPAWNER = """
import json, subprocess, sys, time
pids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]).pid
        for _ in range(3)]
open(sys.argv[1], "w").write(json.dumps(pids))
for line in sys.stdin:
    if sys.argv[2] == "reply":
        print(json.dumps({"final_response": "ok"}), flush=True)
    else:
        time.sleep(120)
"""


def _agent(tmp_path: Path, source: str, *args: str, timeout: float = 30) -> CommandConnector:
    script = tmp_path / "agent.py"
    script.write_text(source)
    argv = " ".join(shlex.quote(a) for a in (sys.executable, str(script), *args))
    return CommandConnector(argv, timeout=timeout)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (containers' PID 1 may never reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _orphans(pids_file: Path) -> int:
    for _ in range(50):  # SIGKILL is asynchronous
        pids = json.loads(pids_file.read_text())
        alive = sum(_alive(p) for p in pids)
        if not alive:
            return 0
        time.sleep(0.1)
    return alive


def _wait_for(path: Path) -> None:
    for _ in range(300):
        if path.exists() and path.read_text():
            return
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_timeout_kills_the_agents_grandchildren_too(tmp_path: Path) -> None:
    pids = tmp_path / "pids.json"
    session = _agent(tmp_path, SPAWNER, str(pids), "hang", timeout=3).open("s", CASE, 1)
    with pytest.raises(AgentError, match="no reply within 3 s"):
        session.send(HI)
    session.close()
    _wait_for(pids)
    assert _orphans(pids) == 0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_the_end_of_a_case_kills_what_the_agent_left_running(tmp_path: Path) -> None:
    pids = tmp_path / "pids.json"
    session = _agent(tmp_path, SPAWNER, str(pids), "reply").open("s", CASE, 1)
    assert session.send(HI).final_response is not None
    session.close()
    assert _orphans(pids) == 0


def test_a_10_mb_reply_line_is_read_whole(tmp_path: Path) -> None:
    source = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    sys.stdout.write(json.dumps({'final_response': 'x' * 10_000_000}) + '\\n')\n"
        "    sys.stdout.flush()\n"
    )
    session = _agent(tmp_path, source).open("s", CASE, 1)
    try:
        turn = session.send(HI)
        assert turn.final_response is not None
        assert len(turn.final_response.parts[0].text) == 10_000_000
        second = session.send(HI)  # the buffer was consumed exactly
        assert second.final_response is not None
    finally:
        session.close()


def test_an_agent_that_closes_stdout_but_lives_is_reported_at_the_deadline(
    tmp_path: Path,
) -> None:
    source = "import os, sys, time\nsys.stdin.readline()\nos.close(1)\ntime.sleep(120)\n"
    session = _agent(tmp_path, source, timeout=2).open("s", CASE, 1)
    with pytest.raises(AgentError) as raised:
        session.send(HI)
    session.close()
    message = str(raised.value)
    assert "closed its stdout without replying but kept running" in message
    assert "(2 s)" in message and "TimeoutExpired" not in message


def test_an_agent_that_exits_without_replying_says_its_exit_code(tmp_path: Path) -> None:
    source = "import sys\nsys.stdin.readline()\nprint('boom', file=sys.stderr)\nsys.exit(4)\n"
    session = _agent(tmp_path, source).open("s", CASE, 1)
    with pytest.raises(AgentError, match="exited with code 4 without replying: boom"):
        session.send(HI)
    session.close()


def test_the_runner_can_pass_a_wall_clock_deadline(tmp_path: Path) -> None:
    source = "import sys, time\nsys.stdin.readline()\ntime.sleep(120)\n"
    session = _agent(tmp_path, source, timeout=600).open("s", CASE, 1)
    with pytest.raises(AgentError, match="no reply"):
        session.send(HI, deadline=Deadline(1))
    session.close()


def test_reply_lines_split_across_reads_and_several_in_one_read(tmp_path: Path) -> None:
    source = (
        "import json, sys, time\n"
        "lines = [json.dumps({'final_response': str(n)}) for n in range(3)]\n"
        "sys.stdin.readline()\n"
        "blob = '\\n'.join(lines) + '\\n'\n"
        "sys.stdout.write(blob[:5]); sys.stdout.flush(); time.sleep(0.2)\n"
        "sys.stdout.write(blob[5:]); sys.stdout.flush()\n"
        "for line in sys.stdin: pass\n"
    )
    session = _agent(tmp_path, source).open("s", CASE, 1)
    try:
        texts = [session.send(HI).final_response.parts[0].text for _ in range(3)]  # type: ignore[union-attr]
    finally:
        session.close()
    assert texts == ["0", "1", "2"]
