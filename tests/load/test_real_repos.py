"""Real repository layouts: eval sets found by content in eval folders, one config rule however
a set is reached, configs validated as google-adk validates them, trpc-agent-python's trace
mode, replay of ADK's .adk/eval_history, the camelCase ADK dialect, empty sets, ci-eval.toml
from a subfolder. The files are small ones of our own, shaped like the real layouts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors.replay import load_recordings
from ci_eval.errors import InputError
from ci_eval.load.discover import discover_all
from ci_eval.load.evalsets import LoadedEvalSet, Skipped, load_all
from ci_eval.settings import find_config
from tests.factories import evalset, inv
from tests.helpers import run_cli


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`ci-eval ARGS` in-process, run from ``cwd``."""
    return run_cli(*args, cwd=cwd)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


RUBRIC_CONFIG = {
    "criteria": {
        "tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "IN_ORDER"},
        "response_match_score": 0.4,
    }
}


@pytest.fixture
def starter_pack(tmp_path: Path) -> Path:
    """The agent-starter-pack layout: sets in tests/eval/evalsets/ under any name, the config
    one level up, a repository root."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "tests/eval/evalsets/support_eval.json", evalset("support", "refund", "hours"))
    write(repo / "tests/eval/evalsets/account_queries.json", evalset("accounts", "balance"))
    write(repo / "tests/eval/evalsets/gold_set.json", evalset("gold", "g1"))
    write(repo / "tests/eval/eval_config.json", RUBRIC_CONFIG)
    write(repo / "tests/eval/notes.json", {"owner": "qa", "version": 3})
    write(repo / "app/agent_config.json", {"model": "gemini"})
    write(repo / "package.json", {"name": "agent"})
    return repo


# 1. Discovery -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "folder", ["eval", "evals", "evaluation", "evaluations", "eval_data", "evalsets", "tests/eval"]
)
def test_any_json_in_an_eval_folder_is_recognised_by_content(tmp_path: Path, folder: str) -> None:
    write(tmp_path / folder / "whatever_name.json", evalset("s", "a"))
    found = discover_all([tmp_path])
    [candidate] = found.candidates
    assert candidate.path.name == "whatever_name.json" and not candidate.claimed
    [outcome] = load_all(found.candidates)
    assert isinstance(outcome, LoadedEvalSet)


def test_outside_eval_folders_name_patterns_still_decide(tmp_path: Path) -> None:
    write(tmp_path / "data/gold_set.json", evalset("s", "a"))
    write(tmp_path / "data/x.evalset.json", evalset("t", "a"))
    found = discover_all([tmp_path])
    assert [c.path.name for c in found.candidates] == ["x.evalset.json"]
    assert [i.rel.endswith("data/gold_set.json") for i in found.ignored] == [True]


def test_the_eval_folder_counts_when_it_is_the_searched_directory(starter_pack: Path) -> None:
    found = discover_all([starter_pack / "tests/eval/evalsets"])
    assert sorted(c.path.name for c in found.candidates) == [
        "account_queries.json",
        "gold_set.json",
        "support_eval.json",
    ]


def test_non_eval_json_in_an_eval_folder_is_skipped_with_its_reason(starter_pack: Path) -> None:
    outcomes = load_all(discover_all([starter_pack]).candidates)
    skipped = {Path(o.path).name: o.reason for o in outcomes if isinstance(o, Skipped)}
    assert skipped == {
        "notes.json": "not an eval set (unrecognised JSON (an object with keys: owner, version))"
    }


@pytest.mark.parametrize(
    "data",
    [
        [],
        [{"query": "what is up?", "expected": "x"}],  # another tool's dataset of queries
        [{"data": [1, 2]}],
    ],
)
def test_loose_shapes_found_by_content_are_skipped_not_errors(tmp_path: Path, data: Any) -> None:
    write(tmp_path / "evals/queries.json", data)
    [outcome] = load_all(discover_all([tmp_path]).candidates)
    assert isinstance(outcome, Skipped), outcome
    assert outcome.reason.startswith(("not an eval set", "empty list"))


def test_a_legacy_list_found_by_content_with_adks_keys_loads(tmp_path: Path) -> None:
    write(tmp_path / "evals/roll.json", [{"query": "roll", "reference": "4"}])
    [outcome] = load_all(discover_all([tmp_path]).candidates)
    assert isinstance(outcome, LoadedEvalSet) and outcome.dialect == "adk-legacy"


def test_a_large_unrelated_json_is_skipped_without_parsing(tmp_path: Path) -> None:
    # invalid JSON on purpose: were it parsed, it would be an error, not a skip
    write(tmp_path / "evals/big.json", '{"rows": [' + "1," * 200_000 + "oops")
    [outcome] = load_all(discover_all([tmp_path]).candidates)
    assert isinstance(outcome, Skipped)
    assert outcome.reason == "not an eval set (no key any eval-set format uses)"


def test_validate_counts_what_it_skipped_and_lists_it_with_v(starter_pack: Path) -> None:
    result = cli("validate", ".", cwd=starter_pack)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "notes.json" not in result.stdout
    assert result.stderr.strip() == (
        "3 eval sets (4 cases), 1 sidecar, 1 skipped, 0 invalid, 2 other JSON not read "
        "(-v lists them)"
    )
    verbose = cli("validate", ".", "-v", cwd=starter_pack)
    assert "tests/eval/notes.json: skipped: not an eval set (unrecognised JSON" in verbose.stdout
    assert (
        "package.json: not read: name matches no pattern and no folder on its path starts with "
        "'eval' (--include '*.json' to read it)"
    ) in verbose.stdout
    assert "app/agent_config.json: not read:" in verbose.stdout


def test_a_folder_without_sets_says_what_it_passed_over(tmp_path: Path) -> None:
    write(tmp_path / "data/gold_set.json", evalset("s", "a"))
    result = cli("validate", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "1 JSON file skipped or not read; -v lists them" in result.stderr


# 2. One config rule -------------------------------------------------------------------------


def _config_of(result: subprocess.CompletedProcess[str], name: str) -> str:
    [line] = [x for x in result.stdout.splitlines() if name in x and ": ok:" in x]
    return line.split("; metrics ", 1)[1]


@pytest.mark.parametrize(
    ("cwd", "arg"),
    [
        ("", "tests/eval/evalsets/support_eval.json"),
        ("", "tests/eval/evalsets"),
        ("", "tests/eval"),
        ("", "."),
        ("tests/eval/evalsets", "support_eval.json"),
        ("app", "../tests/eval/evalsets/support_eval.json"),
    ],
)
def test_the_config_does_not_depend_on_how_the_set_was_reached(
    starter_pack: Path, cwd: str, arg: str
) -> None:
    result = cli("validate", arg, cwd=starter_pack / cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    metrics, source = _config_of(result, "support_eval.json").split(" from ")
    assert metrics == "tool_trajectory_avg_score=0.5, response_match_score=0.4"
    # shown as typed from where ci-eval ran (../eval_config.json from evalsets/)
    assert (starter_pack / cwd / source).resolve() == starter_pack / "tests/eval/eval_config.json"


def test_a_config_beside_the_set_wins_over_one_above(starter_pack: Path) -> None:
    write(
        starter_pack / "tests/eval/evalsets/test_config.json",
        {"criteria": {"response_match_score": 0.9}},
    )
    result = cli("validate", "tests/eval/evalsets/gold_set.json", cwd=starter_pack)
    assert _config_of(result, "gold_set.json") == (
        "response_match_score=0.9 from tests/eval/evalsets/test_config.json"
    )


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path / "test_config.json", {"criteria": {"response_match_score": 0.1}})
    (tmp_path / "repo/.git").mkdir(parents=True)
    write(tmp_path / "repo/evals/s.json", evalset("s", "a"))
    result = cli("validate", "evals", cwd=tmp_path / "repo")
    assert _config_of(result, "s.json").endswith("(ADK defaults)")


def test_eval_config_option_applies_to_every_set(starter_pack: Path) -> None:
    write(starter_pack / "ci/strict.json", {"criteria": {"response_match_score": 1.0}})
    result = cli("validate", "tests/eval", "--eval-config", "ci/strict.json", cwd=starter_pack)
    for name in ("support_eval.json", "account_queries.json", "gold_set.json"):
        assert _config_of(result, name) == "response_match_score=1 from ci/strict.json"


def test_eval_config_option_that_is_not_a_config_is_one_error(starter_pack: Path) -> None:
    write(starter_pack / "ci/other.json", {"metrics": []})
    result = cli("validate", "tests/eval", "--eval-config", "ci/other.json", cwd=starter_pack)
    assert result.returncode == 2
    assert result.stderr.count("ci/other.json") == 1
    assert "--eval-config: not an ADK eval config" in result.stderr


def test_eval_config_in_ci_eval_toml(starter_pack: Path) -> None:
    from ci_eval.settings import load_config

    write(starter_pack / "ci/strict.json", {"criteria": {"response_match_score": 1.0}})
    write(starter_pack / "ci-eval.toml", '[run]\neval_config = "ci/strict.json"\n')
    settings = load_config(starter_pack / "ci-eval.toml", required=True)
    assert Path(settings.eval_config or "").resolve() == (starter_pack / "ci/strict.json")


# 3. Config validation as google-adk ----------------------------------------------------------


def test_a_foreign_config_beside_a_set_is_a_warning_and_defaults_apply(tmp_path: Path) -> None:
    """trpc-agent-python keeps {"metrics": [...]} in test_config.json beside its sets."""
    agent = tmp_path / "examples/quickstart/agent"
    write(agent / "weather_agent.evalset.json", evalset("weather", "w1"))
    write(
        agent / "test_config.json",
        {"metrics": [{"metric_name": "tool_trajectory_avg_score", "threshold": 0.8}]},
    )
    result = cli("validate", "examples", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert _config_of(result, "weather_agent.evalset.json").endswith("(ADK defaults)")
    [warning] = [x for x in result.stdout.splitlines() if x.endswith("(warning)")]
    assert warning.startswith(
        "examples/quickstart/agent/test_config.json: not an ADK eval config "
        '(trpc-agent-python\'s {"metrics": [...]}); '
        "examples/quickstart/agent/weather_agent.evalset.json uses the default metrics"
    )


def test_eval_metrics_shape_is_foreign_too(tmp_path: Path) -> None:
    write(tmp_path / "evals/s.evalset.json", evalset("s", "a"))
    write(tmp_path / "evals/test_config.json", {"eval_metrics": [{"name": "x"}]})
    [outcome] = [
        o for o in load_all(discover_all([tmp_path]).candidates) if isinstance(o, LoadedEvalSet)
    ]
    assert outcome.metrics.source == "default"
    assert "an object without criteria (keys: eval_metrics)" in outcome.warnings[0]


def test_a_config_adk_rejects_is_an_error_naming_config_and_json_path(tmp_path: Path) -> None:
    write(tmp_path / "evals/s.evalset.json", evalset("s", "a"))
    write(
        tmp_path / "evals/test_config.json",
        {"criteria": {"response_match_score": 0.8, "final_response_match_v2": {"weight": 0.3}}},
    )
    result = cli("validate", "evals/s.evalset.json", cwd=tmp_path)
    assert result.returncode == 2
    [line] = result.stdout.splitlines()
    assert line.startswith("evals/test_config.json:")
    assert line.endswith(
        ': $.criteria.final_response_match_v2: criterion {"weight": 0.3} is neither a '
        "threshold number nor an object with a numeric 'threshold' (google-adk's EvalConfig "
        "rejects it) (the config of evals/s.evalset.json)"
    )


def test_unknown_top_level_keys_are_ignored_as_adk_does(tmp_path: Path) -> None:
    write(tmp_path / "evals/s.evalset.json", evalset("s", "a"))
    write(
        tmp_path / "evals/test_config.json",
        {"criteria": {"response_match_score": 0.6}, "owner": "qa", "metrics": []},
    )
    result = cli("validate", "evals/s.evalset.json", cwd=tmp_path)
    assert result.returncode == 0
    assert _config_of(result, "s.evalset.json") == (
        "response_match_score=0.6 from evals/test_config.json"
    )


# 4. trpc-agent-python trace mode -------------------------------------------------------------

TRACE_SET = {
    "eval_set_id": "trace_mode_example",
    "eval_cases": [
        {
            "eval_id": "replay_001",
            "eval_mode": "trace",
            "actual_conversation": [inv("weather in Paris?", "Sunny, 20 C", "get_weather")],
            "conversation": [inv("weather in Paris?", "Sunny, 20 C", "get_weather")],
        },
        {
            "eval_id": "replay_002",
            "eval_mode": "trace",
            "actual_conversation": [inv("and Rome?", "Rain", "get_weather")],
        },
    ],
}


def test_snake_case_trace_mode_loads_the_recording(tmp_path: Path) -> None:
    write(tmp_path / "agent/trace_example.evalset.json", TRACE_SET)
    [outcome] = load_all(discover_all([tmp_path]).candidates)
    assert isinstance(outcome, LoadedEvalSet)
    first, second = outcome.eval_set.eval_cases
    assert first.trace_actuals is not None and first.trace_actuals[0].tool_calls()[0].name == (
        "get_weather"
    )
    # without an expected conversation, the recorded user turns are what is expected
    assert second.trace_actuals is not None
    [expected] = second.invocations()
    assert expected.user_content.text() == "and Rome?" and expected.final_response is None


def test_validate_says_trace_mode(tmp_path: Path) -> None:
    write(tmp_path / "agent/trace_example.evalset.json", TRACE_SET)
    result = cli("validate", "agent", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (
        "agent/trace_example.evalset.json: trace mode: recorded conversation is scored, the "
        "agent is not called (2 of 2 cases)"
    ) in result.stdout


def test_trace_mode_scores_the_recording_and_never_calls_the_agent(tmp_path: Path) -> None:
    write(tmp_path / "agent/trace_example.evalset.json", TRACE_SET)
    out = tmp_path / "results.json"
    result = cli(
        "run",
        "agent",
        "--agent",
        "command",
        "--agent-command",
        "no-such-program-ci-eval",
        "--metric",
        "tool_trajectory_avg_score=1",
        "--results",
        str(out),
        cwd=tmp_path,
    )
    data = json.loads(out.read_text())
    cases = {c["eval_id"]: c for c in data["sets"][0]["cases"]}
    assert cases["replay_001"]["status"] == "PASSED", result.stdout + result.stderr
    actual = cases["replay_001"]["runs"][0]["invocations"][0]["actual"]
    assert actual["final_response"]["parts"][0]["text"] == "Sunny, 20 C"


def test_snake_case_trace_mode_converts_to_trpc_trace_mode(tmp_path: Path) -> None:
    source = write(tmp_path / "t.evalset.json", TRACE_SET)
    result = cli("convert", str(source), "--to", "trpc", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    first = json.loads(result.stdout)["evalCases"][0]
    assert first["evalMode"] == "trace"
    assert first["actualConversation"][0]["tools"] == [{"name": "get_weather", "arguments": {}}]


def test_a_trace_case_without_a_recording_is_an_error_with_its_place(tmp_path: Path) -> None:
    bad = {"eval_set_id": "t", "eval_cases": [{"eval_id": "x", "eval_mode": "trace"}]}
    write(tmp_path / "evals/t.evalset.json", bad)
    result = cli("validate", "evals", cwd=tmp_path)
    assert result.returncode == 2
    assert '$.eval_cases[0]: eval_mode "trace" needs a non-empty actual_conversation' in (
        result.stdout
    )


# 5. Replay of .adk/eval_history ---------------------------------------------------------------


def _history(folder: Path, stamps: dict[str, float], set_id: str = "s") -> None:
    """One ADK result file per run; the names sort oldest-first only by accident."""
    for name, stamp in stamps.items():
        write(
            folder / f"app_{set_id}_{name}.evalset_result.json",
            {
                "eval_set_result_id": name,
                "eval_set_id": set_id,
                "creation_timestamp": stamp,
                "eval_case_results": [
                    {
                        "eval_set_id": set_id,
                        "eval_id": "a",
                        "eval_metric_result_per_invocation": [
                            {"actual_invocation": inv("a?", f"answer recorded at {stamp:g}")}
                        ],
                    }
                ],
            },
        )


def _answers(recordings: dict, key: tuple[str, str] = ("s", "a")) -> list[str]:
    return [r[0].final_response.text() for r in recordings[key]]


def test_replay_takes_the_newest_recording_by_its_own_timestamp(tmp_path: Path) -> None:
    history = tmp_path / "agent/.adk/eval_history"
    # by name "1000" < "900" < "950"; by timestamp 1000 is the newest
    _history(history, {"1000": 1000.0, "900": 900.0, "950": 950.0})
    assert _answers(load_recordings([history])) == ["answer recorded at 1000"]
    assert _answers(load_recordings([history], "oldest")) == ["answer recorded at 900"]
    assert _answers(load_recordings([history], "all")) == [
        "answer recorded at 1000",
        "answer recorded at 950",
        "answer recorded at 900",
    ]


def test_replay_pick_must_be_known(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--replay-pick 'latest': choose one of newest"):
        load_recordings([tmp_path], "latest")


def test_replay_pick_all_scores_every_recording_as_a_run(tmp_path: Path) -> None:
    history = tmp_path / "agent/.adk/eval_history"
    _history(history, {"a": 3.0, "b": 1.0, "c": 2.0})
    write(
        tmp_path / "evals/s.evalset.json",
        {
            "eval_set_id": "s",
            "eval_cases": [{"eval_id": "a", "conversation": [inv("a?", "answer recorded at 3")]}],
        },
    )
    out = tmp_path / "results.json"
    result = cli(
        "run",
        "evals",
        "--agent",
        "replay",
        "--replay",
        str(history),
        "--replay-pick",
        "all",
        "--metric",
        "response_match_score=1",
        "--results",
        str(out),
        cwd=tmp_path,
    )
    [case] = json.loads(out.read_text())["sets"][0]["cases"]
    texts = [
        r["invocations"][0]["actual"]["final_response"]["parts"][0]["text"] for r in case["runs"]
    ]
    assert texts == ["answer recorded at 3", "answer recorded at 2", "answer recorded at 1"]
    assert result.returncode == 1  # two of three runs differ from the expected answer


# 6. Dialect label, empty sets, ci-eval.toml --------------------------------------------------

CAMEL_SET = {
    "evalSetId": "web_export",
    "name": "web_export",
    "evalCases": [
        {
            "evalId": "case1",
            "conversation": [inv("hi", "hello", "greet", snake=False)],
            "sessionInput": {"appName": "app", "userId": "user", "state": {}},
            "creationTimestamp": 1.5,
        }
    ],
    "creationTimestamp": 1.5,
}


def test_adk_camel_case_export_has_its_own_dialect(tmp_path: Path) -> None:
    write(tmp_path / "evals/web.evalset.json", CAMEL_SET)
    result = cli("validate", "evals", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "evals/web.evalset.json: ok: adk-camel, 1 case, 1 invocation;" in result.stdout


def test_converting_adk_camel_to_adk_warns_about_nothing(tmp_path: Path) -> None:
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    source = write(tmp_path / "web.evalset.json", CAMEL_SET)
    out = tmp_path / "out.evalset.json"
    result = cli("convert", str(source), "--to", "adk", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    converted = AdkEvalSet.model_validate_json(out.read_text())
    assert converted.eval_set_id == "web_export"
    assert converted.eval_cases[0].conversation[0].intermediate_data.tool_uses[0].name == "greet"


def test_trpc_files_keep_their_label(tmp_path: Path) -> None:
    trpc = json.loads(json.dumps(CAMEL_SET))
    trpc["evalCases"][0]["conversation"][0]["finalResponse"]["role"] = "assistant"
    write(tmp_path / "evals/t.evalset.json", trpc)
    result = cli("validate", "evals", cwd=tmp_path)
    assert "ok: trpc, 1 case" in result.stdout


def test_an_empty_eval_set_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path / "evals/empty.evalset.json", {"eval_set_id": "e", "eval_cases": []})
    result = cli("validate", "evals", cwd=tmp_path)
    assert result.returncode == 0
    assert (
        "evals/empty.evalset.json: empty eval set: it has no cases, nothing will run (warning)"
    ) in result.stdout


def test_ci_eval_toml_is_found_from_a_subfolder_up_to_the_repo_root(starter_pack: Path) -> None:
    write(starter_pack / "ci-eval.toml", "[run]\nconcurrency = 2\n")
    assert find_config(starter_pack / "tests/eval") is not None
    assert find_config(starter_pack / "tests/eval").resolve() == starter_pack / "ci-eval.toml"
    (starter_pack / "ci-eval.toml").unlink()
    write(starter_pack.parent / "ci-eval.toml", "[run]\nconcurrency = 2\n")  # above the repo
    assert find_config(starter_pack / "tests/eval") is None


def test_run_from_a_subfolder_reads_the_repos_ci_eval_toml(starter_pack: Path) -> None:
    write(starter_pack / "ci-eval.toml", '[agent]\nkind = "replay"\n')
    result = cli("run", ".", cwd=starter_pack / "tests/eval")
    assert result.returncode == 2
    assert "[agent] kind replay needs --replay" in result.stderr
