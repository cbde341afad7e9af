"""A same-day control (``--control REF``): the merge base's agent runs on the same cases in the
same job, and the gate judges the PR against it — a provider's bad day moves both."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ci_eval.gate.compare import Judgement, compare
from ci_eval.model.facts import RunFacts
from tests.conftest import REPO
from tests.gate.test_correlated_noise import pushes
from tests.gate.test_gate import judged, results
from tests.helpers import git, run_cli

EVALS = "samples/evals/weather_basic.evalset.json"
AGENT = "python samples/agents/weather_agent/command_agent.py"


# --- the comparison ------------------------------------------------------------------------


def _main() -> dict:
    return pushes([{f"c{i}": [1.0, 1.0, 1.0] for i in range(30)} for _ in range(7)])


def _bad_day(seed: int) -> dict[str, list[float]]:
    return {f"c{i}": [0.0 if (i * 7 + r + seed) % 5 == 0 else 1.0 for r in range(3)]
            for i in range(30)}  # fmt: skip


def test_a_drop_the_control_shares_is_not_blamed_on_the_pr() -> None:
    now, today = results(_bad_day(0)), results(_bad_day(1))
    now.settings = today.settings = RunFacts(num_runs=3)
    without = compare(now, _main())
    assert without.suite_regressed  # main never swung: the drop is blamed on the PR
    assert without.suite is not None  # and the verdict says it cannot tell, and how to
    assert without.suite.caveat().startswith(
        "broad drop: the provider or this pull request — cannot tell without a control"
    )
    assert "--control base (input control: base)" in without.suite.caveat()
    comparison = compare(now, _main(), control=today)
    assert comparison.suite is not None and not comparison.suite.regressed
    assert "where the merge base's agent, run in this job, failed" in comparison.suite.describe()
    assert comparison.suite.caveat() == ""


def test_a_drop_beyond_the_control_is_blamed_on_the_pr() -> None:
    broken = {f"c{i}": [0.0 if (i + r) % 2 == 0 else 1.0 for r in range(3)] for i in range(30)}
    now, today = results(broken), results({f"c{i}": [1.0] * 3 for i in range(30)})
    now.settings = RunFacts(num_runs=3)
    comparison = compare(now, _main(), control=today)
    assert comparison.suite_regressed or comparison.regressed_cases()


def test_a_case_the_base_fails_too_today_is_not_the_prs_regression() -> None:
    now = results({"c0": [0.0] * 5, **{f"c{i}": [1.0] * 5 for i in range(1, 30)}})
    today = results({"c0": [0.0, 0.0, 1.0], **{f"c{i}": [1.0] * 3 for i in range(1, 30)}})
    comparison = compare(now, _main(), control=today)
    case = judged(comparison, "c0")
    assert case.judgement is Judgement.KNOWN_FAILURE
    assert "the merge base fails it too today (same-day control: failed 2 of 3 runs)" in (
        case.describe()
    )


# --- the run ---------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The sample agent in a repository of its own: main, then a branch that breaks Paris."""
    root = tmp_path / "repo"
    for part in ("samples/evals", "samples/agents"):
        shutil.copytree(REPO / part, root / part)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    return root


def _break_paris(root: Path) -> None:
    logic = root / "samples/agents/weather_agent/logic.py"
    logic.write_text(logic.read_text().replace('"Paris": {', '"Pariss": {'))  # Paris unknown
    git(root, "checkout", "-q", "-b", "pr")
    git(root, "commit", "-q", "-am", "pr")


def test_the_control_runs_the_merge_bases_agent_from_a_worktree(repo: Path) -> None:
    done = run_cli("run", EVALS, "--agent", "command", "--agent-command", AGENT,
                   "--num-runs", "5", "--results", "main.json", cwd=repo)  # fmt: skip
    assert done.returncode == 1  # the sample's known failure
    run_cli("baseline", "update", "main.json", "--baseline", "b.json", cwd=repo)
    _break_paris(repo)
    done = run_cli("run", EVALS, "--agent", "command", "--agent-command", AGENT,
                   "--baseline", "b.json", "--control", "main", cwd=repo)  # fmt: skip
    out = done.stdout + done.stderr
    assert "same-day control: 3 agent runs of the merge base" in out
    assert "(a git worktree)" in out
    assert done.returncode == 1
    assert "regression (weather_basic:paris_weather)" in out
    assert git(repo, "worktree", "list").count("\n") == 0  # the worktree is gone


def test_an_http_agent_needs_the_controls_url(repo: Path) -> None:
    done = run_cli("run", EVALS, "--agent", "http", "--agent-url", "http://127.0.0.1:9",
                   "--control", "main", cwd=repo)  # fmt: skip
    assert done.returncode == 2
    assert "--control with the http agent needs --control-url" in done.stderr


def test_a_malformed_control_url_is_a_usage_error_before_any_agent_call(repo: Path) -> None:
    done = run_cli("run", EVALS, "--agent", "http", "--agent-url", "http://127.0.0.1:9",
                   "--control", "main", "--control-url", "127.0.0.1:8001", cwd=repo)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "ci-eval: --control-url 127.0.0.1:8001: expected an http:// or https:// URL, "
        "e.g. http://127.0.0.1:8000"
    ]


def test_the_control_base_needs_a_pull_request_before_any_agent_call(repo: Path) -> None:
    run_cli("run", EVALS, "--agent", "command", "--agent-command", AGENT,
            "--results", "main.json", cwd=repo)  # fmt: skip
    run_cli("baseline", "update", "main.json", "--baseline", "b.json", cwd=repo)
    done = run_cli("run", EVALS, "--agent", "command", "--agent-command", AGENT,
                   "--baseline", "b.json", "--control", "base", "--results", "pr.json",
                   cwd=repo, env={"PATH": os.environ["PATH"]})  # fmt: skip
    assert done.returncode == 2
    assert "--control base needs a pull request (GITHUB_BASE_REF)" in done.stderr
    assert not (repo / "pr.json").exists()
