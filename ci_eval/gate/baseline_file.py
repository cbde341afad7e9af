"""The baseline file on disk or at a git ref: read (formats 1, 2 and 3, the older ones
upgraded in memory and written as 3 on the next update) and written, one case per line. Its
schema, checks and layout are the model's (:mod:`ci_eval.model.baseline`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import git
from ci_eval.io.files import write_text_atomic
from ci_eval.io.git import GitError
from ci_eval.io.readfile import max_results_bytes, read_regular_file
from ci_eval.model.baseline import (
    DEFAULT_WINDOW,
    FORMAT,
    UNKNOWN,
    Baseline,
    BaselineInvalid,
    dumps,
    load,
    to_data,
)

__all__ = [
    "DEFAULT_WINDOW",
    "FORMAT",
    "UNKNOWN",
    "Baseline",
    "age_days",
    "dumps",
    "load",
    "parse",
    "read",
    "read_at_ref",
    "to_data",
    "write",
]


def write(path: Path, baseline: Baseline) -> None:
    write_text_atomic(path, dumps(baseline))


def parse(text: str, where: str) -> Baseline:
    """The baseline this text holds; a bad one is refused in one line, with its place."""
    from ci_eval.io.jsonpos import parse_json

    # lone surrogates out, as in every JSON we read; NaN/Infinity refused with their place
    data = parse_json(text, where).data
    try:
        return load(data)
    except BaselineInvalid as exc:
        raise InputError(
            exc.message, path=where, json_path=exc.path() if exc.loc else None
        ) from None


def read(path: Path) -> Baseline | None:
    """The baseline, or None when there is none yet (the run then gates on thresholds)."""
    if not path.is_file():
        return None
    try:
        raw = read_regular_file(path, str(path), max_results_bytes())
        return parse(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=str(path)) from None


def age_days(baseline: Baseline) -> float | None:
    date = baseline.provenance.date if baseline.provenance is not None else None
    try:
        made = datetime.fromisoformat(date or "")
    except ValueError:
        return None
    return (datetime.now(UTC) - made).total_seconds() / 86400


def read_at_ref(ref: str, path: str, option: str = "--baseline-ref") -> Baseline | None:
    """The baseline file as it is at a git ref (``git show REF:path``); None if absent there.
    A git failure (say, the repository is owned by another user and not a safe.directory) is
    an InputError with what git said, not "no baseline". ``option`` names the setting."""
    try:
        commit = git.checked("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError as exc:
        raise InputError(f"{option} {ref}: git failed: {exc}") from None
    if commit is None:
        raise InputError(
            f"{option} {ref}: no such commit in this repository (fetch it, "
            "e.g. actions/checkout with fetch-depth: 0)"
        )
    prefix = git.quiet("rev-parse", "--show-prefix") or ""
    try:
        text = git.checked("show", f"{ref}:{prefix}{path}")
    except GitError as exc:
        if "does not exist" in str(exc) or "exists on disk, but not in" in str(exc):
            return None
        raise InputError(f"reading {path} at {ref}: git failed: {exc}") from None
    return None if text is None else parse(text, f"{ref}:{path}")
