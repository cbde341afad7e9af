"""The bar's file is the merge base's whatever the pull request did to it — deleted, moved,
made a symlink to a loosened copy — and every command reads the same bar. Real git
repositories: ``main`` is the base, ``feature`` the pull request."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import git, run_cli

PR = {**os.environ, "GITHUB_BASE_REF": "main", "GITHUB_EVENT_NAME": "pull_request"}
AGENT = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps({'final_response': 'sunny, 21 C'}), flush=True)\n"
)
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
# main's bar: a team metric every case must pass, which this agent fails
BAR = '[custom_metrics]\nstrict = "team_metrics:score"\n\n[metrics]\nstrict = 1.0\n'
LOOSE = "[metrics]\nresponse_match_score = 0.5\n"
AGENT_FLAGS = ("--agent", "command", "--agent-command", f"{sys.executable} echo_agent.py")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "repo"
    (root / "evals").mkdir(parents=True)
    (root / "echo_agent.py").write_text(AGENT)
    (root / "team_metrics.py").write_text("def score(*args):\n    return 0.0\n")
    (root / "evals/basic.evalset.json").write_text(json.dumps(EVALSET))
    (root / "ci-eval.toml").write_text(BAR)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "feature")
    monkeypatch.chdir(root)
    yield root
    sys.modules.pop("team_metrics", None)


def _commit(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the pull request")


def _run(root: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_cli("run", "evals", *AGENT_FLAGS, *extra, cwd=root, env=PR)


def test_the_bar_as_main_has_it_fails_the_case(repo: Path) -> None:
    done = _run(repo)
    assert done.returncode == 1, done.stdout + done.stderr


def test_deleting_ci_eval_toml_keeps_the_base_s_bar_and_says_so(repo: Path) -> None:
    (repo / "ci-eval.toml").unlink()
    _commit(repo)
    done = _run(repo)
    assert done.returncode == 1, done.stdout + done.stderr  # strict still applies
    said = done.stdout + done.stderr
    assert "ci-eval.toml deleted or moved by this pull request; the base's bar applies" in said


def test_moving_ci_eval_toml_away_keeps_the_base_s_bar(repo: Path) -> None:
    (repo / "elsewhere").mkdir()
    (repo / "ci-eval.toml").rename(repo / "elsewhere/ci-eval.toml")
    _commit(repo)
    done = _run(repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "deleted or moved by this pull request" in done.stdout + done.stderr


def test_a_symlink_to_a_loosened_copy_keeps_the_base_s_bar_and_says_so(repo: Path) -> None:
    (repo / "loose.toml").write_text(LOOSE)
    (repo / "ci-eval.toml").unlink()
    (repo / "ci-eval.toml").symlink_to("loose.toml")
    _commit(repo)
    done = _run(repo)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "ci-eval.toml is a symlink in this pull request; the base's bar applies" in said
    assert "(base: unset)" not in said


def test_outside_a_pull_request_a_deleted_file_is_no_bar(repo: Path) -> None:
    (repo / "ci-eval.toml").unlink()
    _commit(repo)
    env = {k: v for k, v in PR.items() if k != "GITHUB_BASE_REF"}
    done = run_cli("run", "evals", *AGENT_FLAGS, cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_compare_reads_the_same_gate_settings_as_run(repo: Path) -> None:
    """`[run] min_history = 2`: run and compare say the same of a one-run history."""
    (repo / "ci-eval.toml").write_text("[run]\nmin_history = 2\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-qam", "main's gate settings")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "-q", "main")
    env = {k: v for k, v in PR.items() if k != "GITHUB_BASE_REF"}
    first = run_cli("run", "evals", *AGENT_FLAGS, "--results", "main.json", cwd=repo, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    update = run_cli("baseline", "update", "main.json", cwd=repo, env=env)
    assert update.returncode == 0, update.stdout + update.stderr
    ran = run_cli("run", "evals", *AGENT_FLAGS, "--results", "pr.json", cwd=repo, env=env)
    compared = run_cli("compare", "pr.json", cwd=repo, env=env)
    assert ran.returncode == compared.returncode == 0
    last = [line for line in ran.stdout.splitlines() if line.startswith("gate ")]
    again = [line for line in compared.stdout.splitlines() if line.startswith("gate ")]
    assert last == again and "fewer than 2 runs on main" in last[0], (ran.stdout, compared.stdout)


def test_baseline_update_keeps_the_window_the_bar_names(repo: Path) -> None:
    """`[run] baseline_window = 2` on main; the pull request's 50 is not applied."""
    (repo / "ci-eval.toml").write_text("[run]\nbaseline_window = 2\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-qam", "main's window")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "-q", "main")
    (repo / "ci-eval.toml").write_text("[run]\nbaseline_window = 50\n")
    _commit(repo)
    ran = run_cli("run", "evals", *AGENT_FLAGS, "--num-runs", "3", "--results", "r.json", env=PR)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    update = run_cli("baseline", "update", "r.json", cwd=repo, env=PR)
    assert update.returncode == 0, update.stdout + update.stderr
    data = json.loads((repo / ".ci-eval/baseline.json").read_text())
    assert data["window"] == 2
    # the file keeps main's last 50 pushes whole, for `ci-eval history`; the gate reads 2 runs
    from ci_eval.gate import baseline as baseline_store

    assert len(data["sets"]["basic"]["cases"]["paris"]["push"]) == 3
    view = baseline_store.gate_view(baseline_store.load(data))
    assert len(view.sets["basic"].cases["paris"].push) == 2
