"""ADK's own peers and usage: an LLM-free agent whose events carry usage metadata, as an
``LlmAgent``'s do (``tests/data/adk_agents/metered_agent``), run through ``adk api_server``,
ADK's in-process runner and ``adk eval`` itself. ci-eval captures each turn's usage, and its
``token_usage_v1`` and ``inference_call_count_v1`` equal what ``adk eval`` recorded, per
invocation and per run, live and when ``adk eval``'s recording is replayed. The sample weather
agent's events carry no usage metadata: no model call, no tokens."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.adk_server import TEST_AGENTS, adk_executable
from tests.helpers import run_cli


@pytest.fixture(autouse=True, scope="module")
def _adk_installed() -> None:
    pytest.importorskip("google.adk")


APP = "metered_agent"
SESSION = {"app_name": APP, "user_id": "u1"}


def _case(eval_id: str, *messages: str) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "session_input": SESSION,
        "conversation": [
            {"user_content": {"role": "user", "parts": [{"text": m}]}} for m in messages
        ],
    }


EVALSET = {
    "eval_set_id": "metered",
    "eval_cases": [
        # a model turn, a turn answered without a model, a model call that reported no tokens
        _case("mixed", "how many words here", "ping", "quiet"),
        _case("plain", "one two"),
    ],
}
USAGE_METRICS = ("token_usage_v1", "inference_call_count_v1")
Scores = dict[str, dict[str, tuple[Any, list[Any]]]]  # case → metric → (score, per invocation)


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("metered")
    (folder / "metered.evalset.json").write_text(json.dumps(EVALSET))
    shutil.copytree(
        TEST_AGENTS / APP, folder / APP, ignore=shutil.ignore_patterns("__pycache__", ".adk")
    )
    return folder


@pytest.fixture(scope="module")
def adk_eval_result(evals: Path) -> Path:
    """``adk eval`` run on the metered agent: its eval_history file."""
    proc = subprocess.run(
        [str(adk_executable()), "eval", str(evals / APP), str(evals / "metered.evalset.json")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    found = list((evals / APP / ".adk/eval_history").glob("*.evalset_result.json"))
    assert len(found) == 1, proc.stdout + proc.stderr
    return found[0]


def _adk_scores(result: Path) -> Scores:
    out: Scores = {}
    for case in json.loads(result.read_text())["eval_case_results"]:
        per = case["eval_metric_result_per_invocation"]
        out[case["eval_id"]] = {
            m["metric_name"]: (
                m["score"],
                [
                    next(r["score"] for r in p["eval_metric_results"] if r["metric_name"] == name)
                    for p in per
                ],
            )
            for m in case["overall_eval_metric_results"]
            if (name := m["metric_name"]) in USAGE_METRICS
        }
    return out


def _ci_eval(evals: Path, *agent: str) -> dict[str, Any]:
    results = evals / "r.json"
    done = run_cli(
        "run", "metered.evalset.json", *agent, "--results", str(results), cwd=evals
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "ERROR" not in done.stdout, done.stdout
    return {c["eval_id"]: c["runs"][0] for c in json.loads(results.read_text())["sets"][0]["cases"]}


def _our_scores(runs: dict[str, Any]) -> Scores:
    return {
        case: {
            m["name"]: (m["score"], m["per_invocation"])
            for m in run["metrics"]
            if m["name"] in USAGE_METRICS
        }
        for case, run in runs.items()
    }


def _usage(runs: dict[str, Any]) -> dict[str, list[Any]]:
    return {case: [i["usage"] for i in run["invocations"]] for case, run in runs.items()}


def _calls(input_tokens: int, output_tokens: int, cached: int, calls: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_tokens": cached,
        "model_calls": calls,
    }


NONE_REPORTED = {"input_tokens": None, "output_tokens": None, "cached_tokens": None}
CAPTURED = {
    # 4 words: prompt 104 + (154 + 7 tool-use), output 12 + 5 thoughts + 12; the empty-text
    # event's 999 tokens are not counted (ADK leaves that event out of the invocation)
    "mixed": [
        _calls(265, 29, 64, 2),
        NONE_REPORTED | {"model_calls": 0},
        NONE_REPORTED | {"model_calls": 1},
    ],
    "plain": [_calls(102 + 159, 17 + 6, 64, 2)],
}


def test_adk_eval_recorded_the_usage_metrics(adk_eval_result: Path) -> None:
    recorded = _adk_scores(adk_eval_result)
    assert recorded["mixed"] == {
        "token_usage_v1": (294 / 3, [294, None, None]),
        "inference_call_count_v1": (1.0, [2.0, 0.0, 1.0]),
    }


def test_the_api_servers_usage_is_captured_and_scores_as_adk_eval(
    adk_server: str, evals: Path, adk_eval_result: Path
) -> None:
    runs = _ci_eval(evals, "--agent", "adk-http", "--agent-url", adk_server)
    assert _usage(runs) == CAPTURED
    assert _our_scores(runs) == _adk_scores(adk_eval_result)


def test_the_in_process_runners_usage_is_captured_and_scores_as_adk_eval(
    evals: Path, adk_eval_result: Path
) -> None:
    runs = _ci_eval(evals, "--agent", "adk", "--agent-module", str(evals / APP))
    assert _usage(runs) == CAPTURED
    assert _our_scores(runs) == _adk_scores(adk_eval_result)


def test_a_replay_of_adk_evals_recording_carries_its_usage(
    evals: Path, adk_eval_result: Path
) -> None:
    runs = _ci_eval(evals, "--agent", "replay", "--replay", str(adk_eval_result))
    assert _usage(runs) == CAPTURED
    assert _our_scores(runs) == _adk_scores(adk_eval_result)


def test_the_sample_agent_reports_no_model_call_and_no_tokens(
    adk_server: str, tmp_path: Path
) -> None:
    evalset = Path(__file__).resolve().parents[2] / "samples/evals/weather_basic.evalset.json"
    results = tmp_path / "r.json"
    run_cli(
        "run", str(evalset), "--agent", "adk-http", "--agent-url", adk_server,
        "--case", "weather_basic:paris_weather", "--results", str(results), cwd=tmp_path,
    )  # fmt: skip
    [case] = json.loads(results.read_text())["sets"][0]["cases"]
    [invocation] = case["runs"][0]["invocations"]
    assert invocation["usage"] == NONE_REPORTED | {"model_calls": 0}
    metrics = {m["name"]: (m["status"], m["score"]) for m in case["metrics"]}
    assert metrics["inference_call_count_v1"] == ("INFO", 0.0)
    assert metrics["token_usage_v1"] == ("NOT_EVALUATED", None)
