"""An ADK agent run with ADK's in-memory runner (extra ``ci-eval[adk]``), in the agent worker.

The agent is loaded as ``adk eval`` loads it: ``--agent-module`` names an agent directory
(``path/to/my_agent`` holding ``agent.py`` with ``root_agent``) or an importable module.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.connectors.adk_http import DEFAULT_USER
from ci_eval.connectors.base import ActualTurn, AgentError, Features, events_to_turn
from ci_eval.model import Content, EvalCase
from ci_eval.net.deadline import Deadline
from ci_eval.text.surrogates import scrub_json


def _hint(spec: str) -> str:
    """What to give instead, when a folder holds what was named as a module."""
    folder = Path(spec.replace(".", "/"))
    if "." in spec and not Path(spec).exists() and (folder / "agent.py").is_file():
        return f" (give the agent's folder: --agent-module {folder})"
    if not Path(spec).exists() and "." not in spec and "/" not in spec:
        return " (give the folder holding agent.py, or an importable module)"
    return ""


@dataclass
class AdkInProcessConnector(Features):
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
        from ci_eval.worker.client import WorkerError

        pending = None
        if self._worker is None:
            from ci_eval.worker import processes as worker

            self._worker, pending = worker.agent_worker(self.module)
        try:
            loaded = (pending or self._worker.submit("agent.load", module=self.module)).result()
        except WorkerError as exc:
            raise AgentError(f"{exc}{_hint(self.module)}") from None
        self._agent_name = str(loaded["name"])

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
