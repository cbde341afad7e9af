"""Nothing an agent starts survives its case: a command agent that forks a process into a
session of its own (``setsid``, out of its process group) loses it when the case ends."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from ci_eval.io import reaper
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(not reaper.available(), reason="needs /proc (Linux)")

# answers each turn after starting a writer in a new session that would go on for 30 s
AGENT = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    subprocess.Popen(
        [sys.executable, "-c",
         "import time, pathlib\\n"
         "p = pathlib.Path({mark!r})\\n"
         "for _ in range(300):\\n"
         "    p.write_text(str(time.time())); time.sleep(0.1)\\n"],
        start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):  # answer once the writer is writing
        if os.path.exists({mark!r}):
            break
        time.sleep(0.05)
    print(json.dumps({{"final_response": "ok"}}), flush=True)
"""


def test_a_process_an_agent_started_in_a_session_of_its_own_dies_with_its_case(
    tmp_path: Path,
) -> None:
    mark = tmp_path / "still-writing"
    (tmp_path / "agent.py").write_text(AGENT.format(mark=str(mark)))
    evalset = {
        "eval_set_id": "s",
        "eval_cases": [
            {
                "eval_id": "c",
                "conversation": [
                    {
                        "invocation_id": "i",
                        "user_content": {"role": "user", "parts": [{"text": "hi"}]},
                        "final_response": {"role": "model", "parts": [{"text": "ok"}]},
                    }
                ],
            }
        ],
    }
    (tmp_path / "s.evalset.json").write_text(json.dumps(evalset))
    proc = run_cli(
        "run", "s.evalset.json", "--agent", "command", "--agent-command",
        f"{sys.executable} agent.py", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert mark.exists()  # it ran, and left its group
    time.sleep(0.5)
    before = mark.stat().st_mtime
    time.sleep(0.6)
    assert mark.stat().st_mtime == before, "a process the agent started outlived its case"


def test_a_mark_finds_a_process_by_its_environment(tmp_path: Path) -> None:
    import subprocess

    token = reaper.new_token()
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        env=reaper.marked(dict(os.environ), token),
        start_new_session=True,
    )
    try:
        killed, deadline = 0, time.monotonic() + 5
        while not killed and time.monotonic() < deadline:  # once it has exec'd, marked
            killed = reaper.kill_marked(token)
        assert killed == 1
        assert child.wait(5) == -9
    finally:
        child.kill()
