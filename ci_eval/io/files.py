"""Writing the files other steps read (reports, results, the baseline): atomically and readable.

Atomic: a temp file in the same directory, then a rename, so a reader sees the old file or the
new one, never half of either. Readable: ``mkstemp`` creates 0600 files; in the Docker action
the container runs as root and the runner's later steps (upload-artifact, a JUnit reporter) run
as another user, so a 0600 file is unreadable to them. The final file gets the mode an ordinary
``open(path, "w")`` would give it: the existing file's mode when replacing one, else 0666 minus
the umask (0644 under the usual 022).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from ci_eval.text import redact
from ci_eval.text.inert import inert_json
from ci_eval.text.surrogates import scrub


def current_umask() -> int:
    """The process umask, read without changing it where the system says it (Linux 4.7+);
    elsewhere set and restored at once."""
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii") as status,
    ):
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def _replace(path: Path, write: Callable[[TextIO], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            write(handle)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """``text`` (UTF-8, lone surrogates scrubbed: one reply must not lose a report) to ``path``
    through a temp file in the same directory and a rename, with normal permissions. Creates
    missing parent directories; the temp file never outlives a failure. Raises OSError."""
    _replace(path, lambda handle: handle.write(redact.text(scrub(text))))  # and no secret


def write_parts_atomic(path: Path, parts: Iterable[str]) -> None:
    """The concatenation of ``parts`` as :func:`write_text_atomic` writes text, piece by piece
    (a large report is never one string, nor its redacted and encoded copies). Each piece must
    be whole as far as secrets go: a value is never split between two pieces."""

    def write(handle: TextIO) -> None:
        for part in parts:
            handle.write(redact.text(scrub(part)))

    _replace(path, write)


class _Inert:
    """A handle that scrubs and defangs each piece on its way (pieces are whole JSON tokens)."""

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle

    def write(self, text: str) -> None:
        # redacted piece by piece: a string token is never split between pieces
        self.handle.write(inert_json(redact.text(scrub(text))))


def write_json_atomic(path: Path, data: Any, sort_keys: bool = False) -> None:
    """``json.dump(indent=2)``'s text and a final newline, as :func:`write_text_atomic` writes
    text, streamed in pieces (a large results file is never one string in memory); no lone
    surrogate, and no line of it can be read as a CI service message."""
    from ci_eval.io import jsonwrite

    def write(handle: TextIO) -> None:
        # strict: NaN/Infinity become null, as strict JSON parsers (jq) require
        jsonwrite.dump(data, _Inert(handle), sort_keys=sort_keys, strict=True)  # type: ignore[arg-type]
        handle.write("\n")

    _replace(path, write)


def safe_resolve(path: Path) -> Path:
    """``path.resolve()``, or the absolute path when it cannot be resolved (a symlink loop, a
    name too long): such a file is still listed, and refused with a reason when it is read."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path.absolute()


def repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or a file in a
    worktree or submodule)."""
    current = safe_resolve(start)
    if current.is_file():
        current = current.parent
    for folder in (current, *current.parents):
        if (folder / ".git").exists():
            return folder
    return None
