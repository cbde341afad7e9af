"""`--help` reads in a plain 80-column terminal: options by panel, `-h` everywhere, whole
command summaries, and `action --help` naming the inputs and the environment it reads."""

from __future__ import annotations

import re

import pytest

from ci_eval.cli.help import PANELS
from ci_eval.settings import INPUTS
from tests.helpers import run_cli

ENV = {"COLUMNS": "80", "PATH": "/usr/bin:/bin"}


def _help(*args: str) -> str:
    done = run_cli(*args, "--help", env=ENV)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _sections(text: str) -> list[str]:
    return re.findall(r"^(\S[^\n]*):$", text, re.M)


def test_run_lists_every_option_in_a_panel() -> None:
    text = _help("run")
    sections = _sections(text)
    assert "Options" not in sections  # no option left outside a panel
    assert [s for s in sections if s != "Arguments"] == list(PANELS)
    assert text.index("--agent-url") < text.index("Selection:") < text.index("--case")
    assert text.index("Gate & baseline:") < text.index("--fail-on") < text.index("Reports:")


@pytest.mark.parametrize("command", [("compare",), ("report",), ("baseline", "update")])
def test_shared_options_sit_in_the_same_panels(command: tuple[str, ...]) -> None:
    text = _help(*command)
    sections = _sections(text)
    assert "Options" not in sections
    assert "Gate & baseline" in sections or "Reports" in sections


@pytest.mark.parametrize(
    "command", [(), ("run",), ("validate",), ("baseline",), ("baseline", "update"), ("action",)]
)
def test_dash_h_is_help(command: tuple[str, ...]) -> None:
    done = run_cli(*command, "-h", env=ENV)
    assert done.returncode == 0, done.stderr
    assert done.stdout == _help(*command)


def test_no_command_summary_is_cut() -> None:
    commands = _help().split("Commands:\n", 1)[1]
    assert "..." not in commands and "…" not in commands
    for line in commands.splitlines():
        assert line.rstrip().endswith("."), line


@pytest.mark.parametrize("command", [("run",), ("action",), ("compare",), ()])
def test_help_fits_80_columns(command: tuple[str, ...]) -> None:
    assert max(len(line) for line in _help(*command).splitlines()) <= 80


def test_action_help_lists_its_inputs_and_environment() -> None:
    text = _help("action")
    for name in INPUTS:
        assert re.search(rf"^  {re.escape(name)}\s", text, re.M), name
    flowing = " ".join(re.sub(r"-\n\s+", "-", text).split())  # as read, not as wrapped
    assert "Run each case N times, each in a fresh session [default: 1]. [--num-runs]" in flowing
    assert "[--junit; action default: ci-eval-junit.xml]" in flowing
    for variable in ("INPUT_<NAME>", "GITHUB_WORKSPACE", "GITHUB_TOKEN", "GITHUB_EVENT_PATH"):
        assert variable in text
