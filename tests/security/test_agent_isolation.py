"""What an agent can reach of ci-eval: not the runner's file commands, whatever --agent-env
says, and not ci-eval's own environment through /proc (the process is undumpable before any
agent starts)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ci_eval.text.redact import child_environment

FILE_COMMANDS = (
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
)


def test_an_agent_never_gets_the_runners_file_commands_even_when_asked() -> None:
    env = {name: f"/runner/{name}" for name in FILE_COMMANDS} | {"HOME": "/home/u"}
    given = child_environment(env, keep=FILE_COMMANDS)
    assert given == {"HOME": "/home/u"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_ci_eval_is_undumpable_before_its_agents_start() -> None:
    # in a process of its own: the flag stays for the life of the process
    code = (
        "import ctypes, ctypes.util\n"
        "from ci_eval.text.redact import undumpable, PR_GET_DUMPABLE\n"
        "libc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
        "before = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)\n"
        "assert undumpable()\n"
        "print(before, libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["1", "0"], done.stderr


def test_a_run_makes_itself_undumpable_before_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    from ci_eval.text import redact
    from tests.helpers import run_cli

    calls: list[str] = []
    monkeypatch.setattr(redact, "undumpable", lambda: calls.append("undumpable") or True)
    done = run_cli("run", "samples/evals/weather_basic.evalset.json")
    assert done.returncode == 1 and calls == ["undumpable"]


def test_concurrency_is_capped_with_a_warning() -> None:
    from tests.helpers import run_cli

    done = run_cli("run", "samples/evals/weather_basic.evalset.json", "--concurrency", "10000")
    assert "warning: --concurrency 10000 is capped at 64 cases at once" in done.stderr
    assert done.returncode == 1  # berlin, as always
