"""An agent's process on any runner OS: its command split as that platform splits a command
line, started so that it and everything it starts are killed as one, and its output read
without ``select()``, which on Windows takes sockets only, never pipes.

Each platform's primitive is chosen by a ``windows`` argument (default: this platform), so the
Windows paths run in tests on any OS with the primitive stubbed.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

WINDOWS = os.name == "nt"
# subprocess's own constant exists only on Windows; its value is the Win32 flag
CREATE_NEW_PROCESS_GROUP = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x00000200)
_PYTHONS = ("python", "python3", "python.exe", "python3.exe")
_KILL_TIMEOUT = 10.0  # seconds taskkill may take


@dataclass(frozen=True)
class Command:
    """``program`` is what must exist (checked before any case); ``args`` is what the process
    is started with: an argument list, or on Windows a command line given as one string, which
    Windows hands to the program for it to split (as its own C runtime does)."""

    program: str
    args: list[str] | str


def parse_command(
    command: str | Sequence[str], windows: bool = WINDOWS, python: str = sys.executable
) -> Command:
    """A command given as a list is one argument per item; as a string, it is split by the
    platform's rules: POSIX shell words, or on Windows the program is the first (possibly
    quoted) word and the rest is passed as written, so ``C:\\tools\\agent.exe`` keeps its
    backslashes. ``python`` and ``python3`` become the interpreter ci-eval runs under: in a
    venv or a CI image ``python`` may be absent. Raises ValueError for an unbalanced quote or
    an empty command."""
    if not isinstance(command, str):
        argv = [str(a) for a in command]
        if not argv or not argv[0]:
            raise ValueError("the agent command is empty")
        if argv[0] in _PYTHONS:
            argv[0] = python
        return Command(argv[0], argv)  # Popen quotes a list for Windows itself
    if not windows:
        argv = shlex.split(command)
        return parse_command(argv, windows=False, python=python) if argv else _empty()
    program, rest = _windows_program(command)
    if not program:
        return _empty()
    if program.lower() in _PYTHONS:
        program = python
    return Command(program, subprocess.list2cmdline([program]) + rest)


def _empty() -> Command:
    raise ValueError("the agent command is empty")


def _windows_program(line: str) -> tuple[str, str]:
    """The program of a Windows command line as CreateProcess finds it: up to the closing
    quote when it starts with one, else up to the first space or tab; and the rest as is."""
    line = line.lstrip(" \t")
    if line.startswith('"'):
        end = line.find('"', 1)
        if end < 0:
            raise ValueError("No closing quotation")
        return line[1:end], line[end + 1 :]
    for i, char in enumerate(line):
        if char in " \t":
            return line[:i], line[i:]
    return line, ""


def popen_options(windows: bool = WINDOWS) -> dict[str, Any]:
    """Its own process group, so the whole tree can be killed: a new session on POSIX, a new
    process group on Windows (and taskkill /T finds the tree)."""
    if windows:
        return {"creationflags": CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_tree(process: subprocess.Popen[bytes], windows: bool = WINDOWS) -> None:
    """Kill the process and every process it started (a shell wrapper's python, a tool
    server), then reap it."""
    if windows:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(process.pid)],
                capture_output=True,
                timeout=_KILL_TIMEOUT,
                check=False,
            )
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
    process.wait()


class PipeReader:
    """A thread that reads a pipe in chunks into a small bounded queue: the reader waits on the
    queue with a timeout on every OS, and an agent that writes faster than ci-eval reads is
    held back by the queue (at most ``depth`` chunks) as a full pipe would hold it back.
    An empty chunk is the end of the stream."""

    def __init__(self, stream: IO[bytes], chunk: int, depth: int = 4) -> None:
        self._stream = stream
        self._chunk = chunk
        self._chunks: queue.Queue[bytes] = queue.Queue(maxsize=depth)
        self._stopped = threading.Event()
        self._ended = False
        self._thread = threading.Thread(target=self._run, name="ci-eval agent stdout", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                data = self._stream.read(self._chunk) or b""
            except (OSError, ValueError):  # closed under us
                data = b""
            while not self._stopped.is_set():
                try:
                    self._chunks.put(data, timeout=0.5)
                    break
                except queue.Full:
                    continue
            if not data:
                return

    def get(self, timeout: float) -> bytes | None:
        """The next chunk; b"" once the stream has ended; None when nothing came in time."""
        if self._ended:
            return b""
        try:
            data = self._chunks.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        self._ended = not data
        return data

    def stop(self) -> None:
        """Stop reading (after the process is killed, the stream ends and the thread returns)."""
        self._stopped.set()
        self._thread.join(timeout=1.0)
