"""Find eval-set files under the given paths, deterministically.

Patterns are globs matched against the path relative to the directory being scanned; ``**``
crosses directories, and a pattern without ``/`` matches the file name at any depth. Files named
explicitly are always taken. Virtual environments, VCS folders, ``node_modules`` and ADK's own
``.adk/eval_history`` are never entered.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from wcmatch import glob

from ci_eval.errors import InputError

DEFAULT_INCLUDE: tuple[str, ...] = (
    "*.evalset.json",  # ADK, trpc-agent-go
    "*.test.json",  # ADK legacy and AgentEvaluator
    "eval_set*.json",  # agentevals
    "evalset*.json",  # agentevals UI exports
)
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        ".ci-eval",
    }
)
_FLAGS = glob.GLOBSTAR | glob.DOTGLOB


@dataclass(frozen=True)
class Candidate:
    path: Path
    rel: str  # repo-relative (to the working directory) posix path, for reports
    explicit: bool  # named on the command line rather than found by a pattern
    root: Path  # the directory the search started from (sidecars are not looked for above it)
    # named on the command line or with an eval-set file name (*.evalset.json …): such a file
    # that is not an eval set is an error; other JSON a broad --include finds is skipped
    claimed: bool = True


def safe_resolve(path: Path) -> Path:
    """``path.resolve()``, or the absolute path when it cannot be resolved (a symlink loop, a
    name too long): such a file is still listed, and refused with a reason when it is read."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path.absolute()


def display_path(path: Path, base: Path | None = None) -> str:
    base = safe_resolve(base or Path.cwd())
    resolved = safe_resolve(path)
    try:
        return resolved.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _normalise(patterns: tuple[str, ...] | list[str]) -> list[str]:
    return [p if "/" in p else f"**/{p}" for p in patterns]


_DEFAULT_NORMALISED = _normalise(DEFAULT_INCLUDE)


def _skip_dir(dirpath: str, name: str) -> bool:
    if name in SKIP_DIRS:
        return True
    full = os.path.join(dirpath, name)
    if name == "eval_history" and os.path.basename(dirpath) == ".adk":
        return True
    return os.path.isfile(os.path.join(full, "pyvenv.cfg"))  # any virtualenv


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def discover(
    paths: list[Path],
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    base: Path | None = None,
) -> list[Candidate]:
    includes = _normalise(tuple(include) if include else DEFAULT_INCLUDE)
    excludes = _normalise(tuple(exclude or ()))
    found: dict[Path, Candidate] = {}
    for given in paths or [Path(".")]:
        if not _is_dir(given):
            if not os.path.lexists(given):
                raise InputError("no such file or directory", path=str(given))
            # a file, or a FIFO, a device, a symlink loop: the loader says which and refuses it
            key = safe_resolve(given)
            found.setdefault(key, Candidate(given, display_path(given, base), True, given.parent))
            continue
        for dirpath, dirnames, filenames in os.walk(given):
            dirnames[:] = sorted(d for d in dirnames if not _skip_dir(dirpath, d))
            for name in filenames:
                file = Path(dirpath, name)
                rel = file.relative_to(given).as_posix()
                if not glob.globmatch(rel, includes, flags=_FLAGS):
                    continue
                if excludes and glob.globmatch(rel, excludes, flags=_FLAGS):
                    continue
                key = safe_resolve(file)
                claimed = glob.globmatch(rel, _DEFAULT_NORMALISED, flags=_FLAGS)
                found.setdefault(
                    key, Candidate(file, display_path(file, base), False, given, claimed)
                )
    return sorted(found.values(), key=lambda c: c.rel)
