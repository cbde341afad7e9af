"""Any executable that speaks ci-eval's contract as JSON lines on stdin/stdout.

One process per case and run: ci-eval starts the command, writes one request line per user
turn and reads one reply line back, then closes stdin (the agent should exit). A process per
case keeps sessions isolated and lets ``--concurrency`` run agents side by side; agents in any
language need nothing but line-buffered JSON I/O. stderr is kept for error messages.

Each agent runs in its own process group (a session on POSIX, a group that ``taskkill /T`` ends
on Windows): a timeout or the end of the case kills the whole tree, so the agent's own children
(a shell wrapper's python, a tool server) are never left behind. Its stdout is read by a thread
(:class:`~ci_eval.connectors.process.PipeReader`), not ``select()``, so the same code runs on
Windows. A turn's deadline is wall clock, whatever the agent does with its stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from ci_eval.connectors import contract
from ci_eval.connectors.base import ActualTurn, AgentError, Features
from ci_eval.connectors.identity import Identity
from ci_eval.connectors.process import PipeReader, kill_tree, parse_command, popen_options
from ci_eval.io import reaper
from ci_eval.model import Content, EvalCase
from ci_eval.net.deadline import Deadline
from ci_eval.text import redact
from ci_eval.text.surrogates import loads as loads_json

MAX_REPLY_LINE = 16 * 1024 * 1024  # bytes; a longer line is an error, not an out-of-memory
_CHUNK = 1024 * 1024
_EXIT_GRACE = 5.0  # seconds an agent gets to exit after its stdin is closed


@dataclass
class CommandConnector(Features):
    # one command line (split by the platform's rules) or one argument per item
    command: str | Sequence[str]
    timeout: float = 60.0
    kind: str = "command"
    # the child's environment (None: ci-eval's own); see redact.child_environment
    env: Mapping[str, str] | None = None
    cwd: str | None = None  # the folder it runs in (None: ci-eval's)
    # the user it runs as (None: ci-eval's own); see ci_eval.connectors.identity
    user: Identity | None = None
    warning: str | None = None  # why it runs as root although ci-eval would rather not
    program: str = field(init=False)
    args: list[str] | str = field(init=False)

    def __post_init__(self) -> None:
        try:
            parsed = parse_command(self.command)
        except ValueError as exc:
            raise AgentError(f"cannot parse the agent command: {exc}") from None
        self.program, self.args = parsed.program, parsed.args

    def verify(self, cases: object = ()) -> None:
        """A missing program is a usage error before any case runs, not an error per case."""
        search = self.env.get("PATH") if self.env is not None else None
        if shutil.which(self.program, path=search) is None:
            separators = {os.sep, os.altsep} - {None}
            where = "file" if any(s in self.program for s in separators) else "program on PATH"
            raise AgentError(f"the agent command `{self.program}` is not an executable {where}")

    def describe(self) -> str:
        shown = self.command if isinstance(self.command, str) else " ".join(self.command)
        return redact.text(f"command agent `{shown}`")

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _CommandSession:
        # kept open for the session's life (closed in close()); a file, so a chatty agent
        # cannot fill a pipe and stall
        stderr = tempfile.TemporaryFile()  # noqa: SIM115
        token = reaper.new_token()  # its descendants' mark: none outlives the case
        env = reaper.marked(dict(os.environ if self.env is None else self.env), token)
        as_user: dict[str, object] = {}
        if self.user is not None:
            env = self.user.environment(os.environ if env is None else env)
            as_user = self.user.popen()
        try:
            process = subprocess.Popen(
                self.args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=0,
                env=env,
                cwd=self.cwd,
                **popen_options(),  # its own process group, killed as one
                **as_user,  # type: ignore[arg-type]
            )
        except OSError as exc:
            stderr.close()
            raise AgentError(f"cannot start `{self.program}`: {exc.strerror or exc}") from None
        assert process.stdout is not None
        reader = PipeReader(process.stdout, _CHUNK)
        return _CommandSession(
            self, eval_set_id, case, run, contract.new_session_id(), process, stderr, reader,
            token,
        )  # fmt: skip

    def close(self) -> None:
        if self.user is not None:
            self.user.close()


@dataclass
class _CommandSession:
    connector: CommandConnector
    eval_set_id: str
    case: EvalCase
    run: int
    session_id: str
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    reader: PipeReader
    token: str  # the mark its descendants carry (reaper)
    turns: int = 0
    traceparent: str | None = None  # the next turn's W3C trace context (--otlp)
    _buffer: bytearray = field(default_factory=bytearray)
    _scanned: int = 0  # bytes of _buffer already searched for a newline

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        """Play one turn by ``deadline`` (wall clock; default: the timeout from now)."""
        self.turns += 1
        deadline = deadline or Deadline(self.connector.timeout)
        request = contract.request(
            self.case, self.eval_set_id, self.run, self.turns, self.session_id, user_content
        )
        if self.traceparent:
            request["traceparent"] = self.traceparent
        assert self.process.stdin is not None
        # the watchdog kills the agent's group at the deadline (or on cancellation), which also
        # unblocks a write to an agent that does not read its stdin
        with deadline.guard(self._kill):
            try:
                self.process.stdin.write(json.dumps(request).encode() + b"\n")
                self.process.stdin.flush()
            except OSError:
                if deadline.expired():
                    raise AgentError(deadline.message()) from None
                raise AgentError(self._exited("before reading the turn", deadline)) from None
            line = self._read_line(deadline)
        try:
            # lone surrogates (a JavaScript agent's cut emoji) become U+FFFD here, at the boundary
            data = loads_json(line)
        except json.JSONDecodeError:
            raise AgentError(f"the agent's reply is not a JSON line: {line[:80]!r}") from None
        except RecursionError:
            raise AgentError("the agent's reply is JSON nested too deeply") from None
        return contract.parse_reply(data)

    def _read_line(self, deadline: Deadline) -> str:
        """One reply line by ``deadline`` (wall clock): an agent that drips bytes without a
        newline fails at the deadline like a silent one."""
        buffer = self._buffer
        # search only the bytes not searched yet: a 10 MB line costs one pass, not one per chunk
        while (end := buffer.find(b"\n", self._scanned)) < 0:
            self._scanned = len(buffer)
            if len(buffer) > MAX_REPLY_LINE:
                self._kill()
                raise AgentError(
                    f"the agent's reply line is longer than {MAX_REPLY_LINE // 2**20} MiB"
                )
            remaining = deadline.remaining()
            if remaining <= 0:
                self._kill()
                raise AgentError(deadline.message())
            # short waits: a grandchild holding stdout open cannot hide the deadline
            chunk = self.reader.get(min(remaining, 0.5))
            if chunk is None:
                continue
            if not chunk:
                if deadline.fired:  # the watchdog killed it
                    raise AgentError(deadline.message())
                raise AgentError(self._exited("without replying", deadline))
            buffer += chunk
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        self._scanned = 0
        return line.decode("utf-8", errors="replace")

    def _exited(self, when: str, deadline: Deadline) -> str:
        """Why the agent stopped talking: its exit code and last stderr line, or, when it closed
        its stdout but keeps running, that (killed at the turn's deadline, not waited for)."""
        try:
            code: int | None = self.process.wait(timeout=deadline.remaining())
        except subprocess.TimeoutExpired:
            code = None
            self._kill()
        if deadline.fired:  # the watchdog killed it at the deadline while we waited
            code = None
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 65536))
        # redacted before it is cut, so no prefix of a secret survives
        text = redact.text(self.stderr.read().decode("utf-8", errors="replace"))
        tail = text[-300:].strip()
        last = tail.splitlines()[-1] if tail else "no stderr"
        if code is None:
            return (
                f"the agent closed its stdout {when} but kept running until the turn's deadline "
                f"({self.connector.timeout:g} s); killed: {last}"
            )
        return f"the agent exited with code {code} {when}: {last}"

    def _kill(self) -> None:
        kill_tree(self.process)

    def close(self) -> None:
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=_EXIT_GRACE)
        except (subprocess.TimeoutExpired, OSError):
            pass
        finally:
            # whatever it started in the background dies with the case, in its group or not
            self._kill()
            reaper.kill_marked(self.token)
            self.reader.stop()
            if self.process.stdout:
                self.process.stdout.close()
            self.stderr.close()
