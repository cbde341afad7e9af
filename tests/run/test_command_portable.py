"""The command connector on every runner OS: its output read without ``select()`` (which takes
only sockets on Windows), its process tree killed with the platform's primitive (``taskkill /T``
on Windows), its command given as a list as well as a line, and a Windows path kept whole.
The Windows paths run here with the platform's primitive stubbed; the POSIX ones for real."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors import process
from ci_eval.connectors.process import Command, kill_tree, parse_command, popen_options
from tests.conftest import SAMPLES
from tests.helpers import run_cli

AGENT = "samples/agents/weather_agent/command_agent.py"
PY = r"C:\hostedtoolcache\windows\Python\3.11.9\x64\python.exe"


def test_a_windows_path_keeps_its_backslashes() -> None:
    parsed = parse_command(r"C:\tools\agent.exe --city Paris", windows=True)
    assert parsed == Command(r"C:\tools\agent.exe", r"C:\tools\agent.exe --city Paris")


def test_a_quoted_windows_program_may_hold_spaces() -> None:
    line = r'"C:\Program Files\Agent\agent.exe" --verbose'
    assert parse_command(line, windows=True).program == r"C:\Program Files\Agent\agent.exe"
    assert parse_command(line, windows=True).args == line


def test_python_on_windows_is_the_interpreter_ci_eval_runs_under() -> None:
    parsed = parse_command(r"python agents\weather.py", windows=True, python=PY)
    assert parsed.program == PY
    assert parsed.args == PY + r" agents\weather.py"
    spaced = parse_command("python a.py", windows=True, python=r"C:\Py 3\python.exe")
    assert spaced.args == r'"C:\Py 3\python.exe" a.py'


def test_a_posix_line_is_split_as_the_shell_splits_it() -> None:
    parsed = parse_command("python 'my agent.py' --x", windows=False, python="/venv/bin/python")
    assert parsed == Command("/venv/bin/python", ["/venv/bin/python", "my agent.py", "--x"])


@pytest.mark.parametrize("windows", [False, True])
def test_a_list_is_one_argument_per_item_on_every_os(windows: bool) -> None:
    parsed = parse_command(["python3", "my agent.py", r"C:\x"], windows=windows, python="/py")
    assert parsed == Command("/py", ["/py", "my agent.py", r"C:\x"])


@pytest.mark.parametrize("windows", [False, True])
@pytest.mark.parametrize("line", ['"unclosed', "", "   "])
def test_an_unparsable_or_empty_command_is_refused(windows: bool, line: str) -> None:
    with pytest.raises(ValueError):
        parse_command(line, windows=windows)


def test_the_agent_gets_its_own_process_group_on_each_os() -> None:
    assert popen_options(windows=False) == {"start_new_session": True}
    assert popen_options(windows=True) == {"creationflags": 0x00000200}


def test_on_windows_the_tree_is_killed_with_taskkill(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    real_run = subprocess.run

    def fake_run(args: list[str], **kwargs: Any) -> Any:
        calls.append(args)
        return real_run(["true"])

    monkeypatch.setattr(process.subprocess, "run", fake_run)
    monkeypatch.setattr(process.os, "killpg", lambda *a: pytest.fail("killpg on Windows"))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    kill_tree(child, windows=True)
    assert calls == [["taskkill", "/F", "/T", "/PID", str(child.pid)]]
    assert child.returncode is not None  # and the process itself is reaped


def test_on_windows_a_missing_taskkill_still_kills_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_taskkill(*args: Any, **kwargs: Any) -> Any:
        raise FileNotFoundError("taskkill")

    monkeypatch.setattr(process.subprocess, "run", no_taskkill)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    kill_tree(child, windows=True)
    assert child.returncode is not None


class _NoSelectOnPipes(selectors.DefaultSelector):  # type: ignore[misc, valid-type]
    """Windows' select(): sockets only ("OSError 10038 ... not a socket")."""

    def register(self, fileobj: Any, events: int, data: Any = None) -> Any:
        raise OSError(10038, "An operation was attempted on something that is not a socket")


def test_the_agent_is_read_without_select(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selectors, "DefaultSelector", _NoSelectOnPipes)
    monkeypatch.setattr("select.select", _NoSelectOnPipes.register)
    results = tmp_path / "r.json"
    done = run_cli(
        "run",
        str(SAMPLES / "evals"),
        "--agent",
        "command",
        "--agent-command",
        f"python {SAMPLES.parent / AGENT}",
        "--fail-on",
        "error",
        "--results",
        str(results),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(results.read_text())["totals"]["error"] == 0


def _sample_repo(tmp_path: Path, toml: str) -> Path:
    repo = tmp_path / "my repo"
    shutil.copytree(SAMPLES / "evals", repo / "eval sets")
    (repo / "agent").mkdir()
    shutil.copy(SAMPLES.parent / AGENT, repo / "agent" / "command agent.py")
    shutil.copy(SAMPLES / "agents/weather_agent/logic.py", repo / "agent" / "logic.py")
    (repo / "ci-eval.toml").write_text(toml)
    return repo


def test_the_command_may_be_a_toml_array_with_spaces_in_arguments(tmp_path: Path) -> None:
    repo = _sample_repo(
        tmp_path,
        '[run]\npaths = ["eval sets"]\nfail_on = ["error"]\n'
        '[agent]\nkind = "command"\ncommand = ["python", "agent/command agent.py"]\n',
    )
    done = run_cli("run", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed, 1 failed, 0 errors" in done.stdout


def test_a_toml_command_that_is_neither_a_line_nor_strings_is_refused(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path, '[agent]\nkind = "command"\ncommand = ["python", 3]\n')
    done = run_cli("run", cwd=repo)
    assert done.returncode == 2
    assert "[agent] command: wrong type (list); expected a string or an array of strings" in (
        done.stderr
    )


def test_the_action_takes_the_command_and_paths_one_per_line(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path, "")
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_WORKSPACE": str(repo),
        "INPUT_AGENT": "command",
        "INPUT_AGENT-COMMAND": "python\nagent/command agent.py\n",
        "INPUT_PATHS": "eval sets\n",
        "INPUT_FAIL-ON": "error",
        "INPUT_COMMENT": "false",
        "INPUT_RESULTS": "r.json",
    }
    done = run_cli("action", env=env, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    totals = json.loads((repo / "r.json").read_text())["totals"]
    assert (totals["passed"], totals["failed"]) == (4, 1)
