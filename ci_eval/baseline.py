"""The stored baseline: per eval set, case and metric the mean, n, standard deviation, pass
rate, per-run scores and status, with provenance. Written with sorted keys and a fixed layout so
its diff reads well in a pull request, and atomically (temp file + rename): a reader sees the
old file or the new one, never half of either."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ci_eval import __version__
from ci_eval.errors import InputError
from ci_eval.files import write_json_atomic
from ci_eval.jsonpos import read_regular_file
from ci_eval.results import RunResults
from ci_eval.text import loads as loads_json

DEFAULT_PATH = ".ci-eval/baseline.json"
FORMAT = 1


def metrics_digest(results: RunResults) -> str:
    """A fingerprint of the metric configuration, to warn when it changed."""
    config = sorted(
        (s.eval_set_id, m.name, m.threshold, json.dumps(m.criterion, sort_keys=True))
        for s in results.sets
        for m in s.applied_metrics
    )
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()[:16]


class GitError(Exception):
    """git could not answer (not a repository, dubious ownership, git missing); the message
    is what git said, on one line."""


def _git_checked(*args: str) -> str | None:
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


def _git(*args: str) -> str | None:
    try:
        return _git_checked(*args)
    except GitError:
        return None


def from_results(results: RunResults, commit: str | None = None) -> dict[str, Any]:
    sets: dict[str, Any] = {}
    for s in results.sets:
        cases = {}
        for c in s.cases:
            if c.status in ("ERROR", "SKIPPED"):
                continue  # nothing was measured; a baseline records measurements
            cases[c.eval_id] = {
                "status": c.status,
                "metrics": {
                    m.name: {
                        "mean": m.score,
                        "n": len([r for r in m.runs if r is not None]),
                        "std": m.std,
                        "pass_rate": m.pass_rate,
                        "status": m.status,
                        "runs": m.runs,
                        "threshold": m.threshold,
                    }
                    for m in c.metrics
                    if not m.informational
                },
            }
        sets[s.eval_set_id] = {"file": s.file, "cases": cases}
    return {
        "format": FORMAT,
        "provenance": {
            "commit": commit or os.environ.get("GITHUB_SHA") or _git("rev-parse", "HEAD"),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "ci_eval_version": __version__,
            "agent": results.agent,
            "metrics_digest": metrics_digest(results),
        },
        "sets": sets,
    }


def write(path: Path, baseline: dict[str, Any]) -> None:
    write_json_atomic(path, baseline, sort_keys=True)


def parse(text: str, where: str) -> dict[str, Any]:
    try:
        data = loads_json(text)  # lone surrogates out, as in every JSON we read
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}", path=where, line=exc.lineno, col=exc.colno
        ) from None
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get("sets"), dict)
    ):
        raise InputError(
            "not a ci-eval baseline (write one with `ci-eval baseline update`)", path=where
        )
    return data


def read(path: Path) -> dict[str, Any] | None:
    """The baseline, or None when there is none yet (the run then gates on thresholds)."""
    if not path.is_file():
        return None
    try:
        return parse(read_regular_file(path, str(path)).decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=str(path)) from None


def read_at_ref(ref: str, path: str) -> dict[str, Any] | None:
    """The baseline file as it is at a git ref (``git show REF:path``); None if absent there.
    A git failure (say, the repository is owned by another user and not a safe.directory) is
    an InputError with what git said, not "no baseline"."""
    try:
        commit = _git_checked("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError as exc:
        raise InputError(f"--baseline-ref {ref}: git failed: {exc}") from None
    if commit is None:
        raise InputError(
            f"--baseline-ref {ref}: no such commit in this repository (fetch it, "
            "e.g. actions/checkout with fetch-depth: 0)"
        )
    prefix = _git("rev-parse", "--show-prefix") or ""
    try:
        text = _git_checked("show", f"{ref}:{prefix}{path}")
    except GitError as exc:
        if "does not exist" in str(exc) or "exists on disk, but not in" in str(exc):
            return None
        raise InputError(f"reading {path} at {ref}: git failed: {exc}") from None
    return None if text is None else parse(text, f"{ref}:{path}")


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
            found = _git_checked("merge-base", "HEAD", candidate)
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


def default_ref(env: Mapping[str, str]) -> str | None:
    """In a pull request: the merge base with the base branch (not the previous PR commit)."""
    return merge_base(env)[0]


def age_days(baseline: dict[str, Any]) -> float | None:
    try:
        made = datetime.fromisoformat(baseline["provenance"]["date"])
    except (KeyError, TypeError, ValueError):
        return None
    return (datetime.now(UTC) - made).total_seconds() / 86400
