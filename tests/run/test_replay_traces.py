"""Recorded OpenTelemetry traces of an ADK agent, as Jaeger JSON or OTLP JSON, replay to the
same scores as ``adk eval``'s own results file of the same agent on the same eval set.

The traces are real: tests/traced_agent.py runs the sample agent's logic as an ADK
``LlmAgent`` under google-adk's own instrumentation and exports the spans it records."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.connectors import traces
from ci_eval.connectors.replay import ReplayConnector
from ci_eval.connectors.traces import SessionIndex, TracedSession
from tests.adk_server import AGENTS, adk_executable
from tests.helpers import run_cli


@pytest.fixture(autouse=True, scope="module")
def _adk_installed() -> None:
    pytest.importorskip("google.adk")


REPO = Path(__file__).resolve().parents[2]
EVALSET = REPO / "samples/evals/weather_basic.evalset.json"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The agent's traces in both formats, and ``adk eval``'s results file of the sample agent."""
    out = tmp_path_factory.mktemp("traces")
    env = {**os.environ, "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.traced_agent", str(EVALSET), str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    agent_dir = tmp_path_factory.mktemp("adk-eval") / "weather_agent"
    shutil.copytree(
        AGENTS / "weather_agent", agent_dir, ignore=shutil.ignore_patterns("__pycache__", ".adk")
    )
    subprocess.run(
        [str(adk_executable()), "eval", str(agent_dir), str(EVALSET)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    [adk_result] = (agent_dir / ".adk/eval_history").glob("*.evalset_result.json")
    return {
        "jaeger": out / "traces.jaeger.json",
        "otlp": out / "traces.otlp.json",
        "adk": adk_result,
    }


def _scores(replay: Path, tmp_path: Path) -> dict[str, Any]:
    results = tmp_path / f"{replay.stem}.results.json"
    proc = run_cli(
        "run", str(EVALSET), "--agent", "replay", "--replay", str(replay),
        "--results", str(results), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # berlin fails, as in adk eval
    data = json.loads(results.read_text())
    return {
        case["eval_id"]: (
            case["status"],
            [(m["name"], m["score"]) for m in case["metrics"] if not m["informational"]],
        )
        for case in data["sets"][0]["cases"]
    }


@pytest.mark.parametrize("trace_format", ["jaeger", "otlp"])
def test_traces_replay_to_the_scores_of_adk_evals_results_file(
    recorded: dict[str, Path], trace_format: str, tmp_path: Path
) -> None:
    from_traces = _scores(recorded[trace_format], tmp_path)
    assert from_traces == _scores(recorded["adk"], tmp_path)
    assert from_traces["paris_weather"][0] == "PASSED"
    assert from_traces["berlin_expected_to_fail"][0] == "FAILED"


def test_each_traced_session_is_one_case_in_turn_order(recorded: dict[str, Path]) -> None:
    connector = ReplayConnector([recorded["otlp"]])
    sessions = {session.first_user_text(): session for session, _ in connector.traced}
    multi = sessions["hi"]
    assert [inv["user_content"]["parts"][0]["text"] for inv in multi.invocations] == [
        "hi",
        "And the weather in London?",
        "weather and time in Tokyo please",
    ]
    assert [
        [(c["name"], c["args"]) for c in inv["intermediate_data"]["tool_uses"]]
        for inv in multi.invocations
    ] == [[], [("get_weather", {"city": "London"})], [
        ("get_weather", {"city": "Tokyo"}), ("get_time", {"city": "Tokyo"})
    ]]  # fmt: skip
    # the tool's own response, as the execute_tool span recorded it
    assert multi.invocations[1]["intermediate_data"]["tool_responses"][0]["response"] == {
        "condition": "rainy",
        "temp_c": 15,
    }


def test_a_case_whose_session_id_was_traced_replays_that_session(
    recorded: dict[str, Path], tmp_path: Path
) -> None:
    connector = ReplayConnector([recorded["jaeger"]])
    session, _ = connector.traced[0]
    evalset = json.loads(EVALSET.read_text())
    case = evalset["eval_cases"][0]
    # the same session, but the eval set's message differs: the session id decides
    case["eval_id"] = "by_session"
    case["session_input"]["session_id"] = session.session_id
    case["conversation"][0]["user_content"]["parts"][0]["text"] = "something else"
    evalset["eval_cases"] = [case]
    evalset_file = tmp_path / "one.evalset.json"
    evalset_file.write_text(json.dumps(evalset))
    proc = run_cli(
        "run", str(evalset_file), "--agent", "replay", "--replay", str(recorded["jaeger"]),
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _session(session_id: str, text: str | None) -> TracedSession:
    if text is None:
        return TracedSession(session_id)
    return TracedSession(session_id, [{"user_content": {"parts": [{"text": text}]}}])


IDS = st.sampled_from(["", "s1", "s2", "s3"])
TEXTS = st.one_of(st.none(), st.sampled_from(["Hi", " hi ", "HI", "weather?", "", "x"]))


@settings(max_examples=300, deadline=None)
@given(
    sessions=st.lists(st.tuples(IDS, TEXTS), max_size=12),
    session_id=st.one_of(st.none(), IDS),
    first=TEXTS,
)
def test_the_index_finds_what_comparing_with_every_session_finds(
    sessions: list[tuple[str, str | None]], session_id: str | None, first: str | None
) -> None:
    traced = [_session(i, t) for i, t in sessions]
    linear = [n for n, s in enumerate(traced) if traces.matches(s, session_id, first)]
    assert SessionIndex(traced).find(session_id, first) == linear
