"""Google ADK's ``adk api_server``: a session per case, ``POST /run`` per user turn."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import quote

from ci_eval.connectors.base import (
    ActualTurn,
    AgentError,
    AgentUnreachable,
    Features,
    events_to_turn,
)
from ci_eval.connectors.http import post
from ci_eval.model import Content, EvalCase
from ci_eval.net.client import make_session
from ci_eval.net.deadline import Deadline
from ci_eval.net.http import HttpSettings
from ci_eval.text import redact

DEFAULT_USER = "test_user_id"  # what ADK's eval service uses when session_input has none


@dataclass
class AdkHttpConnector(Features):
    base_url: str
    http: HttpSettings
    app_name: str | None = None
    user_id: str | None = None
    kind: str = "adk-http"
    # a session is a request to the server: the runner opens the next cases' while turns run
    opens_ahead: ClassVar[bool] = True

    served: list[str] | None = None  # the apps the server said it serves (verify)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        self._session = make_session(self.http)

    def verify(self, cases: Iterable[EvalCase] = ()) -> None:
        """Before the first case: the server answers ``GET /list-apps`` as an api_server does,
        serves the app named, and one app is known for every case (the only one it serves,
        when none is named)."""
        self.served = apps = list_apps(self.base_url, self.http)
        listed = ", ".join(apps) or "none"
        if self.app_name is not None:
            if self.app_name not in apps:
                raise AgentError(
                    f"app {self.app_name!r} is not served at {redact.text(self.base_url)}; "
                    f"it serves: {listed} (set --app-name to one of them)"
                )
            return
        named = {c.session_input.app_name for c in cases if c.session_input}
        unknown = sorted(n for n in named - set(apps) if n)
        if len(apps) == 1:
            return  # a case naming no app, or another, gets the one there is
        if unknown or None in named or "" in named or not named:
            raise AgentError(
                f"no app name for every case: {redact.text(self.base_url)} serves {listed}; "
                "give --app-name"
                + (
                    f" (the cases name {', '.join(unknown)}, which it does not serve)"
                    if unknown
                    else ""
                )
            )

    def describe(self) -> str:
        app = f", app {self.app_name}" if self.app_name else ""
        return redact.text(f"ADK api_server at {self.base_url}{app}")

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _AdkHttpSession:
        si = case.session_input
        app = self.app_name or (si.app_name if si and si.app_name else None)
        if self.served is not None and len(self.served) == 1 and app not in self.served:
            app = self.served[0]  # the only app the server has
        if not app:
            raise AgentError("no app name: give --app-name or session_input.app_name")
        user = self.user_id or (si.user_id if si and si.user_id else DEFAULT_USER)
        state = dict(si.state) if si else {}
        url = f"{self.base_url}/apps/{quote(app, safe='')}/users/{quote(user, safe='')}/sessions"
        request: dict[str, object] = {"state": state}
        if si and si.session_id:
            # a fixed id may only be used once per server; runs after the first get their own
            request["session_id"] = si.session_id if run == 1 else f"{si.session_id}-run{run}"
        body, _ = post(self._session, url, request, self.http)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise AgentError(f"POST {url}: the answer has no session id")
        return _AdkHttpSession(self, app, user, body["id"])

    def close(self) -> None:
        self._session.close()


def list_apps(base_url: str, http: HttpSettings) -> list[str]:
    """The apps an api_server serves (``GET /list-apps``); AgentError, one line saying what to
    check, when something else answers there or the URL is not one (a usage error), and
    AgentUnreachable when nothing answers (as an ``http`` agent that never answers is: an
    infrastructure error)."""
    from requests.exceptions import InvalidSchema, InvalidURL, MissingSchema, URLRequired

    from ci_eval.net.http import failure_reason, make_requests_session

    url = f"{base_url}/list-apps"
    shown = redact.text(url)
    session = make_requests_session(http)
    try:
        response = session.get(url, timeout=(min(http.timeout, 10.0), http.timeout))
    except (InvalidSchema, InvalidURL, MissingSchema, URLRequired) as exc:
        raise AgentError(
            f"--agent-url {redact.text(base_url)}: not a URL an ADK api_server can have "
            f"({type(exc).__name__}), e.g. http://127.0.0.1:8000"
        ) from None
    except Exception as exc:  # connection refused, DNS, TLS: the URL or the server
        raise AgentUnreachable(
            f"cannot reach an ADK api_server at {redact.text(base_url)} "
            f"({failure_reason(exc)}): is it running, and is --agent-url its address?"
        ) from None
    finally:
        session.close()
    try:
        apps = response.json() if response.ok else None
    except ValueError:
        apps = None
    if not isinstance(apps, list) or not all(isinstance(a, str) for a in apps):
        raise AgentError(
            f"GET {shown} answered HTTP {response.status_code}, not an ADK api_server's list of "
            "apps: is --agent-url the address `adk api_server` serves?"
        )
    return apps


@dataclass
class _AdkHttpSession:
    connector: AdkHttpConnector
    app: str
    user: str
    session_id: str
    traceparent: str | None = None  # the next turn's W3C trace context (--otlp)

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        c = self.connector
        body = {
            "app_name": self.app,
            "user_id": self.user,
            "session_id": self.session_id,
            "new_message": user_content.model_dump(mode="json", exclude_none=True),
        }
        events, retries = post(
            c._session, f"{c.base_url}/run", body, c.http, deadline, self.traceparent
        )
        turn = events_to_turn(events)
        turn.retries = retries
        return turn

    def close(self) -> None:
        return None
