"""Small helpers for the tests: load a file the way the CLI does, run the CLI."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from ci_eval.cli import main
from ci_eval.load.discover import Candidate
from ci_eval.load.evalsets import FileOutcome, SidecarFinder, load_candidate
from tests.conftest import SAMPLES


def load(path: Path, root: Path | None = None, claimed: bool = True) -> FileOutcome:
    candidate = Candidate(
        path, path.as_posix(), explicit=claimed, root=root or path.parent, claimed=claimed
    )
    return load_candidate(candidate, SidecarFinder())


class _Stream(io.TextIOWrapper):
    """What a pipe gives the process: bytes in UTF-8, read back the way
    ``subprocess.run(text=True)`` reads them (universal newlines)."""

    def __init__(self, errors: str) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)

    def captured(self) -> str:
        self.flush()
        raw = self.buffer.getvalue()  # type: ignore[attr-defined]
        return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline=None).read()


@contextlib.contextmanager
def _cwd(path: Path | None) -> Iterator[None]:
    """In ``path`` (None: where the test is); back where the test was afterwards, whatever the
    run did (the action's entry point enters its working directory)."""
    before = Path.cwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`ci-eval ARGS` in this process (``ci_eval.cli.main``): the exit code, stdout and stderr
    the process would give, in a fraction of the time. ``env`` replaces the environment, as
    for a subprocess."""
    out, err = _Stream("strict"), _Stream("backslashreplace")
    with _cwd(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args), env=env)
    return subprocess.CompletedProcess(["ci-eval", *args], code, out.captured(), err.captured())


def run_process(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """`ci-eval ARGS` as a user runs it: a fresh interpreter, output captured. For the tests
    where the process boundary is the point (signals, the action's entrypoint, start-up)."""
    return subprocess.run(
        [sys.executable, "-m", "ci_eval", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=None if env is None else dict(env),
        timeout=timeout,
    )


WEATHER_AGENT = f"python {SAMPLES / 'agents/weather_agent/command_agent.py'}"


def run_sample_agent(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`ci-eval run ARGS` against the samples' weather agent, a command agent."""
    return run_cli(
        "run", *args, "--agent", "command", "--agent-command", WEATHER_AGENT, cwd=cwd, env=env
    )


def run_replay(
    *args: str, replay: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`ci-eval run ARGS` replaying the recorded conversations in ``replay``."""
    return run_cli("run", *args, "--agent", "replay", "--replay", replay, cwd=cwd, env=env)


def git(cwd: Path, *args: str) -> str:
    """``git ARGS`` in ``cwd`` as a throwaway identity; its output, stripped."""
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
