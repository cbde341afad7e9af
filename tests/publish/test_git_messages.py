"""What ci-eval says when git or GitHub fail: git's own words, one clean line each, never
"no baseline" for a git failure and never urllib3's raw retry warnings."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_eval.errors import InputError
from ci_eval.gate import baseline
from ci_eval.io import git
from ci_eval.publish.github import CommentError, CommentPoster, Workflow


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _git(tmp_path, "init", "-q", "-b", "pr")
    (tmp_path / "a.txt").write_text("a")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "one")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_missing_merge_base_says_how_to_get_one(repo: Path) -> None:
    ref, problem = git.merge_base({"GITHUB_BASE_REF": "main"})
    assert ref is None
    assert problem == (
        "no merge base with main in this clone (check out with fetch-depth: 0, or fetch "
        "origin/main)"
    )


def test_a_git_failure_is_what_git_said_not_no_baseline(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(repo / "nowhere"))
    ref, problem = git.merge_base({"GITHUB_BASE_REF": "main"})
    assert ref is None and problem is not None
    assert problem.startswith("cannot find the merge base with main: git failed: fatal: not a git")
    with pytest.raises(InputError, match=r"--baseline-ref HEAD: git failed: fatal: not a git"):
        baseline.read_at_ref("HEAD", ".ci-eval/baseline.json")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_repository_owned_by_another_user_names_safe_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in the Docker action without safe.directory: the workspace belongs to the runner."""
    subprocess.run(["chown", "-R", "1001:1001", str(repo)], check=True)
    monkeypatch.setenv("HOME", str(repo))  # no safe.directory from anyone's config
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    _, problem = git.merge_base({"GITHUB_BASE_REF": "main"})
    assert problem is not None and "dubious ownership" in problem
    assert "safe.directory" in problem


def test_the_run_says_why_there_is_no_merge_base(repo: Path) -> None:
    from ci_eval.gate.main_history import apply_baseline
    from ci_eval.results.file import RunResults
    from ci_eval.settings import RunSettings
    from ci_eval.settings.gate import DEFAULT_GATE

    results = RunResults(sets=[], agent="a", started="now", duration_s=0)
    # no baseline file in the repository: nothing a PR could have edited, no merge base needed
    notices = apply_baseline(results, RunSettings(), {"GITHUB_BASE_REF": "main"}, DEFAULT_GATE)
    assert notices[0].startswith("no baseline at .ci-eval/baseline.json")
    # a committed baseline is read at the merge base; without one (and nothing to fetch from)
    # the run stops and says how to get it, never reading the PR's own copy
    (repo / ".ci-eval").mkdir()
    (repo / ".ci-eval/baseline.json").write_text('{"format": 2, "sets": {}}')
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "baseline")
    with pytest.raises(InputError, match=r"cannot find the merge base with main.*fetch-depth: 0"):
        apply_baseline(results, RunSettings(), {"GITHUB_BASE_REF": "main"}, DEFAULT_GATE)


def test_a_failed_pr_comment_is_one_line_without_urllib3_warnings(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import absl.logging  # noqa: F401  (rouge-score imports it; it gives the root logger a handler)

    from ci_eval.net import http

    # every retry is still made (and would warn); only their back-off is not waited out
    monkeypatch.setattr(http._CappedRetry, "get_backoff_time", lambda self: 0.0)

    poster = CommentPoster("http://127.0.0.1:9", "o/r", "t0ken", Workflow())
    with pytest.raises(CommentError) as caught:
        poster.upsert(1, "body", "<!-- m -->")
    err = capfd.readouterr().err
    assert "Retrying" not in err and "urllib3" not in err
    assert str(caught.value).endswith("cannot connect (connection refused)") or (
        "connection refused" in str(caught.value)
    )
    assert "\n" not in str(caught.value)


COMMAND = "python samples/agents/weather_agent/command_agent.py"
EVALS = "samples/evals/weather_basic.evalset.json"


def _run_with_data_branch(repo: Path) -> tuple[int, str]:
    """`ci-eval run` of the samples in ``repo``, main's history on the data branch."""
    import shutil

    from tests.conftest import REPO
    from tests.helpers import run_cli

    shutil.copytree(REPO / "samples", repo / "samples", dirs_exist_ok=True)
    argv = ["run", EVALS, "--agent", "command", "--agent-command", COMMAND]
    done = run_cli(*argv, "--baseline-branch", "ci-eval-data", cwd=repo)
    return done.returncode, done.stderr + done.stdout


def test_an_unreachable_origin_is_said_with_gits_reason_not_as_a_first_run(
    repo: Path, tmp_path: Path
) -> None:
    _git(repo, "remote", "add", "origin", str(tmp_path / "nowhere"))
    code, out = _run_with_data_branch(repo)
    assert code == 1, out  # berlin fails its thresholds: the gate is the thresholds'
    said = next(line for line in out.splitlines() if "no baseline at" in line)
    assert said == (
        "ci-eval: no baseline at baseline.json on branch ci-eval-data: git fetch origin "
        f"ci-eval-data failed (fatal: '{tmp_path / 'nowhere'}' does not appear to be a git "
        "repository): gating on thresholds only (check origin's URL and this job's access to it)"
    )


def test_an_origin_without_the_branch_is_said_and_told_how_to_start_one(
    repo: Path, tmp_path: Path
) -> None:
    _git(tmp_path, "clone", "-q", "--bare", str(repo), "origin.git")
    _git(repo, "remote", "add", "origin", str(tmp_path / "origin.git"))
    code, out = _run_with_data_branch(repo)
    assert code == 1, out
    said = next(line for line in out.splitlines() if "no baseline at" in line)
    assert said == (
        "ci-eval: no baseline at baseline.json on branch ci-eval-data: git fetch origin "
        "ci-eval-data failed (fatal: couldn't find remote ref refs/heads/ci-eval-data): gating "
        "on thresholds only (create one with `ci-eval baseline update RESULTS`)"
    )


def test_a_failed_fetch_over_the_clones_own_copy_says_that_copy_is_read(
    repo: Path, tmp_path: Path
) -> None:
    from tests.helpers import run_cli

    _git(repo, "remote", "add", "origin", str(tmp_path / "nowhere"))
    _run_with_data_branch(repo)  # the samples copied; a first run
    argv = ["run", EVALS, "--agent", "command", "--agent-command", COMMAND, "--results", "r.json"]
    run_cli(*argv, cwd=repo)
    history = tmp_path / "baseline.json"
    done = run_cli("baseline", "update", "r.json", "--baseline", str(history), cwd=repo)
    assert done.returncode == 0, done.stderr
    # origin/ci-eval-data as an earlier fetch left it: one commit holding baseline.json
    blob = _out(repo, "hash-object", "-w", str(history))
    tree = _out(repo, "mktree", stdin=f"100644 blob {blob}\tbaseline.json\n")
    commit = _out(repo, "commit-tree", tree, "-m", "history")
    _git(repo, "update-ref", "refs/remotes/origin/ci-eval-data", commit)
    _, out = _run_with_data_branch(repo)
    assert "no baseline at" not in out
    assert (
        "ci-eval: git fetch origin ci-eval-data failed (fatal: "
        f"'{tmp_path / 'nowhere'}' does not appear to be a git repository): reading "
        "origin/ci-eval-data as this clone has it"
    ) in out.splitlines()


def _out(cwd: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        input=stdin,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def test_gits_reason_is_past_its_boilerplate() -> None:
    said = (
        "ssh: connect to host github.com port 22: Connection refused\n"
        "fatal: Could not read from remote repository.\n\n"
        "Please make sure you have the correct access rights\nand the repository exists.\n"
    )
    done = subprocess.CompletedProcess(["git", "fetch"], 128, "", said)
    assert git.reason(done) == "ssh: connect to host github.com port 22: Connection refused"
