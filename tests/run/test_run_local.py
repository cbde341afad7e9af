"""`ci-eval run` with agents that need no server: the command agent, replayed recordings, the
config file, filters, skipped cases, interruption."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, REPO, SAMPLES, SHARED
from tests.helpers import run_cli, run_replay, run_sample_agent
from tests.loopback_agent import LoopbackAgent

COMMAND = f"python {SAMPLES / 'agents/weather_agent/command_agent.py'}"


ci_eval = run_cli


def results_of(path: Path) -> dict[str, Any]:
    return {
        (s["eval_set_id"], c["eval_id"]): c
        for s in json.loads(path.read_text())["sets"]
        for c in s["cases"]
    }


def test_the_readme_main_job_runs_the_samples_with_the_embedded_agent() -> None:
    proc = ci_eval("run", cwd=REPO)  # ci-eval.toml names the command agent
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the sample set has a failing case
    assert "6 cases: 4 passed, 1 failed, 0 errors, 1 skipped" in proc.stdout
    assert "FAILED berlin_expected_to_fail" in proc.stdout
    # no key: the simulated-user case is skipped, and says how to configure a simulator
    assert "SKIPPED weather_without_a_city" in proc.stdout and "[simulator]" in proc.stdout


def test_results_hold_expected_actual_and_timings(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run_sample_agent(str(SAMPLES / "evals"), "--results", str(out), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(out.read_text())
    assert data["schema_version"] == 3
    case = results_of(out)[("weather_basic", "multi_turn_london_tokyo")]
    assert case["status"] == "PASSED" and case["line"] is not None
    last = case["runs"][0]["invocations"][2]
    assert [c["name"] for c in last["actual"]["intermediate_data"]["tool_uses"]] == [
        "get_weather",
        "get_time",
    ]
    assert last["expected"]["final_response"]["parts"][0]["text"].startswith("It is cloudy")
    assert last["duration_s"] >= 0


def test_replay_of_our_own_results_reproduces_them(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert (
        run_sample_agent(str(SAMPLES / "evals"), "--results", str(first), cwd=tmp_path).returncode
        == 1  # berlin fails
    )
    proc = run_replay(
        str(SAMPLES / "evals"), "--results", str(second), replay=str(first), cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout

    def actuals(path: Path) -> dict[Any, Any]:
        return {
            k: [i["actual"] | {"duration": None} for i in c["runs"][0]["invocations"]]
            for k, c in results_of(path).items()
            if c["runs"]
        }

    assert actuals(first) == actuals(second)
    # the simulated-user case was skipped (no simulator), so there is nothing to replay
    skipped = [c for c in results_of(second).values() if c["status"] == "SKIPPED"]
    assert [c["eval_id"] for c in skipped] == ["weather_without_a_city"]
    assert "no recorded conversation to replay" in skipped[0]["skipped"]


def test_replay_of_a_real_adk_eval_result(tmp_path: Path) -> None:
    recorded = SHARED / "adk-reference/weather_basic.evalset_result.json"
    if not recorded.is_file():
        pytest.skip("../shared/adk-reference is not here")
    out = tmp_path / "r.json"
    proc = run_replay(
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--results",
        str(out),
        replay=str(recorded),
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout
    berlin = results_of(out)[("weather_basic", "berlin_expected_to_fail")]
    actual = berlin["runs"][0]["invocations"][0]["actual"]
    assert actual["final_response"]["parts"][0]["text"] == (
        "Sorry, I do not know the weather in Berlin."
    )
    assert actual["intermediate_data"]["tool_uses"][0]["args"] == {"city": "Berlin"}


@pytest.mark.parametrize("example", ["local", "tooltrajectory"])
def test_replay_of_trpc_result_files(example: str, tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not here")
    base = CORPUS / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation" / example
    out = tmp_path / "r.json"
    proc = run_replay(
        str(base / "data"), "--results", str(out), replay=str(base / "output"), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for case in results_of(out).values():
        assert case["runs"][0]["invocations"][0]["actual"]["intermediate_data"]["tool_uses"]


def test_replay_of_a_json_string_wrapped_result(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not here")
    base = CORPUS / (
        "trpc-agent-go/trpc-group-trpc-agent-go@5fdb8201-gen1-snakecase/examples/evaluation/local"
    )
    proc = run_replay(str(base / "data"), replay=str(base / "output"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_replay_without_a_recording_for_a_case_is_an_error(tmp_path: Path) -> None:
    recorded = tmp_path / "empty.json"
    recorded.write_text(
        json.dumps(
            {"eval_set_result_id": "x", "eval_set_id": "weather_basic", "eval_case_results": []}
        )
    )
    proc = run_replay(
        str(SAMPLES / "evals/weather_basic.evalset.json"), replay=str(recorded), cwd=tmp_path
    )
    assert proc.returncode == 3
    assert f"ERROR weather_basic:paris_weather: no recording of this case in {recorded}\n" in (
        proc.stdout
    )
    assert "cannot start a session" not in proc.stdout


def test_case_filter_and_unknown_filter(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run_sample_agent(
        str(SAMPLES / "evals"),
        "--case",
        "weather_basic:paris_weather",
        "--results",
        str(out),
        cwd=tmp_path,
    )
    assert proc.returncode == 0
    assert list(results_of(out)) == [("weather_basic", "paris_weather")]
    proc = run_sample_agent(str(SAMPLES / "evals"), "--case", "weather_basic:nope", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--case weather_basic:nope: no such eval set or case" in proc.stderr


def test_num_runs_gives_each_run_a_record(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run_sample_agent(
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--num-runs",
        "3",
        "--results",
        str(out),
        cwd=tmp_path,
    )
    case = results_of(out)[("weather_basic", "paris_weather")]
    assert [r["run"] for r in case["runs"]] == [1, 2, 3]


def test_scenario_cases_are_skipped_with_a_reason(tmp_path: Path) -> None:
    evals = tmp_path / "s.evalset.json"
    evals.write_text(
        json.dumps(
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {
                        "eval_id": "sim",
                        "conversation_scenario": {
                            "starting_prompt": "hi",
                            "conversation_plan": "ask",
                        },
                    }
                ],
            }
        )
    )
    out = tmp_path / "r.json"
    proc = run_sample_agent(str(evals), "--results", str(out), cwd=tmp_path)
    # the only case was skipped: nothing was evaluated, which never passes
    assert proc.returncode == 1
    assert "nothing was evaluated (1 case)" in proc.stdout.splitlines()[-1]
    case = results_of(out)[("s", "sim")]
    assert case["status"] == "SKIPPED" and "user simulator" in case["skipped"]


def test_a_crashing_command_agent_is_an_error(tmp_path: Path) -> None:
    proc = ci_eval(
        "run",
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--agent",
        "command",
        "--agent-command",
        f"{sys.executable} -c 'import sys; sys.stderr.write(\"kaboom\\n\"); sys.exit(4)'",
        cwd=tmp_path,
    )
    assert proc.returncode == 3
    assert "the agent exited with code 4 without replying: kaboom" in proc.stdout


@pytest.mark.parametrize("program", ["/no/such/agent", "no-such-agent-program"])
def test_a_missing_agent_program_is_a_usage_error_before_any_case(
    tmp_path: Path, program: str
) -> None:
    proc = ci_eval(
        "run",
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--agent",
        "command",
        "--agent-command",
        f"{program} --flag",
        "--results",
        str(tmp_path / "r.json"),
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"ci-eval: the agent command `{program}` is not an executable")
    assert not (tmp_path / "r.json").exists()  # refused before any case ran


def test_config_file_and_its_errors(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text(
        f'[run]\npaths = ["{SAMPLES / "evals"}"]\nconcurrency = 2\n\n'
        f'[agent]\nkind = "command"\ncommand = "{COMMAND}"\n'
    )
    assert ci_eval("run", cwd=tmp_path).returncode == 1
    (tmp_path / "ci-eval.toml").write_text('[agent]\nkinds = "command"\n')
    proc = ci_eval("run", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("ci-eval: ci-eval.toml: unknown key [agent] kinds")


def test_no_agent_is_a_usage_error(tmp_path: Path) -> None:
    proc = ci_eval("run", str(SAMPLES / "evals"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "no agent: give --agent KIND" in proc.stderr


def test_token_comes_from_the_environment_and_is_never_printed(tmp_path: Path) -> None:
    proc = run_cli(
        "run",
        str(SAMPLES / "evals"),
        "--agent",
        "http",
        "--agent-url",
        "http://127.0.0.1:9/",
        "--agent-token-env",
        "AGENT_TOKEN",
        "--retries",
        "0",
        "--results",
        str(tmp_path / "r.json"),
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "AGENT_TOKEN": "s3cr3t-t0ken"},
    )
    assert proc.returncode == 3
    assert "s3cr3t-t0ken" not in proc.stdout + proc.stderr
    assert "s3cr3t-t0ken" not in (tmp_path / "r.json").read_text()


def test_interrupt_keeps_what_finished(tmp_path: Path) -> None:
    cases = [
        {
            "eval_id": f"c{i}",
            "conversation": [{"user_content": {"role": "user", "parts": [{"text": "slow 0.5"}]}}],
        }
        for i in range(20)
    ]
    evals = tmp_path / "slow.evalset.json"
    evals.write_text(json.dumps({"eval_set_id": "slow", "eval_cases": cases}))
    out = tmp_path / "r.json"
    with LoopbackAgent() as agent:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ci_eval",
                "run",
                str(evals),
                "--agent",
                "http",
                "--agent-url",
                agent.url,
                "--concurrency",
                "2",
                "--results",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        deadline = time.monotonic() + 30
        while sum(agent.requests.values()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)  # interrupt once cases are running, not while Python starts
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 3, stdout + stderr
    assert "Traceback" not in stdout + stderr
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    statuses = [c["status"] for c in data["sets"][0]["cases"]]
    assert len(statuses) == 20
    assert {"PASSED", "FAILED"} & set(statuses) and "ERROR" in statuses
    assert "interrupted" in stdout
