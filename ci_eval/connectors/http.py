"""Any agent behind an HTTP endpoint that speaks ci-eval's JSON contract (see contract.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ci_eval.connectors.base import ActualTurn, AgentError, Features
from ci_eval.model import Content, EvalCase
from ci_eval.net.client import make_session
from ci_eval.net.deadline import Deadline
from ci_eval.net.http import HttpError, HttpSettings, post_json
from ci_eval.text import redact

if TYPE_CHECKING:
    from ci_eval.net.client import Client


def post(
    session: Client,
    url: str,
    body: Any,
    http: HttpSettings,
    deadline: Deadline | None = None,
    traceparent: str | None = None,
) -> tuple[Any, int]:
    """``post_json`` to an agent: a failed request is the agent's failure (AgentError). With
    ``traceparent`` (``--otlp``), the request carries the turn's W3C trace context."""
    headers = {"traceparent": traceparent} if traceparent else None
    try:
        return post_json(session, url, body, http.timeout, http.retries, deadline, headers)
    except HttpError as exc:
        raise AgentError(str(exc), exc.retries) from None


@dataclass
class HttpConnector(Features):
    url: str
    http: HttpSettings
    kind: str = "http"

    def __post_init__(self) -> None:
        self._session = make_session(self.http)

    def describe(self) -> str:
        return redact.text(f"HTTP agent at {self.url}")

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _HttpSession:
        # the contract's models load with this connector, not with adk-http's use of post()
        from ci_eval.connectors import contract

        return _HttpSession(self, eval_set_id, case, run, contract.new_session_id())

    def close(self) -> None:
        self._session.close()


@dataclass
class _HttpSession:
    connector: HttpConnector
    eval_set_id: str
    case: EvalCase
    run: int
    session_id: str
    turns: int = 0
    traceparent: str | None = None  # the next turn's W3C trace context (--otlp)

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        from ci_eval.connectors import contract

        self.turns += 1
        c = self.connector
        body = contract.request(
            self.case, self.eval_set_id, self.run, self.turns, self.session_id, user_content
        )
        data, retries = post(c._session, c.url, body, c.http, deadline, self.traceparent)
        turn = contract.parse_reply(data)
        turn.retries = retries
        return turn

    def close(self) -> None:
        return None
