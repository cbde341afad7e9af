"""An ADK agent run in this process with ADK's in-memory runner (extra ``ci-eval[adk]``).

The agent is loaded as ``adk eval`` loads it: ``--agent-module`` names an agent directory
(``path/to/my_agent`` holding ``agent.py`` with ``root_agent``) or an importable module.
"""

from __future__ import annotations

import asyncio
import importlib
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
    module: str
    timeout: float = 60.0
    app_name: str | None = None
    user_id: str | None = None
    kind: str = "adk"
    _agent: Any = field(default=None, init=False)

    def describe(self) -> str:
        return f"in-process ADK agent {self.module}"

    def verify(self, cases: object = ()) -> None:
        """The agent loads before the first case: a misspelled module, an import error in its
        agent.py or a dotted path is one usage error, not an ERROR per case."""
        try:
            self._agent = load_root_agent(self.module)
        except AgentError as exc:
            raise AgentError(f"{exc}{_hint(self.module)}") from None

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _InProcessSession:
        if self._agent is None:
            self._agent = load_root_agent(self.module)
        from google.adk.runners import InMemoryRunner

        si = case.session_input
        app = self.app_name or (si.app_name if si and si.app_name else self._agent.name)
        user = self.user_id or (si.user_id if si and si.user_id else DEFAULT_USER)
        runner = InMemoryRunner(agent=self._agent, app_name=app)
        loop = asyncio.new_event_loop()
        session = loop.run_until_complete(
            runner.session_service.create_session(
                app_name=app,
                user_id=user,
                state=dict(si.state) if si else {},
                session_id=si.session_id if si and si.session_id else None,
            )
        )
        return _InProcessSession(self, runner, loop, user, session.id)

    def close(self) -> None:
        return None


@dataclass
class _InProcessSession:
    connector: AdkInProcessConnector
    runner: Any
    loop: asyncio.AbstractEventLoop
    user: str
    session_id: str

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        from google.genai import types

        message = types.Content.model_validate(
            user_content.model_dump(mode="json", exclude_none=True)
        )

        async def turn() -> list[Any]:
            return [
                event.model_dump(mode="json", by_alias=True, exclude_none=True)
                async for event in self.runner.run_async(
                    user_id=self.user, session_id=self.session_id, new_message=message
                )
            ]

        deadline = deadline or Deadline(self.connector.timeout)
        task = self.loop.create_task(turn())
        try:
            # the watchdog cancels the task on cancellation; the deadline bounds the wait
            with deadline.guard(lambda: self.loop.call_soon_threadsafe(task.cancel)):
                events = self.loop.run_until_complete(
                    asyncio.wait_for(task, max(deadline.remaining(), 0.001))
                )
        except (TimeoutError, asyncio.CancelledError):
            raise AgentError(deadline.message()) from None
        except Exception as exc:  # the agent's own code raised
            raise AgentError(f"the agent raised {type(exc).__name__}: {exc}") from None
        return events_to_turn(scrub_json(events))

    def close(self) -> None:
        self.loop.close()
