"""A real ``adk api_server`` serving an ADK ``LlmAgent`` whose model is LiteLLM pointed at a
loopback OpenAI-compatible server: ADK's events carry the usage that server reports, and
ci-eval's results and summary show the agent's tokens and latency."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adk_server import REPO, adk_api_server
from tests.helpers import run_cli
from tests.judge_server import JudgeServer, words

AGENTS = REPO / "tests/data/adk_llm_agents"
ANSWER = "It is sunny in Paris today."


@pytest.fixture(scope="module")
def model() -> Iterator[JudgeServer]:
    pytest.importorskip("google.adk")
    pytest.importorskip("litellm")
    with JudgeServer(lambda prompt, n: ANSWER) as server:
        yield server


@pytest.fixture(scope="module")
def served(model: JudgeServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {**os.environ, "CI_EVAL_LOOPBACK_LLM": model.url}
    with adk_api_server(tmp_path_factory.mktemp("llm"), (AGENTS,), env) as url:
        yield url


@pytest.fixture(scope="module")
def run(served: str, model: JudgeServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    turns = ["Weather in Paris?", "And tomorrow?"]
    case: dict[str, Any] = {
        "eval_id": "paris",
        "session_input": {"app_name": "loopback_llm_agent", "user_id": "u"},
        "conversation": [
            {
                "user_content": {"role": "user", "parts": [{"text": t}]},
                "final_response": {"role": "model", "parts": [{"text": ANSWER}]},
            }
            for t in turns
        ],
    }
    (folder / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [case]}))
    done = run_cli(
        "run", "s.evalset.json", "--agent", "adk-http", "--agent-url", served,
        "--results", "r.json", "--summary", "s.md", cwd=folder,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return folder


def test_each_turn_carries_the_usage_the_model_server_reported(
    run: Path, model: JudgeServer
) -> None:
    results = json.loads((run / "r.json").read_text())
    [case] = results["sets"][0]["cases"]
    [attempt] = case["runs"]
    usage = [turn["usage"] for turn in attempt["invocations"]]
    assert len(model.bodies) == 2  # one model call a turn
    for turn, body in zip(usage, model.bodies, strict=True):
        assert turn["input_tokens"] == words(body["messages"])
        assert turn["output_tokens"] == len(ANSWER.split())
        assert turn["model_calls"] == 1
    assert all(turn["duration_s"] > 0 for turn in attempt["invocations"])
    metrics = {m["name"]: m for m in case["metrics"]}
    total = sum(u["input_tokens"] + u["output_tokens"] for u in usage)
    assert metrics["token_usage_v1"]["score"] == total / len(usage)  # ADK's: per turn


def test_the_summary_and_the_results_show_the_agents_tokens_and_latency(run: Path) -> None:
    results = json.loads((run / "r.json").read_text())
    totals = results["settings"]["usage_totals"]
    [case] = results["sets"][0]["cases"]
    tokens = sum(
        t["usage"]["input_tokens"] + t["usage"]["output_tokens"]
        for t in case["runs"][0]["invocations"]
    )
    summary = (run / "s.md").read_text()
    usage = summary[summary.index("### Usage") :]
    assert f"{tokens:,} tokens" in usage.split("\n\n")[1], usage[:400]
    assert "turn latency p50" in usage
    assert tokens > 0 and totals
