"""The run's two worker processes, started, asked and stopped by the trusted process (see
:mod:`ci_eval.worker`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ci_eval.worker.client import Request, Worker


class CodeGuard(Protocol):
    """Which workspace files the pull request changed: :class:`ci_eval.metrics.pr_code.
    PullRequestCode`, a layer above the workers (so named here by its shape)."""

    def first_changed(self, paths: Iterable[Path]) -> str | None: ...


__all__ = [
    "MetricsWorker",
    "agent_worker",
    "close",
    "close_metrics",
    "configure",
    "metrics",
    "prestart_agent",
]


class _Setup:
    def __init__(self) -> None:
        self.env: Mapping[str, str] | None = None  # the agent's environment (None: derived)
        self.user: str | None = None  # --agent-user
        self.metrics: MetricsWorker | None = None
        self.agent: tuple[str, Worker, Request] | None = None  # started ahead: module, it, load
        self.lock = threading.Lock()


_SETUP = _Setup()


def configure(env: Mapping[str, str] | None, user: str | None = None) -> None:
    """This run's workers get ``env`` (the agent's environment) and run as ``user``'s choice
    (``--agent-user``); a worker already running is stopped."""
    close()
    _SETUP.env, _SETUP.user = env, user


def _environment() -> dict[str, str]:
    from ci_eval.text import redact

    if _SETUP.env is not None:
        return dict(_SETUP.env)
    return redact.child_environment(os.environ)  # no run configured: still no credentials


def _identity(root: Path):  # type: ignore[no-untyped-def]
    import sys

    from ci_eval.connectors import identity

    env = _environment()
    choice = identity.choose(_SETUP.user, "--agent-user", root, [sys.executable], env.get("PATH"))
    return choice.identity


def start(role: str, on_files=None) -> Worker:  # type: ignore[no-untyped-def]
    from ci_eval.worker.client import Worker

    root = Path.cwd()
    return Worker(role, root, _environment(), _identity(root), on_files)


class MetricsWorker:
    """The run's metrics worker and what its executed files say: ``changed`` is the first
    workspace file it ran that the pull request added or changed (None: none yet)."""

    def __init__(self, guard: CodeGuard | None) -> None:
        self.guard = guard
        self.changed: str | None = None
        self.worker = start("metrics", self._files)

    def _files(self, files: list[str]) -> None:
        if self.changed is None and self.guard is not None:
            self.changed = self.guard.first_changed(Path(f) for f in files)

    def call(self, op: str, timeout: float | None = None, **args: object) -> dict[str, object]:
        return self.worker.call(op, timeout, **args)

    def close(self) -> None:
        self.worker.close()


def metrics(guard: CodeGuard | None = None) -> MetricsWorker:
    """The run's metrics worker, started on first use (``guard`` then decides what changed)."""
    with _SETUP.lock:
        if _SETUP.metrics is None:
            _SETUP.metrics = MetricsWorker(guard)
        elif guard is not None and _SETUP.metrics.guard is None:
            _SETUP.metrics.guard = guard
        return _SETUP.metrics


def prestart_agent(module: str) -> None:
    """Start the agent worker and its import of ``module`` now, while this process loads the
    eval sets: google-adk's import (seconds) overlaps the run's start-up."""
    with _SETUP.lock:
        if _SETUP.agent is None:
            worker = start("agent")
            _SETUP.agent = (module, worker, worker.submit("agent.load", module=module))


def agent_worker(module: str) -> tuple[Worker, Request | None]:
    """A worker for an in-process agent (its connector closes it), and its pending load of
    ``module`` when it was started ahead."""
    with _SETUP.lock:
        ahead, _SETUP.agent = _SETUP.agent, None
    if ahead is not None and ahead[0] == module:
        return ahead[1], ahead[2]
    if ahead is not None:
        ahead[1].close()
    return start("agent"), None


def close_metrics() -> None:
    """Stop the run's metrics worker (a new run's metrics start afresh)."""
    with _SETUP.lock:
        worker, _SETUP.metrics = _SETUP.metrics, None
    if worker is not None:
        worker.close()


def close() -> None:
    """Stop the run's metrics worker, and an agent worker started ahead that no one took."""
    with _SETUP.lock:
        worker, _SETUP.metrics = _SETUP.metrics, None
        ahead, _SETUP.agent = _SETUP.agent, None
    if worker is not None:
        worker.close()
    if ahead is not None:
        ahead[1].close()
