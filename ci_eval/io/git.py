"""git, as the baseline needs it: the merge base of a pull request (fetched if needed), what a
file holds at a ref, whether a file is tracked. Every failure is a :class:`GitError` carrying
git's own one-line message, or None where git answered "no"."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class GitError(Exception):
    """git could not answer (not a repository, dubious ownership, git missing); the message
    is what git said, on one line."""


def run(*args: str) -> subprocess.CompletedProcess[str] | None:
    """git, run; None when it could not be started or did not answer in time."""
    try:
        # UTF-8 whatever the locale; a name that is not UTF-8 kept byte for byte
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


# what git adds to a failed fetch after the reason, which says nothing of its own
_BOILERPLATE = (
    "fatal: could not read from remote repository.",
    "please make sure you have the correct access rights",
    "and the repository exists.",
)


def reason(done: subprocess.CompletedProcess[str] | None) -> str:
    """Why git failed, in one line: the first ``fatal:`` or ``error:`` line of its stderr that
    is more than the boilerplate git adds after it (``Could not read from remote repository.``),
    else its first such line of any kind (ssh's ``connect to host …``)."""
    if done is None:
        return "git could not be run, or did not answer within 120 s"
    lines = [line.strip() for line in (done.stderr or "").splitlines() if line.strip()]
    said = [line for line in lines if line.lower() not in _BOILERPLATE]
    failed = [line for line in said if line.startswith(("fatal:", "error:"))]
    found = (failed or said or lines or [f"git exited with {done.returncode}"])[0]
    return found[:300]


def checked(*args: str) -> str | None:
    """git's output; None when git answered "no" (exit 1 with nothing on stderr, as
    ``rev-parse --verify --quiet`` and ``merge-base`` do); GitError when git failed."""
    try:
        out = subprocess.run(
            ["git", *args], capture_output=True, text=True, check=False, timeout=30
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not answer within 30 s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if out.returncode == 0:
        return out.stdout.strip()
    lines = [line.strip() for line in out.stderr.splitlines() if line.strip()]
    if not lines:
        return None
    said = lines[0][:300]
    if "dubious ownership" in said:
        said += " (mark it safe: git config --global --add safe.directory DIR)"
    raise GitError(said)


def quiet(*args: str) -> str | None:
    try:
        return checked(*args)
    except GitError:
        return None


def current_commit() -> str | None:
    """The commit this job builds: GitHub's ``GITHUB_SHA``, else the checkout's HEAD."""
    return os.environ.get("GITHUB_SHA") or quiet("rev-parse", "HEAD")


def is_tracked(path: str) -> bool:
    """Is the file part of the repository (so a pull request could have edited it)?"""
    return quiet("ls-files", "--error-unmatch", "--", path) is not None


def in_worktree(path: str | os.PathLike[str]) -> str | None:
    """``path``'s real path (symlinks resolved, ``..`` and absolute paths normalised) relative
    to the repository's root, as ``git show REF:…`` names it; None outside a repository or
    outside its working tree."""
    root = quiet("rev-parse", "--show-toplevel")
    if not root:
        return None
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except (ValueError, OSError):
        return None


def merge_base(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """In a pull request: (the merge base with the base branch, None), or (None, one line
    saying why there is none: the clone is shallow, git failed...). Outside one: (None, None).
    The merge base, not the previous PR commit, is what the PR's changes are measured from."""
    base = env.get("GITHUB_BASE_REF")
    if not base:
        return None, None
    failure = None
    for candidate in (f"origin/{base}", base):
        try:
            found = checked("merge-base", "HEAD", candidate)
        except GitError as exc:
            failure = failure or str(exc)
            continue
        if found:
            return found, None
    if failure and "Not a valid object name" not in failure:
        return None, f"cannot find the merge base with {base}: git failed: {failure}"
    return None, (
        f"no merge base with {base} in this clone (check out with fetch-depth: 0, "
        f"or fetch origin/{base})"
    )


# what fetch_merge_base fetched, per repository and base branch: whichever caller comes first
# (the bar's settings, before the baseline) fetches, and the one that reports says so
_FETCHED: dict[tuple[str, str], list[str]] = {}


def fetch_merge_base(base: str, fetch: bool = True) -> tuple[str | None, list[str]]:
    """The merge base of HEAD with the base branch, fetching what a shallow clone lacks.

    ``actions/checkout`` fetches one commit by default: neither the base branch nor the common
    ancestor is there. Fetch the base branch's tip, then deepen both sides step by step until the
    ancestor appears (as far as the token allows). Returns (sha or None, what was done)."""
    done: list[str] = []

    def find() -> str | None:
        return merge_base({"GITHUB_BASE_REF": base})[0]

    found = find()
    where = (quiet("rev-parse", "--show-toplevel") or "", base)
    if found and where in _FETCHED:  # fetched earlier in this run (the bar's file): said here
        return found, list(_FETCHED[where])
    if found or not fetch or quiet("remote") in (None, ""):
        return found, done
    _FETCHED[where] = done
    tracking = f"+refs/heads/{base}:refs/remotes/origin/{base}"
    fetched = run("fetch", "--no-tags", "--depth=50", "origin", tracking)
    done.append(f"git fetch --depth=50 origin {base}")
    if fetched is None or fetched.returncode != 0:
        return None, done
    head = quiet("rev-parse", "HEAD") or "HEAD"
    for depth in (50, 200, 1000):
        found = find()
        if found or quiet("rev-parse", "--is-shallow-repository") != "true":
            return found, done
        # deepen both sides: the commit checked out (a PR's merge commit) and the base branch
        run("fetch", "--no-tags", f"--deepen={depth}", "origin", head, tracking)
        done.append(f"git fetch --deepen={depth}")
    found = find()
    if found is None and quiet("rev-parse", "--is-shallow-repository") == "true":
        run("fetch", "--no-tags", "--unshallow", "origin", head, tracking)
        done.append("git fetch --unshallow")
    return find(), done


def pull_request_base(env: dict[str, str] | os._Environ[str] | Any) -> str | None:
    return env.get("GITHUB_BASE_REF") or None
