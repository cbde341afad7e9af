"""The pipeline's stages as functions, without the command line: loading the eval sets, the
checks made before the first agent call, and a whole run to an outcome."""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval import pipeline
from ci_eval.errors import InputError, ValidationFailed
from ci_eval.results.file import read_results
from ci_eval.results.spill import SpilledRuns
from ci_eval.settings import RunSettings, check_gate
from ci_eval.settings.check import check
from ci_eval.settings.parse import parse_cases
from ci_eval.text import redact
from tests.conftest import SAMPLES
from tests.helpers import WEATHER_AGENT

WEATHER = SAMPLES / "evals/weather_basic.evalset.json"


def _settings(*paths: Path, **changes: object) -> RunSettings:
    settings = RunSettings(paths=[str(p) for p in paths])
    for name, value in changes.items():
        setattr(settings, name, value)
    return settings


# --- loading ---------------------------------------------------------------------------------


def test_every_eval_set_under_the_paths_is_loaded() -> None:
    sets = pipeline.load_eval_sets(_settings(SAMPLES / "evals"))
    assert {s.eval_set.eval_set_id for s in sets} >= {"weather_basic"}


def test_every_invalid_file_is_named_not_only_the_first(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.evalset.json").write_text('{"eval_set_id": ')
    with pytest.raises(ValidationFailed) as caught:
        pipeline.load_eval_sets(_settings(tmp_path))
    assert sorted(Path(p.path).name for p in caught.value.problems) == [
        "a.evalset.json",
        "b.evalset.json",
    ]


def test_no_eval_set_is_an_input_error_naming_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=f"no eval sets found under {tmp_path}"):
        pipeline.load_eval_sets(_settings(tmp_path))


def test_a_case_filter_that_matches_nothing_is_refused() -> None:
    sets = pipeline.load_eval_sets(_settings(WEATHER))
    pipeline.check_case_filters(sets, parse_cases(["weather_basic:paris_weather"]))
    with pytest.raises(InputError, match="weather_basic:nope: no such eval set or case"):
        pipeline.check_case_filters(sets, parse_cases(["weather_basic:nope"]))


# --- checks before the first agent call -------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"metric": ["no_such_metric"]}, "unknown metric"),
        ({"metric": ["m=high"]}, "the threshold must be a number"),
        ({"metrics": {"m": "high"}}, "expected a threshold or a table"),
        ({"min_pass": 3, "num_runs": 2}, "min.pass"),
    ],
)
def test_bad_scoring_options_are_input_errors(changes: dict[str, object], why: str) -> None:
    settings = _settings(**changes)
    with pytest.raises(InputError, match=why):
        plan = check(settings)  # the settings' own check parses --metric and [metrics]
        pipeline.score_options(settings, plan)


def test_the_judge_needs_a_url_and_a_model_and_its_key_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = _settings()
    assert pipeline.make_judge(settings) is None  # no judge configured: none
    settings.judge.base_url = "http://127.0.0.1:9/v1"
    with pytest.raises(InputError, match="needs both a base URL and a model"):
        pipeline.make_judge(settings)
    settings.judge.model, settings.judge.api_key_env = "m", "THE_JUDGES_KEY"
    monkeypatch.delenv("THE_JUDGES_KEY", raising=False)
    with pytest.raises(InputError, match="THE_JUDGES_KEY"):
        pipeline.make_judge(settings)
    monkeypatch.setenv("THE_JUDGES_KEY", "k")
    assert pipeline.make_judge(settings) is not None


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"significance": 1.0}, "significance"),
        ({"significance": 0.0}, "significance"),
        ({"tolerance": -0.1}, "tolerance"),
        ({"min_history": 0}, "history"),
        ({"baseline_window": 0}, "window"),
        ({"fail_on": ["flakes"]}, "unknown flakes"),
    ],
)
def test_bad_gate_options_are_input_errors(
    changes: dict[str, object], why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=why):
        check_gate(_settings(**changes))


def test_a_command_agent_gets_no_tokens_but_those_passed_through() -> None:
    settings = _settings()
    settings.judge.api_key_env, settings.agent.token_env = "JUDGE_KEY", "AGENT_TOKEN"
    settings.agent.env = ["GITHUB_TOKEN"]
    env = {
        "PATH": "/usr/bin",
        "JUDGE_KEY": "j",
        "AGENT_TOKEN": "a",
        "GITHUB_TOKEN": "g",
        "INPUT_GITHUB-TOKEN": "i",
    }
    assert pipeline.child_environment(settings, env) == {"PATH": "/usr/bin", "GITHUB_TOKEN": "g"}


# --- a whole run -----------------------------------------------------------------------------


@pytest.fixture
def sample_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunSettings]:
    """Settings for a run of the weather samples; what the run changes in the process (the
    redactor's secrets, frozen objects) is put back afterwards, as ``cli.main`` does."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(WEATHER, tmp_path / WEATHER.name)
    settings = _settings(tmp_path / WEATHER.name, results=str(tmp_path / "r.json"))
    settings.agent.kind, settings.agent.command = "command", WEATHER_AGENT
    previous = redact.install(redact.Redactor())
    yield settings
    redact.install(previous)
    gc.unfreeze()


def test_a_run_scores_every_case_writes_the_results_and_gates(sample_run: RunSettings) -> None:
    outcome = pipeline.run(sample_run)
    statuses = {c.eval_id: c.status for _, c in outcome.results.cases()}
    assert statuses == {
        "paris_weather": "PASSED",
        "multi_turn_london_tokyo": "PASSED",
        "berlin_expected_to_fail": "FAILED",
    }
    assert outcome.exit_code == 1
    assert Path(sample_run.results or "").is_file()
    assert outcome.results.settings.agent == "command"


def test_a_run_keeps_its_scored_cases_as_json(
    sample_run: RunSettings,
) -> None:
    outcome = pipeline.run(sample_run)
    invocations = [i for _, c in outcome.results.cases() for r in c.runs for i in r.invocations]
    assert invocations and all(i.compacted for i in invocations)
    assert invocations[0].expected.user_content.text()  # rebuilt on access


def test_a_run_of_more_cases_than_the_limit_keeps_their_runs_in_a_temporary_file(
    sample_run: RunSettings,
) -> None:
    outcome = pipeline.run(sample_run, env={**os.environ, "CI_EVAL_RUNS_IN_MEMORY": "2"})
    cases = [c for _, c in outcome.results.cases()]
    assert cases and all(isinstance(c.runs, SpilledRuns) for c in cases)
    assert {c.eval_id: c.status for c in cases}["berlin_expected_to_fail"] == "FAILED"
    written = read_results(Path(sample_run.results or ""))
    assert [list(c.runs) for c in cases] == [c.runs for _, c in written.cases()]


def test_a_bad_option_stops_the_run_before_the_agent_is_called(sample_run: RunSettings) -> None:
    sample_run.agent.command = "/no/such/agent"
    sample_run.concurrency = 0
    with pytest.raises(InputError, match="concurrency"):
        pipeline.run(sample_run)
    assert not Path(sample_run.results or "").exists()


def test_a_run_reads_its_settings_parsed_and_leaves_them_as_given(sample_run: RunSettings) -> None:
    sample_run.concurrency = 1000
    sample_run.shard = "1/1"
    outcome = pipeline.run(sample_run)
    assert (sample_run.concurrency, sample_run.shard) == (1000, "1/1")  # as the user gave them
    assert outcome.results.settings.concurrency == 64  # what ran: the plan's, capped
    assert "warning: --concurrency 1000 is capped at 64 cases at once" in outcome.problems
