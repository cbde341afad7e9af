"""Find eval-set files under the given paths, deterministically.

Two ways in. Inside an *eval folder* (any folder whose name starts with ``eval``: ``eval/``,
``evals/``, ``evaluation/``, ``eval_data/``, ``evalsets/``, ``tests/eval/`` …, counted from the
repository root) every ``*.json`` is a candidate and is recognised by its content, because ADK
users name their sets anything (``support_eval.json``, ``gold_set.json``). Elsewhere a file must
match a name pattern. Patterns are globs matched against the path relative to the directory
being scanned; ``**`` crosses directories, and a pattern without ``/`` matches the file name at
any depth. An explicit ``--include`` replaces both. Files named explicitly are always taken.
Virtual environments, VCS folders, ``node_modules`` and ADK's own ``.adk/eval_history`` are
never entered. JSON files that are not candidates are reported (``Ignored``) so that a set that
was not looked at is never silent. A candidate is an error when it is not an eval set only if it
is named explicitly or with an eval-set name (``*.evalset.json``, ``*.test.json``) or some
dialect recognises it (a broken set); other JSON is skipped, and the run says which in one line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io.files import repo_root, safe_resolve
from ci_eval.load.patterns import DEFAULT_INCLUDE

# the names only an eval set has: such a file that is not one is an error. agentevals' prefixes
# also start other files' names (eval_set_results.json, evalset_notes.json), so a file they
# find is recognised by its content, as in an eval folder
CLAIMING_NAMES: tuple[str, ...] = ("*.evalset.json", "*.test.json")
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


def _globmatch(rel: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """``**`` and dot-files matched as the README says. wcmatch is imported here, on the first
    match, so that commands that never discover (``--help`` among them) do not load it."""
    from wcmatch import glob

    return bool(glob.globmatch(rel, patterns, flags=glob.GLOBSTAR | glob.DOTGLOB))


@dataclass(frozen=True)
class Candidate:
    path: Path
    rel: str  # repo-relative (to the working directory) posix path, for reports
    explicit: bool  # named on the command line rather than found by a pattern
    root: Path  # the directory the search started from (sidecars are not looked for above it)
    # named on the command line or with an eval-set file name (CLAIMING_NAMES): such a file
    # that is not an eval set is an error; other JSON a pattern or an eval folder finds is an
    # error only when some dialect recognises it, else skipped with its reason
    claimed: bool = True


@dataclass(frozen=True)
class Ignored:
    """A JSON file discovery did not examine, and why."""

    rel: str
    reason: str


@dataclass
class Discovery:
    candidates: list[Candidate]
    ignored: list[Ignored]


def is_eval_folder_name(name: str) -> bool:
    return name.lower().startswith("eval")


def _base_parts(given: Path) -> tuple[str, ...]:
    """The folder names from the repository root (else the working directory) down to
    ``given``: an eval folder above the searched directory still makes it one."""
    resolved = safe_resolve(given)
    for root in (repo_root(resolved), safe_resolve(Path.cwd())):
        if root is not None and (resolved == root or root in resolved.parents):
            return resolved.relative_to(root).parts
    return (resolved.name,)


def display_path(path: Path, base: Path | None = None) -> str:
    base = safe_resolve(base or Path.cwd())
    resolved = safe_resolve(path)
    try:
        return resolved.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _normalise(patterns: tuple[str, ...] | list[str]) -> list[str]:
    return [p if "/" in p else f"**/{p}" for p in patterns]


_CLAIMING_NORMALISED = _normalise(CLAIMING_NAMES)


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
    return discover_all(paths, include, exclude, base).candidates


def discover_all(
    paths: list[Path],
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    base: Path | None = None,
) -> Discovery:
    """Candidates to load, and the JSON files passed over with the reason."""
    includes = _normalise(tuple(include) if include else DEFAULT_INCLUDE)
    by_content = not include  # eval folders are read by content unless --include narrows
    excludes = _normalise(tuple(exclude or ()))
    found: dict[Path, Candidate] = {}
    ignored: dict[Path, Ignored] = {}
    for given in paths or [Path(".")]:
        if not _is_dir(given):
            if not os.path.lexists(given):
                raise InputError("no such file or directory", path=str(given))
            # a file, or a FIFO, a device, a symlink loop: the loader says which and refuses it
            key = safe_resolve(given)
            found.setdefault(key, Candidate(given, display_path(given, base), True, given.parent))
            continue
        base_in_eval = any(is_eval_folder_name(p) for p in _base_parts(given))
        for dirpath, dirnames, filenames in os.walk(given):
            dirnames[:] = sorted(d for d in dirnames if not _skip_dir(dirpath, d))
            rel_dir = Path(dirpath).relative_to(given)
            in_eval = by_content and (
                base_in_eval or any(is_eval_folder_name(p) for p in rel_dir.parts)
            )
            for name in filenames:
                file = Path(dirpath, name)
                rel = file.relative_to(given).as_posix()
                key = safe_resolve(file)
                if excludes and _globmatch(rel, excludes):
                    if name.endswith(".json"):
                        ignored.setdefault(key, Ignored(display_path(file, base), "--exclude"))
                    continue
                if _globmatch(rel, includes):
                    claimed = _globmatch(rel, _CLAIMING_NORMALISED)
                elif in_eval and name.endswith(".json"):
                    claimed = False  # recognised by content, skipped with a reason if not a set
                else:
                    if name.endswith(".json"):
                        ignored.setdefault(
                            key,
                            Ignored(
                                display_path(file, base),
                                "name matches no pattern and no folder on its path starts "
                                "with 'eval' (--include '*.json' to read it)",
                            ),
                        )
                    continue
                found.setdefault(
                    key, Candidate(file, display_path(file, base), False, given, claimed)
                )
    return Discovery(
        sorted(found.values(), key=lambda c: c.rel),
        sorted((i for k, i in ignored.items() if k not in found), key=lambda i: i.rel),
    )
