"""The command line: validate and convert as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_eval import __version__
from tests.conftest import CORPUS, SAMPLES
from tests.helpers import run_cli

ci_eval = run_cli


def test_version() -> None:
    result = ci_eval("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"ci-eval {__version__}"


@pytest.mark.parametrize("command", ["validate", "convert"])
def test_every_command_has_help(command: str) -> None:
    result = ci_eval(command, "--help")
    assert result.returncode == 0
    assert "Example:" in result.stdout


def test_validate_the_samples() -> None:
    result = ci_eval("validate", "samples", cwd=SAMPLES.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "samples/evals/legacy/calculator.test.json: ok: adk-legacy, 1 case, 2 invocations; "
        "metrics tool_trajectory_avg_score=1, response_match_score=0.7 from "
        "samples/evals/legacy/test_config.json",
        # samples/evals is an eval folder: every JSON in it is read, the configs too
        "samples/evals/legacy/test_config.json: ok: adk-config; metrics "
        "tool_trajectory_avg_score=1, response_match_score=0.7",
        "samples/evals/scenarios/test_config.json: ok: adk-config; metrics "
        "per_turn_user_simulator_quality_v1=1",
        "samples/evals/scenarios/weather_clarify.evalset.json: ok: adk, 1 case (1 with a "
        "simulated user), 0 invocations; metrics per_turn_user_simulator_quality_v1=1 from "
        "samples/evals/scenarios/test_config.json",
        "samples/evals/trpc/weather-trpc.evalset.json: ok: trpc, 1 case, 1 invocation; metrics "
        "tool_trajectory_avg_score=1, final_response_avg_score=1 from "
        "samples/evals/trpc/weather-trpc.metrics.json",
        "samples/evals/trpc/weather-trpc.metrics.json: ok: trpc-metrics; metrics "
        "tool_trajectory_avg_score=1, final_response_avg_score=1",
        "samples/evals/weather_basic.evalset.json: ok: adk, 3 cases, 5 invocations; metrics "
        "tool_trajectory_avg_score=1, response_match_score=0.8 (ADK defaults)",
    ]
    assert "4 eval sets (6 cases, 1 with a simulated user)" in result.stderr


def test_validate_reports_each_problem_on_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.evalset.json"
    bad.write_text(
        '{\n  "eval_set_id": "s",\n  "eval_cases": [\n    {"conversation": []},\n'
        '    {"eval_id": "b", "conversation": [{"user_content": {"parts": [{"text": 5}]}}]}\n'
        "  ]\n}\n"
    )
    result = ci_eval("validate", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.splitlines() == [
        "bad.evalset.json:4:5: $.eval_cases[0].eval_id: required field 'eval_id' is missing",
        "bad.evalset.json:5:67: $.eval_cases[1].conversation[0].user_content.parts[0].text: "
        "Input should be a valid string",
    ]


def test_duplicate_case_ids_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "dup.evalset.json"
    path.write_text(
        json.dumps(
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {"eval_id": "a", "conversation": []},
                    {"eval_id": "a", "conversation": []},
                ],
            },
            indent=1,
        )
    )
    result = ci_eval("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "duplicate case id 'a' (first at line 4)" in result.stdout


def test_validate_with_nothing_found_is_an_input_error(tmp_path: Path) -> None:
    result = ci_eval("validate", str(tmp_path))
    assert result.returncode == 2
    assert "no eval sets found" in result.stderr


def test_missing_path_is_one_line(tmp_path: Path) -> None:
    result = ci_eval("validate", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert result.stderr.strip().endswith("nope: no such file or directory")


def test_convert_legacy_to_adk_and_trpc(tmp_path: Path) -> None:
    source = SAMPLES / "evals/legacy/calculator.test.json"
    out = tmp_path / "calculator.evalset.json"
    result = ci_eval("convert", str(source), "--to", "adk", "-o", str(out))
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["eval_cases"][0]["conversation"][0]["intermediate_data"]["tool_uses"] == [
        {"name": "calculate", "args": {"expression": "6 * 7"}}
    ]
    result = ci_eval("convert", str(out), "--to", "trpc")
    assert result.returncode == 0, result.stderr
    trpc = json.loads(result.stdout)
    assert trpc["evalCases"][0]["conversation"][1]["tools"] == [
        {"name": "calculate", "arguments": {"expression": "2 + 2"}}
    ]


def test_convert_says_what_the_target_cannot_hold() -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not here")
    source = CORPUS / (
        "watsonx-orchestrate/IBM-ibm-watsonx-orchestrate-adk/examples/"
        "evaluations/evaluate/data_simple.json"
    )
    result = ci_eval("convert", str(source), "--to", "adk")
    assert result.returncode == 0
    assert "ADK has no field for 'watsonx'; it is not written" in result.stderr


def test_convert_rejects_an_unknown_target() -> None:
    result = ci_eval("convert", str(SAMPLES / "evals/weather_basic.evalset.json"), "--to", "xml")
    assert result.returncode == 2
    assert "unknown target dialect 'xml'" in result.stderr


def test_broad_include_skips_other_json_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1"}')
    (tmp_path / "a.evalset.json").write_text(
        (SAMPLES / "evals/weather_basic.evalset.json").read_text()
    )
    result = ci_eval("validate", ".", "--include", "*.json", "-v", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (
        "package.json: skipped: not an eval set (unrecognised JSON (an object with keys: "
        "name, version))"
    ) in result.stdout
