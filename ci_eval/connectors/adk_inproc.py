"""An ADK agent run with ADK's in-memory runner (extra ``ci-eval[adk]``), in the agent worker.

The agent is loaded as ``adk eval`` loads it: ``--agent-module`` names an agent directory
(``path/to/my_agent`` holding ``agent.py`` with ``root_agent``) or an importable module.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.connectors.adk_http import DEFAULT_USER
from ci_eval.connectors.base import ActualTurn, AgentError, events_to_turn
from ci_eval.model import Content, EvalCase
from ci_eval.net.deadline import Deadline
from ci_eval.text.surrogates import scrub_json


def load_root_agent(spec: str) -> Any:
    path = Path(spec)
    try:
        if path.is_dir():
            from google.adk.cli.utils.agent_loader import AgentLoader

            return AgentLoader(str(path.resolve().parent)).load_agent(path.resolve().name)
        module = importlib.import_module(spec)
    except ImportError as exc:
        if "google.adk" in str(exc) or getattr(exc, "name", "") == "google":
            raise AgentError("the adk agent needs google-adk: pip install 'ci-eval[adk]'") from None
        raise AgentError(f"cannot import agent {spec!r}: {exc}") from None
    except Exception as exc:  # the user's agent code failed while loading
        raise AgentError(f"cannot load agent {spec!r}: {type(exc).__name__}: {exc}") from None
    agent = getattr(module, "root_agent", None) or getattr(
        getattr(module, "agent", None), "root_agent", None
    )
    if agent is None:
        raise AgentError(f"{spec!r} defines no root_agent")
    return agent


def _hint(spec: str) -> str:
    """What to give instead, when a folder holds what was named as a module."""
    folder = Path(spec.replace(".", "/"))
    if "." in spec and not Path(spec).exists() and (folder / "agent.py").is_file():
        return f" (give the agent's folder: --agent-module {folder})"
    if not Path(spec).exists() and "." not in spec and "/" not in spec:
        return " (give the folder holding agent.py, or an importable module)"
    return ""


@dataclass
class AdkInProcessConnector:
    """``--agent adk``: the agent runs with ADK's in-memory runner in the agent worker
    (:mod:`ci_eval.worker`), never in ci-eval's process, which holds the job's credentials. Its
    events come back as data and are read as an api_server's are."""

    module: str
    timeout: float = 60.0
    app_name: str | None = None
    user_id: str | None = None
    kind: str = "adk"
    _worker: Any = field(default=None, init=False, repr=False)
    _agent_name: str | None = field(default=None, init=False)
    _ids: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    def describe(self) -> str:
        return f"in-process ADK agent {self.module} (in a worker process)"

    def _call(self, op: str, timeout: float | None = None, **args: Any) -> dict[str, Any]:
        from ci_eval.worker.client import WorkerError

        try:
            return self._worker.call(op, timeout, **args)
        except WorkerError as exc:
            raise AgentError(str(exc)) from None

    def verify(self, cases: object = ()) -> None:
        """The agent loads before the first case: a misspelled module, an import error in its
        agent.py or a dotted path is one usage error, not an ERROR per case."""
        if self._worker is None:
            from ci_eval import worker

            self._worker = worker.agent_worker()
        try:
            self._agent_name = str(self._call("agent.load", module=self.module)["name"])
        except AgentError as exc:
            raise AgentError(f"{exc}{_hint(self.module)}") from None

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _WorkerSession:
        if self._agent_name is None:
            self.verify()
        si = case.session_input
        app = self.app_name or (si.app_name if si and si.app_name else self._agent_name)
        user = self.user_id or (si.user_id if si and si.user_id else DEFAULT_USER)
        key = str(next(self._ids))
        self._call(
            "agent.open", key=key, app=app, user=user, state=dict(si.state) if si else {},
            session_id=si.session_id if si and si.session_id else None,
        )  # fmt: skip
        return _WorkerSession(self, key)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


@dataclass
class _WorkerSession:
    connector: AdkInProcessConnector
    key: str

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        from ci_eval.worker.client import WorkerError

        deadline = deadline or Deadline(self.connector.timeout)
        content = user_content.model_dump(mode="json", exclude_none=True)
        worker = self.connector._worker
        try:
            answer = worker.call(
                "agent.send", None, deadline.guard, key=self.key, content=content,
                seconds=max(deadline.remaining(), 0.001),
            )  # fmt: skip
        except WorkerError as exc:
            if exc.kind == "aborted" or deadline.expired():
                raise AgentError(deadline.message()) from None
            raise AgentError(str(exc)) from None
        events = answer.get("events")
        if not isinstance(events, list):
            raise AgentError("the agent worker answered a turn with no list of events")
        return events_to_turn(scrub_json(events))

    def close(self) -> None:
        with contextlib.suppress(AgentError):
            self.connector._call("agent.close", 30.0, key=self.key)


@dataclass
class LocalSession:
    """In the agent worker: one case's session with ADK's in-memory runner."""

    runner: Any
    loop: asyncio.AbstractEventLoop
    user: str
    session_id: str

    @classmethod
    def open(
        cls, agent: Any, app: str | None, user: str, state: dict[str, Any], session_id: str | None
    ) -> LocalSession:
        from google.adk.runners import InMemoryRunner

        app = app or agent.name
        runner = InMemoryRunner(agent=agent, app_name=app)
        loop = asyncio.new_event_loop()
        session = loop.run_until_complete(
            runner.session_service.create_session(
                app_name=app, user_id=user, state=state, session_id=session_id
            )
        )
        return cls(runner, loop, user, session.id)

    def send(self, content: dict[str, Any], timeout: float) -> list[Any]:
        from google.genai import types

        message = types.Content.model_validate(content)

        async def turn() -> list[Any]:
            return [
                event.model_dump(mode="json", by_alias=True, exclude_none=True)
                async for event in self.runner.run_async(
                    user_id=self.user, session_id=self.session_id, new_message=message
                )
            ]

        try:
            return self.loop.run_until_complete(asyncio.wait_for(turn(), timeout))
        except (TimeoutError, asyncio.CancelledError):
            raise AgentError(f"no reply within {timeout:g} s") from None
        except Exception as exc:  # the agent's own code raised
            raise AgentError(f"the agent raised {type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        self.loop.close()
