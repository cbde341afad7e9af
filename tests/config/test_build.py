"""Every command's settings come by one path (settings.build): the table's defaults,
ci-eval.toml, the flags or inputs, the action's defaults — then frozen; and each flag is the
setting the settings table names it for, spelled once."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import typer.main

from ci_eval.cli import app
from ci_eval.settings.build import build
from ci_eval.settings.flags import flag_parameter, from_flags
from ci_eval.settings.model import SETTINGS


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_built_settings_are_frozen_to_their_tables(in_tmp: Path) -> None:
    settings = build({"timeout": 5.0, "agent.env": ["A"]}, {})
    for target, name in ((settings, "timeout"), (settings.agent, "url"), (settings.judge, "model")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(target, name, 1)
    assert settings.agent.env == ("A",)  # a tuple: nothing appends to it after
    with pytest.raises(TypeError):
        settings.agent.headers["X"] = "y"  # type: ignore[index]


def test_a_replaced_copy_of_frozen_settings_is_a_new_value_to_build(in_tmp: Path) -> None:
    agent = build({}, {}).agent
    other = dataclasses.replace(agent, url="http://127.0.0.1:1")
    other.cwd = "elsewhere"  # not built yet: the control's agent is assembled from it
    assert agent.cwd is None


def test_flags_over_toml_then_defaults_for_what_nobody_gave(in_tmp: Path) -> None:
    (in_tmp / "ci-eval.toml").write_text('[run]\ntimeout = 9\njunit = "t.xml"\n')
    settings = build(
        {"retries": 5, "junit": None}, {}, defaults={"junit": "d.xml", "results": "r.json"}
    )
    assert (settings.timeout, settings.retries) == (9.0, 5)
    assert (settings.junit, settings.results) == ("t.xml", "r.json")
    assert settings.names.name("retries") == "--retries"


def _commands() -> dict[str, Any]:
    group: Any = typer.main.get_command(app)
    return {**group.commands, "baseline update": group.commands["baseline"].commands["update"]}


@pytest.mark.parametrize("name", ["run", "compare", "report", "baseline update"])
def test_each_settings_option_is_the_parameter_named_for_its_flag(name: str) -> None:
    # from_flags finds a flag's value by this name: a parameter named otherwise is a flag that
    # silently sets nothing
    by_flag = {s.flag: s for s in SETTINGS if s.flag}
    for param in _commands()[name].params:
        for flag in param.opts:
            if flag in by_flag:
                assert param.name == flag_parameter(flag), (name, flag, param.name)


def test_every_flag_of_the_settings_table_is_an_option_of_run() -> None:
    run = _commands()["run"]
    options = {o for p in run.params for o in p.opts}
    assert {s.flag for s in SETTINGS if s.flag} <= options


def test_a_commands_parameters_become_settings_by_the_table() -> None:
    given = from_flags({"agent_url": "http://x", "window": 3, "case": ["s:a"], "output": "o"})
    assert given == {"agent.url": "http://x", "baseline_window": 3, "cases": ["s:a"]}
