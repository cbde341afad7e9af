"""The trusted side of a worker: starts it isolated and asks it things.

The worker is ci-eval's own interpreter started with ``-I -B`` (no ``PYTHONPATH``, no user
site, not the script's folder on its path, no bytecode written), in the workspace, with the
environment an agent gets (no CI credentials unless ``agent-env`` passes them) and, where
ci-eval is root, as the agent's unprivileged user. Requests from several threads are in flight
at once; each waits for its own answer. Its stderr (the workspace code's prints, a traceback)
is kept, bounded, for the message when it dies.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_eval.io import reaper

if TYPE_CHECKING:
    from ci_eval.connectors.identity import Identity
from ci_eval.worker import protocol

STDERR_KEPT = 64 * 1024  # the last bytes of the worker's stderr kept for a message


class WorkerError(Exception):
    """The worker answered with an error (``kind`` says which), died, or did not answer."""

    def __init__(self, message: str, kind: str = "failure") -> None:
        super().__init__(message)
        self.kind = kind


class Worker:
    """One worker process, started on first use; ``on_files`` sees the workspace files each
    answer says the worker executed (absolute paths)."""

    def __init__(
        self,
        role: str,
        root: Path,
        env: Mapping[str, str],
        identity: Identity | None = None,
        on_files: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.role = role  # "metrics" or "agent": said in messages
        self.root = root.resolve()
        self.env = dict(env)
        self.identity = identity
        self.on_files = on_files
        self._proc: subprocess.Popen[bytes] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._write = threading.Lock()
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._closed = False
        self.token = reaper.new_token()

    # --- the process ---------------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        if self._closed:
            raise WorkerError(f"the {self.role} worker is closed")
        if self._proc is None:
            env = reaper.marked(self.env, self.token)  # what it starts ends with it
            extra: dict[str, Any] = {}
            if self.identity is not None:
                env = self.identity.environment(env)
                extra = self.identity.popen()
            argv = [sys.executable, "-I", "-B", "-m", "ci_eval.worker", str(self.root)]
            try:
                self._proc = subprocess.Popen(
                    argv,
                    cwd=self.root,
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    **extra,
                )
            except OSError as exc:
                raise WorkerError(f"cannot start the {self.role} worker: {exc}") from None
            threading.Thread(target=self._read, daemon=True, name=f"{self.role}-worker").start()
            threading.Thread(target=self._drain, daemon=True, name=f"{self.role}-stderr").start()
        return self._proc

    def _drain(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for chunk in iter(lambda: self._proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_KEPT and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self, lines: int = 3) -> str:
        text = b"".join(self._stderr).decode("utf-8", "replace").strip().splitlines()
        return " | ".join(text[-lines:])

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        why = "it exited"
        try:
            while True:
                line = self._proc.stdout.readline(protocol.MAX_LINE + 1)
                if not line:
                    break
                message = protocol.decode(line)
                with self._lock:
                    future = self._pending.pop(message["id"], None)
                if future is not None:
                    with contextlib.suppress(InvalidStateError):  # aborted meanwhile
                        future.set_result(message)
        except protocol.ProtocolError as exc:
            why = f"it broke the protocol ({exc})"
            self.kill()
        with self._lock:
            pending, self._pending = self._pending, {}
        tail = self.stderr_tail()
        for future in pending.values():
            with contextlib.suppress(InvalidStateError):
                future.set_exception(
                    WorkerError(
                        f"the {self.role} worker stopped: {why}" + (f": {tail}" if tail else "")
                    )
                )

    # --- requests --------------------------------------------------------------------------

    def submit(self, op: str, **args: Any) -> Request:
        """Send ``op``; its answer is :meth:`Request.result`'s (the worker works meanwhile)."""
        with self._lock:
            proc = self._start()
            ident = next(self._ids)
            future: Future[dict[str, Any]] = Future()
            self._pending[ident] = future
        line = protocol.encode({"id": ident, "op": op, "args": args})
        try:
            with self._write:
                assert proc.stdin is not None
                proc.stdin.write(line)
                proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the reader fails the future with what the worker said
        return Request(self, op, ident, future)

    def call(
        self,
        op: str,
        timeout: float | None = None,
        guard: Callable[[Callable[[], None]], Any] | None = None,
        **args: Any,
    ) -> dict[str, Any]:
        """The op's answer; WorkerError for an error answer (its ``kind``), a worker that died,
        or no answer within ``timeout`` seconds. ``guard`` (a turn's ``Deadline.guard``) is
        given a function that stops the wait at once (kind ``aborted``)."""
        return self.submit(op, **args).result(timeout, guard)

    def kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                if not hasattr(os, "killpg"):  # Windows: the process alone
                    raise ProcessLookupError
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()

    def close(self) -> None:
        """Stop the worker (and whatever it started): its stdin closed, then killed."""
        self._closed = True
        proc = self._proc
        if proc is None:
            return
        # nothing it holds is ours to keep: killed at once, not waited for (an interpreter with
        # google-adk loaded takes most of a second to exit)
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        self.kill()
        proc.wait()
        reaper.kill_marked(self.token)
        if self.identity is not None:
            self.identity.close()


@dataclass
class Request:
    """An op sent to a worker, its answer to come."""

    worker: Worker
    op: str
    ident: int
    future: Future[dict[str, Any]]

    def result(
        self,
        timeout: float | None = None,
        guard: Callable[[Callable[[], None]], Any] | None = None,
    ) -> dict[str, Any]:
        op, future, worker = self.op, self.future, self.worker

        def abort() -> None:
            with contextlib.suppress(InvalidStateError):
                future.set_exception(WorkerError(f"{op} aborted", "aborted"))

        try:
            with guard(abort) if guard is not None else contextlib.nullcontext():
                message = future.result(timeout)
        except FutureTimeout:
            with worker._lock:
                worker._pending.pop(self.ident, None)
            raise WorkerError(
                f"the {worker.role} worker gave no answer to {op} in {timeout:g} s"
            ) from None
        files = message.get("files")
        if worker.on_files and isinstance(files, list) and files:
            worker.on_files([str(f) for f in files])
        if "error" in message:
            raise WorkerError(str(message["error"]), str(message.get("kind", "failure")))
        ok = message.get("ok")
        if not isinstance(ok, dict):
            raise WorkerError(f"the {worker.role} worker answered {op} with no result")
        return ok
