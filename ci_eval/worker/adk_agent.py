"""In the agent worker: an ADK agent loaded as ``adk eval`` loads it and its sessions played with
ADK's in-memory runner. Only google-adk and the standard library here: this is what the worker
imports before the first turn, on the run's critical path (ci-eval's models are the trusted
side's)."""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class AgentError(Exception):
    """The agent cannot be loaded or a turn failed: said as the agent's error."""


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
