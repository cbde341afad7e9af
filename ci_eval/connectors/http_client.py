"""HTTP for the connectors: one requests session with urllib3's retry policy.

Connection errors, 5xx and 429 are retried with exponential backoff and jitter, honouring
``Retry-After`` (capped, so a hostile or confused server cannot park the run). POST is retried
too: agents' turn endpoints are not idempotent in theory, but a turn that failed with 5xx or a
reset did not produce an answer we could score.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import InvalidHeader, ReadTimeoutError
from urllib3.util.retry import Retry

from ci_eval import redact
from ci_eval.connectors.base import AgentError
from ci_eval.text import loads as loads_json

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0


_spent = threading.local()  # retries made for the request in flight on this thread


class _CappedRetry(Retry):
    def get_retry_after(self, response: Any) -> float | None:
        try:
            value = super().get_retry_after(response)
        except InvalidHeader:  # a Retry-After that is neither seconds nor a date: back off
            return None
        return None if value is None else min(value, MAX_RETRY_AFTER)

    def increment(self, *args: Any, **kwargs: Any) -> Retry:
        # raises MaxRetryError when no retry is left: only retries actually made are counted
        new = super().increment(*args, **kwargs)
        _spent.count = getattr(_spent, "count", 0) + 1
        return new


def _after(spent: int) -> str:
    return f" after {_retries(spent)}" if spent else ""


@dataclass
class HttpSettings:
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 0.5
    headers: dict[str, str] = field(default_factory=dict)


def make_session(settings: HttpSettings, pool_size: int = 128) -> requests.Session:
    # a connection per worker thread, kept alive: past the pool size, urllib3 opens and drops a
    # connection per request (slots are created on demand, so a big pool costs nothing)
    retry = _CappedRetry(
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
    adapter = HTTPAdapter(max_retries=retry, pool_connections=pool_size, pool_maxsize=pool_size)
    session = requests.Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers.update(settings.headers)
    return session


def _retries(n: int) -> str:
    return f"{n} retry" if n == 1 else f"{n} retries"


def post_json(
    session: requests.Session, url: str, body: Any, timeout: float, retries: int
) -> tuple[Any, int]:
    """POST JSON and return (decoded body, retries spent). Raises AgentError, one line.

    The retries counted are the ones made (urllib3's policy may stop early, and a body cut off
    after the headers is not retried); foreign text is redacted before it is cut short, so no
    prefix of a secret survives."""
    del retries  # the policy lives in the session; the count comes from what happened
    shown = redact.text(url)
    _spent.count = 0
    try:
        response = session.post(url, json=body, timeout=timeout)
    except requests.exceptions.RetryError:
        spent = _spent.count
        raise AgentError(f"POST {shown}: still failing{_after(spent)}", spent) from None
    except requests.exceptions.Timeout:
        spent = _spent.count
        raise AgentError(
            f"POST {shown}: no answer within {timeout:g} s{_after(spent)}", spent
        ) from None
    except requests.exceptions.ConnectionError as exc:
        spent = _spent.count
        cause = getattr(exc.args[0] if exc.args else None, "reason", None)
        if isinstance(cause, ReadTimeoutError):  # read timeouts, retried, end up here
            raise AgentError(
                f"POST {shown}: no answer within {timeout:g} s{_after(spent)}", spent
            ) from None
        raise AgentError(
            f"POST {shown}: cannot connect ({_reason(exc)}){_after(spent)}", spent
        ) from None
    except (
        requests.exceptions.ChunkedEncodingError,
        requests.exceptions.ContentDecodingError,
    ) as exc:
        spent = _spent.count
        raise AgentError(
            f"POST {shown}: the answer was cut off or garbled ({type(exc).__name__})"
            f"{_after(spent)}",
            spent,
        ) from None
    except requests.exceptions.RequestException as exc:
        spent = _spent.count
        raise AgentError(f"POST {shown}: {type(exc).__name__}{_after(spent)}", spent) from None
    spent = _spent.count
    if response.status_code >= 400:
        detail = redact.text(response.text.strip()).replace("\n", " ")[:200]
        raise AgentError(
            f"POST {shown}: HTTP {response.status_code}{_after(spent)}: {detail}", spent
        )
    try:
        # lone surrogates (a JavaScript agent's cut emoji) become U+FFFD here, at the boundary
        return loads_json(_body_text(response)), spent
    except (json.JSONDecodeError, ValueError):
        snippet = redact.text(_body_text(response).strip()).replace("\n", " ")[:80]
        raise AgentError(f"POST {shown}: the answer is not JSON ({snippet!r})", spent) from None
    except RecursionError:
        raise AgentError(f"POST {shown}: the answer is JSON nested too deeply", spent) from None


def _body_text(response: requests.Response) -> str:
    """The body as text: JSON is UTF-8 (RFC 8259) unless the server says otherwise; guessing
    the charset of a 10 MB body would cost seconds."""
    if response.encoding and "charset" in response.headers.get("content-type", "").lower():
        return response.text
    return response.content.decode("utf-8-sig", errors="replace")


def _reason(exc: Exception) -> str:
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
