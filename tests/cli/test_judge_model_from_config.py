"""An ADK eval config's ``judge_model`` (test_config.json's ``judge_model_options``) is the
judge's model where neither [judge] nor --judge-model names one, and the run says so once;
[judge]'s model, when given, is the judge's and the config's is not used."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLES
from tests.helpers import run_sample_agent
from tests.judge_server import JudgeServer

VALID = '{"is_the_agent_response_valid": "valid"}'


def _judged_set(folder: Path, judge_model: str | None) -> Path:
    """The samples' weather set in ``folder``, judged by final_response_match_v2 under a
    test_config.json that names ``judge_model`` (None: names none)."""
    folder.mkdir(parents=True)
    evalset = json.loads((SAMPLES / "evals/weather_basic.evalset.json").read_text())
    evalset["eval_set_id"] = f"weather_{folder.name}"  # each folder's set an id of its own
    (folder / "weather_basic.evalset.json").write_text(json.dumps(evalset))
    options: dict[str, object] = {"num_samples": 1}
    if judge_model is not None:
        options["judge_model"] = judge_model
    criterion = {"threshold": 0.5, "judge_model_options": options}
    config = {"criteria": {"final_response_match_v2": criterion}}
    (folder / "test_config.json").write_text(json.dumps(config))
    return folder


def _said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("ci-eval: judge model ")]


def test_the_config_s_judge_model_is_used_when_no_setting_names_one(tmp_path: Path) -> None:
    _judged_set(tmp_path / "evals", "gemini-2.5-flash")
    with JudgeServer(lambda prompt, n: VALID) as server:
        done = run_sample_agent("evals", "--judge-url", server.url, "--results", "r.json",
                                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert {body["model"] for body in server.bodies} == {"gemini-2.5-flash"}
    assert _said(done.stderr) == [
        "ci-eval: judge model gemini-2.5-flash from evals/test_config.json "
        "(no [judge] model or --judge-model given)"
    ]
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["settings"]["models"]["judge"] == "gemini-2.5-flash"


def test_judge_model_wins_over_the_config_s_and_nothing_is_said(tmp_path: Path) -> None:
    _judged_set(tmp_path / "evals", "gemini-2.5-flash")
    with JudgeServer(lambda prompt, n: VALID) as server:
        done = run_sample_agent("evals", "--judge-url", server.url, "--judge-model", "m",
                                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert {body["model"] for body in server.bodies} == {"m"}
    assert _said(done.stderr) == []


def test_a_judge_table_s_model_wins_too(tmp_path: Path) -> None:
    _judged_set(tmp_path / "evals", "gemini-2.5-flash")
    with JudgeServer(lambda prompt, n: VALID) as server:
        (tmp_path / "ci-eval.toml").write_text(
            f'[judge]\nbase_url = "{server.url}"\nmodel = "from-toml"\n'
        )
        done = run_sample_agent("evals", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {body["model"] for body in server.bodies} == {"from-toml"}
    assert _said(done.stderr) == []


def test_configs_naming_different_models_use_the_first_and_say_which(tmp_path: Path) -> None:
    _judged_set(tmp_path / "a", "gemini-2.5-flash")
    _judged_set(tmp_path / "b", "gemini-2.5-pro")
    with JudgeServer(lambda prompt, n: VALID) as server:
        done = run_sample_agent("a", "b", "--judge-url", server.url, cwd=tmp_path)
    assert {body["model"] for body in server.bodies} == {"gemini-2.5-flash"}
    assert _said(done.stderr) == [
        "ci-eval: judge model gemini-2.5-flash from a/test_config.json "
        "(no [judge] model or --judge-model given); one judge model serves a run, so not "
        "gemini-2.5-pro from b/test_config.json"
    ]


def test_a_url_alone_with_no_model_anywhere_is_a_usage_error(tmp_path: Path) -> None:
    _judged_set(tmp_path / "evals", None)
    done = run_sample_agent("evals", "--judge-url", "http://127.0.0.1:9/v1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "ci-eval: the judge needs both a base URL and a model ([judge] base_url and model, or "
        "--judge-url and --judge-model; an ADK eval config's judge_model_options.judge_model "
        "gives the model)"
    )


def test_a_config_s_model_alone_asks_for_no_judge(tmp_path: Path) -> None:
    _judged_set(tmp_path / "evals", "gemini-2.5-flash")
    done = run_sample_agent("evals", cwd=tmp_path)
    assert "final_response_match_v2 not computed: needs an LLM judge" in done.stdout
    assert _said(done.stderr) == []
