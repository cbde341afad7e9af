"""One writer at a time: an exclusive lock around a read-modify-write of a file (the baseline),
held on a lock file in the temporary folder (named for the file's real path, so nothing is
left beside the file for a commit to pick up). ``fcntl.flock`` on POSIX, ``msvcrt.locking``
on Windows; released when the process ends, however it ends."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ci_eval.errors import InputError

WAIT_S = 120.0  # another update of the same file is that slow only when something is wrong


def _try(handle: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


@contextmanager
def exclusive(path: Path, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the lock of ``path`` (waiting up to ``wait_s`` for another holder)."""
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"ci-eval-{key}.lock"
    handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while not _try(handle):
            if time.monotonic() > deadline:
                raise InputError(
                    f"another ci-eval has been updating it for {wait_s:.0f} s; try again",
                    path=str(path),
                )
            time.sleep(0.05)
        yield
    finally:
        os.close(handle)  # closing releases the lock
