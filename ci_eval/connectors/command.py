"""Any executable that speaks ci-eval's contract as JSON lines on stdin/stdout.

One process per case and run: ci-eval starts the command, writes one request line per user
turn and reads one reply line back, then closes stdin (the agent should exit). A process per
case keeps sessions isolated and lets ``--concurrency`` run agents side by side; agents in any
language need nothing but line-buffered JSON I/O. stderr is kept for error messages.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO

from ci_eval import redact
from ci_eval.connectors import contract
from ci_eval.connectors.base import ActualTurn, AgentError
from ci_eval.model import Content, EvalCase


@dataclass
class CommandConnector:
    command: str
    timeout: float = 60.0
    kind: str = "command"
    # the child's environment (None: ci-eval's own); see redact.child_environment
    env: Mapping[str, str] | None = None
    argv: list[str] = field(init=False)

    def __post_init__(self) -> None:
        try:
            self.argv = shlex.split(self.command)
        except ValueError as exc:
            raise AgentError(f"cannot parse the agent command: {exc}") from None
        if not self.argv:
            raise AgentError("the agent command is empty")
        if self.argv[0] in ("python", "python3"):
            # the interpreter ci-eval runs under: in a venv or a CI image "python" may be absent
            self.argv[0] = sys.executable
        # a missing program is a usage error before any case runs, not an error per case
        search = self.env.get("PATH") if self.env is not None else None
        if shutil.which(self.argv[0], path=search) is None:
            where = "file" if os.sep in self.argv[0] else "program on PATH"
            raise AgentError(f"the agent command `{self.argv[0]}` is not an executable {where}")

    def describe(self) -> str:
        return redact.text(f"command agent `{self.command}`")

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _CommandSession:
        # kept open for the session's life (closed in close()); a file, so a chatty agent
        # cannot fill a pipe and stall
        stderr = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=0,
                env=None if self.env is None else dict(self.env),
            )
        except OSError as exc:
            stderr.close()
            raise AgentError(f"cannot start `{self.argv[0]}`: {exc.strerror or exc}") from None
        return _CommandSession(
            self, eval_set_id, case, run, contract.new_session_id(), process, stderr
        )

    def close(self) -> None:
        return None


@dataclass
class _CommandSession:
    connector: CommandConnector
    eval_set_id: str
    case: EvalCase
    run: int
    session_id: str
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    turns: int = 0
    _buffer: bytes = b""

    def send(self, user_content: Content) -> ActualTurn:
        self.turns += 1
        request = contract.request(
            self.case, self.eval_set_id, self.run, self.turns, self.session_id, user_content
        )
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise AgentError(self._exited("before reading the turn")) from None
        line = self._read_line(self.connector.timeout)
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            raise AgentError(f"the agent's reply is not a JSON line: {line[:80]!r}") from None
        return contract.parse_reply(data)

    def _read_line(self, timeout: float) -> str:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    self._kill()
                    raise AgentError(f"no reply within {timeout:g} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise AgentError(self._exited("without replying"))
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def _exited(self, when: str) -> str:
        code = self.process.wait(timeout=5)
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 65536))
        # redacted before it is cut, so no prefix of a secret survives
        text = redact.text(self.stderr.read().decode("utf-8", errors="replace"))
        tail = text[-300:].strip()
        last = tail.splitlines()[-1] if tail else "no stderr"
        return f"the agent exited with code {code} {when}: {last}"

    def _kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def close(self) -> None:
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=5)
        except (subprocess.TimeoutExpired, OSError):
            self._kill()
        finally:
            if self.process.stdout:
                self.process.stdout.close()
            self.stderr.close()
