"""Agent faults against a loopback HTTP agent: every case is kept, errors say why, retries are
as configured, exit code 3, never a traceback."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.loopback_agent import LoopbackAgent

FAULTS = {
    "ok": "What is the weather in Paris?",
    "always_500": "fail 500",
    "always_503": "fail 503",
    "flaky_503": "flaky 503 1",
    "rate_limited": "limit 429 1",
    "too_slow": "slow 7",
    "reset": "reset",
    "garbage": "garbage",
    "bad_shape": "badshape",
}


def _eval_set(folder: Path) -> Path:
    cases = [
        {
            "eval_id": name,
            "conversation": [{"user_content": {"role": "user", "parts": [{"text": text}]}}],
        }
        for name, text in FAULTS.items()
    ]
    path = folder / "faults.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "faults", "eval_cases": cases}))
    return path


@pytest.fixture(scope="module")
def run_against_faults(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("faults")
    evals = _eval_set(folder)
    with LoopbackAgent() as agent:
        started = time.monotonic()
        proc = run_cli(
            "run",
            str(evals),
            "--agent",
            "http",
            "--agent-url",
            agent.url,
            "--retries",
            "2",
            "--timeout",
            # room for two retries' back-off (up to 1.25 s) on a loaded machine; too_slow is
            # slower still
            "5",
            "--concurrency",
            "9",
            "--results",
            str(folder / "results.json"),
            cwd=folder,
        )
        elapsed = time.monotonic() - started
        requests = dict(agent.requests)
    results = json.loads((folder / "results.json").read_text())
    cases = {c["eval_id"]: c for c in results["sets"][0]["cases"]}
    return {"proc": proc, "cases": cases, "requests": requests, "elapsed": elapsed}


def test_exit_code_is_3_and_no_traceback(run_against_faults: dict) -> None:
    proc = run_against_faults["proc"]
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_every_case_is_in_the_results(run_against_faults: dict) -> None:
    assert set(run_against_faults["cases"]) == set(FAULTS)


@pytest.mark.parametrize("case", ["ok", "flaky_503", "rate_limited"])
def test_recovered_cases_complete(run_against_faults: dict, case: str) -> None:
    record = run_against_faults["cases"][case]
    assert record["status"] in ("PASSED", "FAILED"), record["error"]  # ran and was scored
    assert record["error"] is None
    assert record["runs"][0]["invocations"][0]["actual"] is not None


@pytest.mark.parametrize(
    ("case", "reason", "requests"),
    [
        ("always_500", "HTTP 500 after 2 retries", 3),
        ("always_503", "HTTP 503 after 2 retries", 3),
        ("too_slow", "no reply within 5 s", 1),  # the deadline leaves no time to retry
        ("reset", "after 2 retries", 3),
        ("garbage", "the answer is not JSON", 1),
        ("bad_shape", "malformed reply: tool_calls.0", 1),
    ],
)
def test_failed_cases_are_errors_with_reasons(
    run_against_faults: dict, case: str, reason: str, requests: int
) -> None:
    record = run_against_faults["cases"][case]
    assert record["status"] == "ERROR"
    assert reason in record["error"]
    assert "\n" not in record["error"]
    assert run_against_faults["requests"][FAULTS[case]] == requests


def test_retries_are_counted(run_against_faults: dict) -> None:
    assert run_against_faults["requests"][FAULTS["flaky_503"]] == 2
    assert run_against_faults["cases"]["flaky_503"]["runs"][0]["retries"] == 1
    assert run_against_faults["cases"]["always_500"]["runs"][0]["retries"] == 2


def test_retry_after_is_honoured(run_against_faults: dict) -> None:
    assert run_against_faults["requests"][FAULTS["rate_limited"]] == 2
    assert run_against_faults["elapsed"] >= 1.0  # the 429 asked for one second


def test_the_summary_names_the_errors(run_against_faults: dict) -> None:
    out = run_against_faults["proc"].stdout
    assert "ERROR always_500 " in out
    assert "9 cases: 0 passed, 3 failed, 6 errors" in out


def test_an_unreachable_agent_stops_the_run_once_the_first_cases_fail_alike(
    tmp_path: Path,
) -> None:
    evals = _eval_set(tmp_path)
    proc = run_cli(
        "run",
        str(evals),
        "--agent",
        "http",
        "--agent-url",
        "http://127.0.0.1:9/turn",
        "--retries",
        "1",
        "--results",
        str(tmp_path / "r.json"),
        cwd=tmp_path,
    )
    assert proc.returncode == 3
    results = json.loads((tmp_path / "r.json").read_text())
    errors = [c["error"] for c in results["sets"][0]["cases"]]
    assert len(errors) == len(FAULTS)  # every case is in the results, run or not
    refused = [e for e in errors if "cannot connect (connection refused) after 1 retry" in e]
    stopped = [
        e for e in errors if e == "not run: stopped after the first 3 cases failed the same way"
    ]
    assert len(refused) >= 3 and len(refused) + len(stopped) == len(errors)
    assert stopped  # the cases after the first few did not each wait for a refusal
    said = "3 of 3 first cases failed the same way: POST http://127.0.0.1:9/turn"
    assert said in proc.stderr and "; stopping" in proc.stderr
