"""Reading a file a user or a repository gave us: a regular file of sane size, or an
``InputError`` naming it. Never blocks on a FIFO or a device, never fills the memory."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ci_eval.errors import InputError

MAX_FILE_MB_ENV = "CI_EVAL_MAX_FILE_MB"
DEFAULT_MAX_FILE_MB = 50.0


def max_file_bytes() -> int:
    """The size limit for any JSON file ci-eval reads: 50 MB, or ``CI_EVAL_MAX_FILE_MB``."""
    raw = os.environ.get(MAX_FILE_MB_ENV)
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0 < value < float("inf"):
            raise InputError(f"{MAX_FILE_MB_ENV}={raw!r}: give the limit in MB, a positive number")
        return int(value * 1_000_000)
    return int(DEFAULT_MAX_FILE_MB * 1_000_000)


#: Results files (and the baseline) are ci-eval's own output and grow with the suite, to
#: many times an eval set's size. They get this many times the eval-set limit.
RESULTS_LIMIT_FACTOR = 20


def max_results_bytes() -> int:
    """The size limit for results files and the baseline: 20 × :func:`max_file_bytes`."""
    return max_file_bytes() * RESULTS_LIMIT_FACTOR


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink loop (or too many levels of symlinks)"
    if exc.errno == errno.ENAMETOOLONG:
        return "the file name is too long for this system"
    if exc.errno == errno.ENOENT:
        return "no such file (a dangling symlink?)"
    return exc.strerror or str(exc)


def read_regular_file(file: Path, shown: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (default :func:`max_file_bytes`);
    anything else is an InputError naming the file. Never blocks on a FIFO or a device."""
    limit = max_file_bytes() if limit is None else limit
    try:
        before = os.stat(file)
    except OSError as exc:
        raise InputError(f"cannot read file: {_os_reason(exc)}", path=shown) from None
    except ValueError:  # an embedded NUL
        raise InputError("cannot read file: the name holds a NUL byte", path=shown) from None
    if not stat.S_ISREG(before.st_mode):
        raise InputError(
            f"{_kind(before.st_mode)}, not a regular file; ci-eval reads only regular files",
            path=shown,
        )
    too_big = InputError(
        f"the file is over the size limit of {limit / 1e6:g} MB; raise it with "
        f"{MAX_FILE_MB_ENV} (in MB; results files and the baseline get "
        f"{RESULTS_LIMIT_FACTOR}×) if this file really is meant to be read",
        path=shown,
    )
    if before.st_size > limit:
        raise too_big
    try:
        # O_NONBLOCK: if the file was swapped for a FIFO since the stat, open must not hang
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read file: {_os_reason(exc)}", path=shown) from None
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):
            raise InputError(
                f"{_kind(after.st_mode)}, not a regular file; ci-eval reads only regular files",
                path=shown,
            )
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > limit:  # it grew after the stat
                raise too_big
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read file: {_os_reason(exc)}", path=shown) from None
    finally:
        os.close(fd)


def names_ending(folder: Path, suffix: str | tuple[str, ...]) -> list[str]:
    """The names in ``folder`` ending with ``suffix`` (not hidden ones, as a glob of
    ``*suffix`` finds them), in one listing; none when it cannot be listed. A caller keeps them
    per folder: a glob per eval set lists a folder of 10,000 files 10,000 times."""
    try:
        with os.scandir(folder) as entries:
            return [e.name for e in entries if e.name.endswith(suffix) and e.name[:1] != "."]
    except OSError:
        return []
