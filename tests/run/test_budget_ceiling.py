"""``[budget]``'s binding limits stop calls once reached — the agent's turns, the judge's calls,
the job's tokens and its cost — and a run they stop still reports every case: those not started
say "not run: budget reached (…)" and block; the verdict, the progress line and the notices say
which limit and what was spent. Through the CLI, with a command agent that reports 120 tokens a
turn and a loopback judge."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ci_eval.errors import EXIT_GATE
from ci_eval.run.ceiling import Ceiling
from ci_eval.settings.usage import Limits
from tests.conftest import SAMPLES
from tests.helpers import run_cli, run_sample_agent
from tests.judge_server import JudgeServer

AGENT = """\
import json, sys
with open("calls.log", "a") as log:
    for line in sys.stdin:
        log.write("call\\n")
        log.flush()
        usage = {"input_tokens": 100, "output_tokens": 20}
        print(json.dumps({"final_response": "sunny, 21 C", "usage": usage}), flush=True)
"""


def _case(i: int) -> dict:
    return {
        "eval_id": f"paris_{i}",
        "conversation": [
            {
                "invocation_id": "i",
                "user_content": {"role": "user", "parts": [{"text": f"Paris {i}?"}]},
                "final_response": {"role": "model", "parts": [{"text": "sunny, 21 C"}]},
            }
        ],
    }


FLAGS = ("--agent", "command", "--agent-command", f"{sys.executable} agent.py")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "evals").mkdir()
    evalset = {"eval_set_id": "basic", "eval_cases": [_case(i) for i in range(5)]}
    (tmp_path / "evals/basic.evalset.json").write_text(json.dumps(evalset))
    (tmp_path / "agent.py").write_text(AGENT)
    return tmp_path


def _run(repo: Path, budget: str, *args: str) -> tuple[int, str, int]:
    """Exit code, stderr then stdout, and the agent calls made."""
    (repo / "ci-eval.toml").write_text(budget)
    done = run_cli("run", "evals", *FLAGS, "--concurrency", "1", *args, cwd=repo)
    log = repo / "calls.log"
    return done.returncode, done.stderr + done.stdout, len(log.read_text().splitlines())


def test_max_agent_calls_stops_the_agent_and_every_case_is_reported(repo: Path) -> None:
    code, out, calls = _run(repo, "[budget]\nmax_agent_calls = 3\n", "--junit", "j.xml")
    assert calls == 3
    assert code == EXIT_GATE, out  # a limit reached is the gate's, not an outage
    last = out.splitlines()[-1]
    assert last.startswith("gate failed: 2 errors (basic:paris_3, basic:paris_4); 1 budget"), last
    assert "not run: budget reached ([budget] max_agent_calls = 3)" in out
    assert "budget reached: [budget] max_agent_calls = 3 (3 agent calls, 0 judge calls, " in out
    root = ElementTree.parse(repo / "j.xml").getroot()
    assert len(list(root.iter("testcase"))) == 5


def test_max_tokens_per_run_stops_calls_once_spent(repo: Path) -> None:
    code, out, calls = _run(repo, "[budget]\nmax_tokens_per_run = 250\n")
    assert calls == 3  # 240 tokens after two: a third is made, and takes it past
    assert code == EXIT_GATE, out
    assert "this job spent 360 tokens" in out and "over [budget] max_tokens_per_run = 250" in out


def test_max_cost_per_run_needs_a_price_before_any_call(repo: Path) -> None:
    (repo / "ci-eval.toml").write_text("[budget]\nmax_cost_per_run = 1.0\n")
    done = run_cli("run", "evals", *FLAGS, cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "[budget] max_cost_per_run needs a price for the agent's tokens" in done.stderr
    assert not (repo / "calls.log").exists()


def test_max_cost_per_run_stops_calls_at_the_agents_price(repo: Path) -> None:
    # $1 per million input and output tokens: 120 tokens a call is $0.00012
    toml = "[prices]\nagent = {input = 1.0, output = 1.0}\n\n[budget]\nmax_cost_per_run = 0.0002\n"
    code, out, calls = _run(repo, toml)
    assert (code, calls) == (EXIT_GATE, 2), out
    assert "budget reached: [budget] max_cost_per_run = $0.0002" in out


def test_a_run_under_its_limits_passes(repo: Path) -> None:
    code, out, calls = _run(repo, "[budget]\nmax_agent_calls = 5\nmax_tokens_per_run = 1000\n")
    assert (code, calls) == (0, 5), out
    assert "budget reached" not in out


def test_max_judge_calls_leaves_the_rest_of_the_judged_metrics_not_evaluated(
    tmp_path: Path,
) -> None:
    (tmp_path / "ci-eval.toml").write_text("[budget]\nmax_judge_calls = 2\n")
    with JudgeServer(lambda prompt, n: '{"is_the_agent_response_valid": "valid"}') as server:
        done = run_sample_agent(
            str(SAMPLES / "evals/weather_basic.evalset.json"),
            "--metric",
            "final_response_match_v2=0.5",
            "--judge-url",
            server.url,
            "--judge-model",
            "m",
            "--concurrency",
            "1",
            cwd=tmp_path,
        )
        asked = len(server.prompts)
    assert asked == 2
    out = done.stderr + done.stdout
    assert done.returncode == EXIT_GATE, out
    assert "not asked: budget reached ([budget] max_judge_calls = 2)" in out
    assert "budget reached: [budget] max_judge_calls = 2" in out


def test_a_limit_is_counted_across_threads() -> None:
    import threading

    ceiling = Ceiling(Limits(max_agent_calls=100))
    admitted = []

    def call() -> None:
        for _ in range(50):
            admitted.append(ceiling.agent_call() is None)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert admitted.count(True) == 100 and ceiling.refused == 100
