"""The workspace on an import path: never on the trusted process's, last on the worker's, and
there only as source.

The trusted process (the one holding the job's token and the judge's key) takes every entry
that lies in the workspace off ``sys.path`` when it starts (``python -m ci_eval`` run from the
repository puts the repository first), so that no module it imports later — jinja2, ctypes,
google.adk — can be a file a pull request added.

The worker process appends the workspace after site-packages (an installed module always wins
over a workspace file of the same name) and imports workspace modules from their ``.py``
source only, compiled in memory: a ``__pycache__`` file the pull request committed beside an
unchanged ``.py`` is never read, nothing is written, and a ``.pyc`` or extension module of the
workspace is not importable at all. Every workspace file a worker executes is recorded
(:func:`take_imported`), so that the trusted process compares each with the merge base.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path


def inside(path: str | os.PathLike[str], roots: Iterable[Path]) -> bool:
    """Whether ``path`` (an import path entry; '' is the working directory) is in a root."""
    try:
        resolved = Path(path or ".").resolve()
    except (OSError, RuntimeError):
        return False
    return any(resolved == root or root in resolved.parents for root in roots)


def _environment() -> list[Path]:
    """The interpreter's own installation (its venv, its base): never the workspace's, even
    where a venv lies inside the repository (``.venv``, as ``.ci/run`` makes it)."""
    found = []
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        try:
            found.append(Path(prefix).resolve())
        except (OSError, RuntimeError):
            continue
    return found


def in_workspace(path: str | os.PathLike[str], workspace: Iterable[Path]) -> bool:
    """Whether ``path`` is the workspace's: in one of its roots and not in the interpreter's
    own installation."""
    return inside(path, workspace) and not inside(path, _environment())


def roots(env: dict[str, str] | os._Environ[str] | None = None) -> list[Path]:
    """The workspace: the working directory and GitHub's workspace folder, resolved."""
    env = os.environ if env is None else env
    found = [Path.cwd().resolve()]
    if env.get("GITHUB_WORKSPACE"):
        found.append(Path(env["GITHUB_WORKSPACE"]).resolve())
    return found


def scrub_sys_path(workspace: Iterable[Path] | None = None) -> list[str]:
    """Take every workspace entry off this process's ``sys.path``; returns those removed. The
    modules already imported from there (ci-eval itself, run from its own checkout) keep
    their packages' paths."""
    where = list(roots() if workspace is None else workspace)
    removed = [entry for entry in sys.path if in_workspace(entry, where)]
    sys.path[:] = [entry for entry in sys.path if entry not in removed]
    sys.path_importer_cache.clear()
    return removed


# --- the worker's side ------------------------------------------------------------------------

_imported: list[str] = []  # workspace files executed, in order, not yet taken
_seen: set[str] = set()
_lock = threading.Lock()


def _record(path: str) -> None:
    with _lock:
        if path not in _seen:
            _seen.add(path)
            _imported.append(path)


def take_imported() -> list[str]:
    """The workspace files executed since the last call (absolute paths)."""
    with _lock:
        taken = list(_imported)
        _imported.clear()
    return taken


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A workspace module from its source: compiled here, never from or into ``__pycache__``."""

    def get_code(self, fullname: str):  # type: ignore[no-untyped-def]
        path = self.get_filename(fullname)
        _record(path)
        return compile(self.get_data(path), path, "exec", dont_inherit=True)

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        return None  # no bytecode written for workspace code


def install(root: Path) -> None:
    """In the worker: the workspace last on ``sys.path``, imported as source only."""
    root = root.resolve()
    sys.dont_write_bytecode = True

    def hook(entry: str) -> importlib.machinery.FileFinder:
        if not in_workspace(entry, [root]):
            raise ImportError("not the workspace")  # the next hook takes it
        return importlib.machinery.FileFinder(entry, (SourceOnlyLoader, [".py"]))

    sys.path_hooks.insert(0, hook)
    sys.path[:] = [e for e in sys.path if not in_workspace(e, [root])] + [str(root)]
    sys.path_importer_cache.clear()
