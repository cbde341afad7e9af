"""Nothing an agent starts survives its case, not even what left its process group.

A process group is killed as one, but a child may start a session of its own (``setsid``) and
leave the group. So every agent process (a command agent, a worker) is started with a mark in
its environment, ``CI_EVAL_AGENT=<token>``, that its descendants inherit; when its case ends,
every process carrying that token is killed (Linux: read from ``/proc/<pid>/environ``, which
ci-eval may read of its own user's processes and, as root, of all). And ci-eval started as a
program becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``): a descendant whose parent dies
is its child then, not init's, so one that also cleared its environment is still found — and
killed — when ci-eval exits. Where there is no ``/proc`` (macOS, Windows) only the process
group is killed, and the run says so once.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

MARK = "CI_EVAL_AGENT"
PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


def available() -> bool:
    """Whether processes can be found by their mark here (Linux's /proc)."""
    return sys.platform.startswith("linux") and _PROC.is_dir()


def unavailable_warning() -> str | None:
    """What to say once where a process that left its group could outlive its case."""
    if available():
        return None
    return (
        "processes an agent starts in a session of its own (setsid) are not found on this "
        "platform (no /proc): only the agent's process group is killed when its case ends"
    )


def new_token() -> str:
    return secrets.token_hex(12)


def marked(env: dict[str, str], token: str) -> dict[str, str]:
    """``env`` with the agent's mark."""
    return {**env, MARK: token}


def _carries(pid: int, needle: bytes) -> bool:
    try:
        with open(_PROC / str(pid) / "environ", "rb") as handle:
            data = handle.read(1 << 20)
    except OSError:  # gone, or not ours to read
        return False
    return needle in data.split(b"\0")


def kill_marked(token: str) -> int:
    """Kill every process carrying ``token`` (and so everything it started); how many."""
    if not available():
        return 0
    needle = f"{MARK}={token}".encode()
    # a process that forks while it is being killed: look again
    return _kill_until_none(
        lambda: [pid for pid in _pids() if pid != os.getpid() and _carries(pid, needle)], 3
    )


def _kill_until_none(find: Callable[[], list[int]], rounds: int, pause: float = 0.0) -> int:
    """SIGKILL what ``find`` finds, again until it finds nothing (at most ``rounds`` times);
    how many processes."""
    killed: set[int] = set()
    for _ in range(rounds):
        found = find()
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(pause)
    return len(killed)


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def become_subreaper() -> bool:
    """ci-eval adopts its orphaned descendants (Linux); False where it cannot."""
    if not available():
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)  # this process's symbols: libc's prctl
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def kill_adopted() -> int:
    """At exit: kill every child left (with a subreaper, the orphans it adopted); how many."""
    if not available():
        return 0
    me = str(os.getpid())

    def children() -> list[int]:
        # "state ppid ..." after the command's name; zombies are not waited for here (a Popen
        # elsewhere reaps its own child; the rest, at exit)
        return [p for p in _pids() if (f := _fields(p))[1:2] == [me] and f[0] != "Z"]

    # a killed orphan's own children are adopted next: again
    return _kill_until_none(children, 10, pause=0.01)


def _fields(pid: int) -> list[str]:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return []
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    return stat.rpartition(")")[2].split()
