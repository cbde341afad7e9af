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
