"""The sample agent run through ADK's own api_server and in-process runner gives exactly what
``adk eval`` records for the same cases; the command agent agrees with both."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors.replay import invocation_to_turn, load_recordings
from tests.adk_server import AGENTS, adk_executable
from tests.helpers import run_cli


@pytest.fixture(autouse=True, scope="module")
def _adk_installed() -> None:
    """google-adk, imported by the tests that use it rather than at collection (where every
    test process would pay for it)."""
    pytest.importorskip("google.adk")


REPO = Path(__file__).resolve().parents[2]
EVALSET = REPO / "samples/evals/weather_basic.evalset.json"
EXPECTED_CASES = {"paris_weather", "multi_turn_london_tokyo", "berlin_expected_to_fail"}


def _shape(turn: Any) -> tuple[list[tuple[str | None, Any]], str]:
    text = turn.final_response.text() if turn.final_response else ""
    return [(c.name, c.args) for c in turn.tool_uses], text


@pytest.fixture(scope="module")
def adk_eval_recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """Run ``adk eval`` itself and read what it recorded, per case."""
    agent_dir = tmp_path_factory.mktemp("adk-eval") / "weather_agent"
    shutil.copytree(
        AGENTS / "weather_agent", agent_dir, ignore=shutil.ignore_patterns("__pycache__", ".adk")
    )
    proc = subprocess.run(
        [str(adk_executable()), "eval", str(agent_dir), str(EVALSET)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert "Tests passed: 2" in proc.stdout and "Tests failed: 1" in proc.stdout, proc.stdout
    [result] = (agent_dir / ".adk/eval_history").glob("*.evalset_result.json")
    recordings = load_recordings([result])
    return {
        case: [_shape(invocation_to_turn(i)) for i in runs[0]]
        for (_, case), runs in recordings.items()
    }


def _ours(args: list[str], tmp_path: Path) -> dict[str, list[Any]]:
    results = tmp_path / "results.json"
    proc = run_cli("run", str(EVALSET), *args, "--results", str(results), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # berlin fails, as in adk eval
    assert "FAILED berlin_expected_to_fail" in proc.stdout
    data = json.loads(results.read_text())
    out = {}
    for case in data["sets"][0]["cases"]:
        [run] = case["runs"]
        out[case["eval_id"]] = [
            (
                [
                    (c["name"], c.get("args"))
                    for c in inv["actual"]["intermediate_data"]["tool_uses"]
                ],
                "\n".join(p["text"] for p in inv["actual"]["final_response"]["parts"]),
            )
            for inv in run["invocations"]
        ]
    return out


def test_adk_eval_recorded_every_case(adk_eval_recorded: dict[str, list[Any]]) -> None:
    assert set(adk_eval_recorded) == EXPECTED_CASES


def test_adk_http_matches_adk_eval(
    adk_server: str, adk_eval_recorded: dict[str, list[Any]], tmp_path: Path
) -> None:
    ours = _ours(["--agent", "adk-http", "--agent-url", adk_server], tmp_path)
    assert ours == adk_eval_recorded


def test_in_process_adk_matches_adk_eval(
    adk_eval_recorded: dict[str, list[Any]], tmp_path: Path
) -> None:
    ours = _ours(["--agent", "adk", "--agent-module", str(AGENTS / "weather_agent")], tmp_path)
    assert ours == adk_eval_recorded


def test_command_agent_matches_adk_eval(
    adk_eval_recorded: dict[str, list[Any]], tmp_path: Path
) -> None:
    command = f"python {AGENTS / 'weather_agent/command_agent.py'}"
    ours = _ours(["--agent", "command", "--agent-command", command], tmp_path)
    assert ours == adk_eval_recorded


def test_adk_http_uses_session_state_and_ids(adk_server: str, tmp_path: Path) -> None:
    evals = tmp_path / "state.evalset.json"
    evals.write_text(
        json.dumps(
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {
                        "eval_id": "fixed",
                        "session_input": {
                            "app_name": "weather_agent",
                            "user_id": "u7",
                            "session_id": "fixed-session",
                            "state": {"k": 1},
                        },
                        "conversation": [
                            {"user_content": {"role": "user", "parts": [{"text": "hi"}]}}
                        ],
                    }
                ],
            }
        )
    )
    results = tmp_path / "r.json"
    proc = run_cli(
        "run",
        str(evals),
        "--agent",
        "adk-http",
        "--agent-url",
        adk_server,
        "--num-runs",
        "2",
        "--results",
        str(results),
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # ran; scores aside
    assert "ERROR" not in proc.stdout
    import requests

    session = requests.get(
        f"{adk_server}/apps/weather_agent/users/u7/sessions/fixed-session", timeout=5
    ).json()
    assert session["state"] == {"k": 1}
    assert len(json.loads(results.read_text())["sets"][0]["cases"][0]["runs"]) == 2


def test_an_unknown_app_is_a_usage_error_naming_the_apps_adks_server_serves(
    adk_server: str, tmp_path: Path
) -> None:
    proc = run_cli(
        "run",
        str(EVALSET),
        "--agent",
        "adk-http",
        "--agent-url",
        adk_server,
        "--app-name",
        "no_such_app",
        "--retries",
        "0",
        cwd=tmp_path,
    )
    assert proc.returncode == 2  # before any case: ADK's own /list-apps was asked
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "app 'no_such_app' is not served at" in proc.stderr
    assert "it serves: metered_agent, weather_agent" in proc.stderr
