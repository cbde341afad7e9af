"""ci-eval.toml read into the run's settings: each table, paths relative to the file, and
one-line errors naming the file and the setting."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_eval.errors import InputError
from ci_eval.settings import CONFIG_NAME, RunSettings, find_config, load_config


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / CONFIG_NAME
    path.write_text(text)
    return path


def test_no_file_gives_the_defaults_unless_it_was_asked_for(tmp_path: Path) -> None:
    assert load_config(None, required=False) == RunSettings()
    assert load_config(tmp_path / CONFIG_NAME, required=False) == RunSettings()
    with pytest.raises(InputError, match="no such config file"):
        load_config(tmp_path / CONFIG_NAME, required=True)


def test_every_table_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = _config(
        tmp_path,
        "[run]\nconcurrency = 8\nnum-runs = 3\nfail_on = ['failure']\ncomment = true\n"
        "[agent]\nkind = 'http'\nurl = 'http://127.0.0.1:9/turn'\nheaders = {X-A = '1'}\n"
        "[judge]\nmodel = 'm'\nretries = 1\n"
        "[simulator]\nmax_turns = 4\n"
        "[metrics]\nresponse_match_score = 0.5\n"
        "[custom_metrics]\nmine = 'team:fn'\n",
    )
    settings = load_config(path, required=True)
    assert (settings.concurrency, settings.num_runs, settings.fail_on) == (8, 3, ["failure"])
    assert settings.comment is True
    assert (settings.agent.kind, settings.agent.headers) == ("http", {"X-A": "1"})
    assert (settings.judge.model, settings.judge.retries) == ("m", 1)
    assert settings.simulator.max_turns == 4
    assert settings.metrics == {"response_match_score": 0.5}
    assert settings.custom_metrics == {"mine": "team:fn"}


def test_paths_are_relative_to_the_file_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    path = _config(
        repo,
        "[run]\npaths = ['evals', '/abs/evals']\neval_config = 'cfg.json'\n"
        "[agent]\nreplay = ['recorded']\n",
    )
    monkeypatch.chdir(tmp_path)
    settings = load_config(path, required=True)
    assert settings.paths == ["repo/evals", "/abs/evals"]
    assert settings.eval_config == "repo/cfg.json"
    assert settings.agent.replay == ["repo/recorded"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[run]\nconcurency = 2\n", "unknown key [run] concurency (did you mean concurrency?)"),
        ("[run]\nzzz = 2\n", "unknown key [run] zzz; [run] has: accept, "),
        ("[agents]\n", "unknown table [agents] (did you mean [agent]?); ci-eval.toml has [run]"),
        ("[run]\nconcurrency = '2'\n", "[run] concurrency: wrong type (str); expected a whole"),
        ("[run]\ncomment = 1\n", "[run] comment: wrong type (int); expected true or false"),
        ("[run]\ntimeout = true\n", "[run] timeout: wrong type (bool); expected a number"),
        ("[judge]\nretries = 1.5\n", "[judge] retries: wrong type (float); expected a whole"),
        ("run = 1\n", "[run] must be a table"),
        ("metrics = 1\n", "[metrics] must be a table"),
        ("[run\n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_one_error_naming_the_file_and_setting(
    tmp_path: Path, text: str, why: str
) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_config(path, required=True)
    assert caught.value.path == str(path)
    assert why in str(caught.value)


def test_the_nearest_config_up_to_the_repository_root_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "sub/dir").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    _config(tmp_path, "")  # outside the repository: never read from inside it
    monkeypatch.chdir(repo / "sub/dir")
    assert find_config() is None
    _config(repo, "")
    assert find_config() == Path(os.path.relpath(repo / CONFIG_NAME))
