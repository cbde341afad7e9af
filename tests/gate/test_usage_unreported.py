"""Usage that main had and the pull request lacks is not measured, not passed: an agent that
stops reporting its tokens does not dodge ``[budget]`` or the token gate. Through the CLI, with
a command agent that reports 120 tokens a turn on main."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli

AGENT = """\
import json, sys
usage = {{"input_tokens": 100, "output_tokens": 20}} if "{report}" == "yes" else None
for line in sys.stdin:
    print(json.dumps({{"final_response": "sunny, 21 C", "usage": usage}}), flush=True)
"""
EVALSET = {
    "eval_set_id": "basic",
    "eval_cases": [
        {
            "eval_id": "paris",
            "conversation": [
                {
                    "invocation_id": "i",
                    "user_content": {"role": "user", "parts": [{"text": "Paris?"}]},
                    "final_response": {"role": "model", "parts": [{"text": "sunny, 21 C"}]},
                }
            ],
        }
    ],
}
FLAGS = ("--agent", "command", "--agent-command", f"{sys.executable} agent.py")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Main's history: two jobs of an agent that reports its usage; then it stops."""
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/basic.evalset.json").write_text(json.dumps(EVALSET))
    (tmp_path / "agent.py").write_text(AGENT.format(report="yes"))
    for _ in range(2):
        done = run_cli("run", "evals", *FLAGS, "--update-baseline", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "agent.py").write_text(AGENT.format(report="no"))
    return tmp_path


def _run(repo: Path, toml: str = "", *args: str) -> tuple[int, str]:
    (repo / "ci-eval.toml").write_text(toml)
    done = run_cli("run", "evals", *FLAGS, *args, cwd=repo)
    return done.returncode, done.stderr + done.stdout


def test_under_a_token_budget_an_unreported_case_blocks(repo: Path) -> None:
    code, out = _run(repo, "[budget]\ntokens_per_case = 1000\n")
    assert code == 1, out
    assert out.splitlines()[-1].startswith("gate failed: 1 case's usage not measured (basic:paris)")
    assert "tokens not reported; main reported 120 a run" in out


def test_under_the_usage_gate_an_unreported_case_blocks(repo: Path) -> None:
    code, out = _run(repo, "", "--fail-on", "regression,error,not-evaluated,usage")
    assert code == 1, out


def test_without_a_budget_or_the_usage_gate_it_is_said(repo: Path) -> None:
    code, out = _run(repo)
    assert code == 0, out
    assert "1 case's usage not measured did not block" in out.splitlines()[-1]
    assert "add `usage` to --fail-on, or set a [budget]" in out


def test_a_cost_limit_that_cannot_be_checked_blocks(repo: Path) -> None:
    code, out = _run(repo, "[budget]\ncost_per_run = 1.0\n")
    assert code == 1, out
    assert "cost unknown" in out


def test_a_token_budget_no_case_reports_against_blocks_without_history(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/basic.evalset.json").write_text(json.dumps(EVALSET))
    (tmp_path / "agent.py").write_text(AGENT.format(report="no"))
    code, out = _run(tmp_path, "[budget]\ntokens_per_case = 1000\n")
    assert code == 1, out
    assert "[budget] tokens_per_case = 1,000 cannot be checked" in out
