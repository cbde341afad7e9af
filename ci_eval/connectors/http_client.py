"""HTTP for the connectors: one requests session with urllib3's retry policy.

Connection errors, 5xx and 429 are retried with exponential backoff and jitter, honouring
``Retry-After`` (capped, so a hostile or confused server cannot park the run). POST is retried
too: agents' turn endpoints are not idempotent in theory, but a turn that failed with 5xx or a
reset did not produce an answer we could score.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ReadTimeoutError
from urllib3.util.retry import Retry

from ci_eval.connectors.base import AgentError
from ci_eval.text import loads as loads_json

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0


class _CappedRetry(Retry):
    def get_retry_after(self, response: Any) -> float | None:
        value = super().get_retry_after(response)
        return None if value is None else min(value, MAX_RETRY_AFTER)


@dataclass
class HttpSettings:
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 0.5
    headers: dict[str, str] = field(default_factory=dict)


def make_session(settings: HttpSettings, pool_size: int = 16) -> requests.Session:
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
    """POST JSON and return (decoded body, retries spent). Raises AgentError, one line."""
    try:
        response = session.post(url, json=body, timeout=timeout)
    except requests.exceptions.RetryError:
        raise AgentError(f"POST {url}: still failing after {_retries(retries)}", retries) from None
    except requests.exceptions.Timeout:
        raise AgentError(
            f"POST {url}: no answer within {timeout:g} s (after {_retries(retries)})", retries
        ) from None
    except requests.exceptions.ConnectionError as exc:
        cause = getattr(exc.args[0] if exc.args else None, "reason", None)
        if isinstance(cause, ReadTimeoutError):  # read timeouts, retried, end up here
            raise AgentError(
                f"POST {url}: no answer within {timeout:g} s (after {_retries(retries)})", retries
            ) from None
        raise AgentError(
            f"POST {url}: cannot connect ({_reason(exc)}) after {_retries(retries)}", retries
        ) from None
    except requests.exceptions.RequestException as exc:
        raise AgentError(f"POST {url}: {type(exc).__name__}", retries) from None
    history = getattr(getattr(response.raw, "retries", None), "history", ()) or ()
    spent = len(history)
    if response.status_code >= 400:
        detail = response.text.strip().replace("\n", " ")[:200]
        more = f" after {_retries(spent)}" if spent else ""
        raise AgentError(f"POST {url}: HTTP {response.status_code}{more}: {detail}", spent)
    try:
        # lone surrogates (a JavaScript agent's cut emoji) become U+FFFD here, at the boundary
        return loads_json(_body_text(response)), spent
    except (json.JSONDecodeError, ValueError):
        snippet = response.text.strip().replace("\n", " ")[:80]
        raise AgentError(f"POST {url}: the answer is not JSON ({snippet!r})", spent) from None
    except RecursionError:
        raise AgentError(f"POST {url}: the answer is JSON nested too deeply", spent) from None


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
