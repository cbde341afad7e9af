"""HTTP for whoever calls out (agent connectors, the LLM judge and simulator, the GitHub API),
with urllib3's retry policy.

Connection errors, 5xx and 429 are retried with exponential backoff and jitter, honouring
``Retry-After`` (capped, so a hostile or confused server cannot park the run). POST is retried
too: agents' turn endpoints are not idempotent in theory, but a turn that failed with 5xx or a
reset did not produce an answer we could score.

:func:`post_json` (agents, LLMs) sends through a :class:`Client`: urllib3 directly, at less
CPU per request than a requests session (the workers share one GIL), for a plain ``http://`` URL
that no proxy, ``.netrc``, cookie or redirect concerns; anything else goes through a requests
session, which handles all of those, with the same retry policy. GitHub's calls use a requests
session (:func:`make_requests_session`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import InvalidHeader
from urllib3.util.retry import Retry

from ci_eval.net.deadline import Deadline
from ci_eval.text import redact
from ci_eval.text.plural import plural
from ci_eval.text.surrogates import loads as loads_json

if TYPE_CHECKING:
    import requests


# urllib3 logs each retry as a warning; ci-eval reports retries itself (counts in the results,
# one line per failure), and a library that configures the root logger (absl, imported with
# rouge-score) would otherwise print them raw
logging.getLogger("urllib3").propagate = False

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0


class HttpError(Exception):
    """A request failed for good (unreachable, timed out, HTTP error, not JSON).

    ``retries`` counts the retries spent before giving up; the message is one line and never
    holds a secret (it is redacted here, whoever builds it). Callers turn it into their own
    error (an agent's, the judge's).
    """

    def __init__(self, message: str, retries: int = 0) -> None:
        super().__init__(redact.text(message))
        self.retries = retries


class DeadlinePassed(Exception):
    """Raised inside urllib3's retry loop when the call's deadline has passed: no more tries.
    Deliberately not an OSError or urllib3 error, so nothing on the way retries or wraps it."""


# The calling thread's deadline and the connections it used, so the watchdog can shut their
# sockets down: a blocked read returns at once instead of after the per-read timeout.
_call = threading.local()


class _Tracked:
    def request(self, *args: Any, **kwargs: Any) -> Any:
        used = getattr(_call, "connections", None)
        if used is not None:
            used.append(self)
        return super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Tracked, HTTPConnection):
    pass


class _HTTPSConnection(_Tracked, HTTPSConnection):
    pass


class HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def _shutdown(connections: list[Any]) -> None:
    for conn in list(connections):
        sock = getattr(conn, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _CappedRetry(Retry):
    def get_retry_after(self, response: Any) -> float | None:
        try:
            value = super().get_retry_after(response)
        except InvalidHeader:  # a Retry-After that is neither seconds nor a date: back off
            return None
        return None if value is None else min(value, MAX_RETRY_AFTER)

    def increment(self, *args: Any, **kwargs: Any) -> Retry:
        deadline = getattr(_call, "deadline", None)
        if deadline is not None and deadline.expired():
            raise DeadlinePassed
        # raises MaxRetryError when no retry is left: only retries actually made are counted
        new = super().increment(*args, **kwargs)
        _call.spent = getattr(_call, "spent", 0) + 1
        return new

    def sleep(self, response: Any = None) -> None:
        """Back-off and Retry-After, but never past the call's deadline."""
        deadline = getattr(_call, "deadline", None)
        if deadline is None:
            super().sleep(response)
            return
        wait = None
        if self.respect_retry_after_header and response is not None:
            wait = self.get_retry_after(response)
        if not wait:
            wait = self.get_backoff_time()
        if wait > 0 and not deadline.wait(wait):
            raise DeadlinePassed


@dataclass
class HttpSettings:
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 0.5
    headers: dict[str, str] = field(default_factory=dict)


def retry_policy(settings: HttpSettings) -> _CappedRetry:
    return _CappedRetry(
        total=settings.retries,
        connect=settings.retries,
        read=settings.retries,
        status=settings.retries,
        other=settings.retries,
        allowed_methods=None,
        status_forcelist=RETRY_STATUSES,
        backoff_factor=settings.backoff,
        backoff_jitter=settings.backoff / 2,
        respect_retry_after_header=True,
        raise_on_status=False,
    )


def make_requests_session(settings: HttpSettings, pool_size: int = 128) -> requests.Session:
    """A requests session with the retry policy, whose connections the deadline's watchdog can
    shut down, reading the environment's proxy and certificate settings once per host."""
    import requests
    from requests.adapters import HTTPAdapter

    class _Adapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}

    class _Session(requests.Session):
        """Reads the environment's proxy and certificate settings (``*_proxy``, ``no_proxy``,
        ``REQUESTS_CA_BUNDLE``...) once per host and arguments, not on every request: requests
        scans the whole environment twice a request, a large share of a turn's CPU.
        A session lives for one run, and the environment does not change in it."""

        def __init__(self) -> None:
            super().__init__()
            self._environment: dict[tuple[Any, ...], dict[str, Any]] = {}

        def merge_environment_settings(
            self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any
        ) -> dict[str, Any]:
            parts = urlsplit(str(url))
            key = (parts.scheme, parts.netloc, stream, verify, cert)
            if proxies or not all(isinstance(k, str | bool | None | tuple) for k in key[2:]):
                return super().merge_environment_settings(url, proxies, stream, verify, cert)
            settings = self._environment.get(key)
            if settings is None:
                settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
                self._environment[key] = settings
            # a copy each time: requests passes these on to the adapter
            return {k: dict(v) if isinstance(v, dict) else v for k, v in settings.items()}

    # a connection per worker thread, kept alive: past the pool size, urllib3 opens and drops a
    # connection per request (slots are created on demand, so a big pool costs nothing)
    adapter = _Adapter(
        max_retries=retry_policy(settings), pool_connections=pool_size, pool_maxsize=pool_size
    )
    session = _Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers.update(settings.headers)
    return session


@dataclass
class Answer:
    """A response, read: what :func:`post_json` needs of it, from either path."""

    status: int
    content_type: str
    body: bytes
    retries: int  # retries urllib3 made for it
    encoding: str | None  # as requests' ``Response.encoding`` (from the headers)
    text: Callable[[], str]  # the body as requests' ``Response.text`` decodes it


class Failure(Exception):
    """A request that failed, classified as :func:`post_json` reports it: ``kind`` is one of
    retry, timeout, connect, garbled, other; ``name`` the requests exception it amounts to."""

    def __init__(self, kind: str, detail: str, name: str) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.name = kind, detail, name


def _retries(n: int) -> str:
    return plural(n, "retry", "retries")


@contextlib.contextmanager
def within(deadline: Deadline) -> Iterator[Deadline]:
    """Requests made by this thread inside the block end at ``deadline``: retries and back-off
    stop there, and the watchdog shuts the sockets in use down (a drip-feeding or hung server
    cannot hold the turn past it)."""
    connections: list[Any] = []
    _call.deadline, _call.connections = deadline, connections
    try:
        with deadline.guard(lambda: _shutdown(connections)):
            yield deadline
    finally:
        _call.deadline = _call.connections = None


def timeouts(deadline: Deadline, timeout: float) -> tuple[float, float]:
    """(connect, read) timeouts for requests: the per-read timeout, never beyond the deadline."""
    left = max(deadline.remaining(), 0.001)
    return (min(timeout, left), min(timeout, left))


class Poster(Protocol):
    """What :func:`post_json` sends through: :class:`ci_eval.net.client.Client`, which imports
    this module (so this one names it only by its shape)."""

    def post(
        self,
        url: str,
        body: Any,
        timeout: tuple[float, float],
        headers: Mapping[str, str] | None = None,
    ) -> Answer: ...


def post_json(
    session: Poster,
    url: str,
    body: Any,
    timeout: float,
    retries: int,
    deadline: Deadline | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[Any, int]:
    """POST JSON and return (decoded body, retries spent), all within ``deadline`` (by default
    ``timeout`` seconds from now, wall clock); ``headers``: this request's own. Raises
    HttpError, one line."""
    deadline = deadline or Deadline(timeout)
    shown = redact.text(url)  # no credentials of the URL in any message
    _call.spent = 0
    try:
        with within(deadline):
            if deadline.expired():
                raise DeadlinePassed
            response = (
                session.post(url, body, timeouts(deadline, timeout), headers=headers)
                if headers
                else session.post(url, body, timeouts(deadline, timeout))
            )
        if deadline.fired:
            raise DeadlinePassed
    except DeadlinePassed:
        raise HttpError(f"POST {shown}: {deadline.message()}", retries) from None
    except Failure as exc:
        if exc.kind == "retry":
            raise HttpError(
                f"POST {shown}: still failing after {_retries(retries)}", retries
            ) from None
        if deadline.expired():
            raise HttpError(f"POST {shown}: {deadline.message()}", retries) from None
        if exc.kind == "timeout":
            raise HttpError(
                f"POST {shown}: no answer within {timeout:g} s (after {_retries(retries)})", retries
            ) from None
        if exc.kind == "connect":
            why = failure_reason(exc)
            raise HttpError(
                f"POST {shown}: cannot connect ({why}) after {_retries(retries)}", retries
            ) from None
        spent = _call.spent  # e.g. a body cut off after one attempt: no retries were made
        more = f" after {_retries(spent)}" if spent else ""
        if exc.kind == "garbled":
            raise HttpError(
                f"POST {shown}: the answer was cut off or garbled{more}", spent
            ) from None
        if exc.name == "AnswerTooLarge":
            raise HttpError(f"POST {shown}: {exc.detail}", spent) from None
        raise HttpError(f"POST {shown}: {exc.name}{more}", spent) from None
    spent = response.retries
    if response.status >= 400:
        # redacted before it is cut short, so no prefix of a secret survives
        detail = redact.text(response.text().strip()).replace("\n", " ")[:200]
        more = f" after {_retries(spent)}" if spent else ""
        raise HttpError(f"POST {shown}: HTTP {response.status}{more}: {detail}", spent)
    try:
        # lone surrogates (a JavaScript agent's cut emoji) become U+FFFD here, at the boundary
        return loads_json(_body_text(response)), spent
    except (json.JSONDecodeError, ValueError):
        snippet = redact.text(_body_text(response).strip()).replace("\n", " ")[:80]
        raise HttpError(f"POST {shown}: the answer is not JSON ({snippet!r})", spent) from None
    except RecursionError:
        raise HttpError(f"POST {shown}: the answer is JSON nested too deeply", spent) from None


def _body_text(response: Answer) -> str:
    """The body as text: JSON is UTF-8 (RFC 8259) unless the server says otherwise; guessing
    the charset of a large body is slow."""
    if response.encoding and "charset" in response.content_type.lower():
        return response.text()
    return response.body.decode("utf-8-sig", errors="replace")


def failure_reason(exc: Exception) -> str:
    text = str(exc)
    for marker in (
        "Connection refused",
        "Connection reset",
        "Connection aborted",
        "Name or service not known",
        "timed out",
        "RemoteDisconnected",
    ):
        if marker in text:
            return marker.lower()
    return type(exc).__name__
