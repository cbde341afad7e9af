"""One settings object: ci-eval.toml, then the action's inputs or the command's flags over it,
checked once, every message naming the setting as the user spelled it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval import preflight
from ci_eval.errors import InputError
from ci_eval.settings import (
    AGENT_KINDS,
    INPUTS,
    SETTINGS,
    RunSettings,
    from_inputs,
    github_token,
    load_config,
)
from ci_eval.settings.check import check
from tests.conftest import REPO


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


def _toml(folder: Path, text: str) -> Path:
    path = folder / "ci-eval.toml"
    path.write_text(text)
    return path


def _message(settings: RunSettings) -> str:
    with pytest.raises(InputError) as caught:
        check(settings)
    return str(caught.value)


def test_a_bad_value_from_ci_eval_toml_is_named_as_the_toml_spells_it(in_tmp: Path) -> None:
    settings = load_config(_toml(in_tmp, "[run]\nconcurrency = 0\n"), required=True)
    assert _message(settings) == f"{in_tmp / 'ci-eval.toml'}: [run] concurrency must be at least 1"


def test_a_bad_value_from_a_flag_is_named_by_the_flag() -> None:
    settings = RunSettings().overlay({"timeout": 0.0})
    assert _message(settings) == "--timeout must be > 0, not 0"


def test_the_action_names_its_inputs_never_a_flag(in_tmp: Path) -> None:
    for inputs, expected in (
        ({"INPUT_CONCURRENCY": "0"}, "input concurrency must be at least 1"),
        ({"INPUT_TOLERANCE": "-1"}, "input tolerance must be >= 0, not -1"),
        ({"INPUT_FAIL-ON": "regressions"}, "input fail-on: unknown regressions"),
        ({"INPUT_SHARD": "3/2"}, "input shard '3/2': expected I/N"),
        ({"INPUT_MIN-PASS": "3"}, "input min-pass must be between 1 and input num-runs (1)"),
        ({"INPUT_WINDOW": "0"}, "input window must be at least 1"),
        ({"INPUT_REPLAY-PICK": "latest"}, "input replay-pick 'latest': choose one of newest"),
    ):
        settings, _ = from_inputs(inputs)
        message = _message(settings)
        assert message.startswith(expected), message
        assert not re.search(r"(^|\s)--[a-z]", message), message


def test_a_setting_nobody_set_is_named_in_the_runs_own_source() -> None:
    cli = RunSettings()
    action, _ = from_inputs({})
    assert cli.names.name("agent.url") == "--agent-url"
    assert action.names.name("agent.url") == "input agent-url"
    # no input for it: the action's users set it in ci-eval.toml
    assert action.names.name("judge.base_url") == "[judge] base_url"


def test_a_missing_agent_setting_is_named_in_the_actions_words(in_tmp: Path) -> None:
    from ci_eval.connectors import build_connector

    settings, _ = from_inputs({"INPUT_AGENT": "adk-http"})
    with pytest.raises(InputError, match=r"^input agent adk-http needs input agent-url$"):
        build_connector(settings.agent, 1.0, 0, env={})


def test_the_action_keeps_what_ci_eval_toml_says_about_the_comment_and_the_files(
    in_tmp: Path,
) -> None:
    _toml(in_tmp, '[run]\ncomment = false\njunit = "out/j.xml"\nresults = "out/r.json"\n')
    _, report = from_inputs({})
    assert (report.comment, report.junit, report.results) == (False, "out/j.xml", "out/r.json")
    _, report = from_inputs({"INPUT_COMMENT": "true", "INPUT_JUNIT": "x.xml"})
    assert (report.comment, report.junit) == (True, "x.xml")


def test_without_inputs_or_toml_the_action_comments_and_writes_its_default_files(
    in_tmp: Path,
) -> None:
    _, report = from_inputs({})
    assert (report.comment, report.junit, report.results) == (
        True,
        "ci-eval-junit.xml",
        "ci-eval-results.json",
    )
    assert report.job_summary


def test_the_inputs_only_toml_could_set_before(in_tmp: Path) -> None:
    settings, _ = from_inputs(
        {
            "INPUT_EVAL-CONFIG": "cfg.json",
            "INPUT_REPLAY-PICK": "all",
            "INPUT_AGENT-ENV": "A\nB, C",
            "INPUT_WINDOW": "7",
            "INPUT_MIN-HISTORY": "3",
            "INPUT_ACCEPT": "acc.toml",
        }
    )
    assert settings.eval_config == "cfg.json"
    assert settings.agent.replay_pick == "all"
    assert settings.agent.env == ("A", "B", "C")  # frozen: a tuple
    assert (settings.baseline_window, settings.min_history, settings.accept) == (7, 3, "acc.toml")


def test_the_job_summary_is_a_report_setting_not_a_deleted_variable(in_tmp: Path) -> None:
    from ci_eval.publish import publish
    from tests.factories import results

    summary = in_tmp / "step-summary.md"
    summary.write_text("")
    _, report = from_inputs({"INPUT_JOB-SUMMARY": "false", "INPUT_COMMENT": "false"})
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    publish(results({"a": "PASSED", "b": "FAILED"}), report, env=env)
    assert summary.read_text() == ""
    report.job_summary = True
    publish(results({"a": "PASSED", "b": "FAILED"}), report, env=env)
    assert summary.read_text() != ""


def test_the_github_token_is_read_in_one_place() -> None:
    assert github_token({"GITHUB_TOKEN": "b", "INPUT_GITHUB-TOKEN": "a"}) == "a"
    assert github_token({"GITHUB_TOKEN": "b", "INPUT_GITHUB_TOKEN": ""}) == "b"
    assert github_token({}) is None
    _, report = from_inputs({"INPUT_GITHUB-TOKEN": "tok"})
    assert report.token == "tok" and "tok" not in repr(report)


def test_the_agent_kinds_are_the_connectors_registry() -> None:
    from ci_eval.connectors import CONNECTORS

    assert tuple(CONNECTORS) == AGENT_KINDS
    agent = (REPO / "action.yml").read_text().split("\n  agent:\n", 1)[1].split("\n", 1)[0]
    for kind in AGENT_KINDS:
        assert kind in agent


def test_every_input_is_a_setting_or_one_of_the_actions_own() -> None:
    inputs = {s.input for s in SETTINGS if s.input}
    assert set(INPUTS) - inputs == {"config", "job-summary", "github-token", "working-directory"}
    assert len(INPUTS) == len(set(INPUTS))


def test_the_eval_config_and_baseline_ref_inputs_are_named_as_inputs(in_tmp: Path) -> None:
    from ci_eval import pipeline
    from ci_eval.gate import main_history

    settings, _ = from_inputs({"INPUT_EVAL-CONFIG": "nowhere.json", "INPUT_PATHS": "."})
    with pytest.raises(InputError, match=r"^nowhere.json: input eval-config: no such file$"):
        pipeline.load_eval_sets(settings)
    settings, _ = from_inputs({"INPUT_BASELINE-REF": "no-such-ref"})
    with pytest.raises(InputError, match=r"^input baseline-ref no-such-ref: "):
        main_history.load_baseline(settings, {})


def test_preflight_names_an_output_path_as_it_was_given(in_tmp: Path) -> None:
    (in_tmp / "taken").mkdir()
    settings, _ = from_inputs({"INPUT_JUNIT": "taken"})
    with pytest.raises(InputError, match=r"^taken: input junit: is a directory"):
        preflight.run(settings)
