"""The client :func:`ci_eval.net.http.post_json` sends through (agents, LLM endpoints): urllib3
directly for a plain ``http://`` URL, a requests session for everything else."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from urllib3 import PoolManager
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    DecodeError,
    InvalidHeader,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    ResponseError,
    SSLError,
)
from urllib3.util import Timeout, make_headers

from ci_eval.net.http import (
    Answer,
    Failure,
    HTTPPool,
    HttpSettings,
    HTTPSPool,
    make_requests_session,
    retry_policy,
)

if TYPE_CHECKING:
    import requests

# an http URL that requests would send exactly as written (nothing to quote or to strip, no
# credentials, no IPv6 literal): urllib3 alone may send it
_PLAIN_URL = re.compile(
    r"http://(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*)(?::(?P<port>[0-9]{1,5}))?"
    r"(?P<path>/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?(?P<query>\?[A-Za-z0-9._~!$&'()*+,;=:@/?-]*)?"
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_NETRC_FILES = (".netrc", "_netrc")  # where requests looks (requests.utils.NETRC_FILES)


class Client:
    """What :func:`post_json` sends through: one per connector or LLM client, for one run.

    The fast path is urllib3's pool, with the headers, retry policy, timeouts and error mapping
    a requests session would use. A host goes the requests way (``self._requests``, created on
    first need) when the environment names a proxy for it or a ``.netrc`` exists (requests
    decides both, per host, once), once it has set a cookie (requests keeps and returns them)
    or redirected (requests follows, as it always did), and so does every URL that is not a
    plain ``http://`` one (https, credentials, characters to quote)."""

    def __init__(self, settings: HttpSettings, pool_size: int = 128) -> None:
        self.settings, self.pool_size = settings, pool_size
        self._retry = retry_policy(settings)
        self._pool = PoolManager(num_pools=pool_size, maxsize=pool_size, block=False)
        self._pool.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}
        self._fast: dict[str, bool] = {}  # netloc -> whether urllib3 alone may serve it
        self._lock = threading.Lock()
        self._session: requests.Session | None = None
        self._headers = _default_headers(settings.headers)

    def _requests(self) -> requests.Session:
        with self._lock:
            if self._session is None:
                self._session = make_requests_session(self.settings, self.pool_size)
            return self._session

    def _route(self, url: str) -> tuple[str, str] | None:
        """(netloc, path) when the fast path may send ``url``, else None."""
        match = _PLAIN_URL.fullmatch(url)
        if match is None or int(match["port"] or 80) > 65535:
            return None
        netloc = match["host"] + (f":{match['port']}" if match["port"] else "")
        path = (match["path"] or "/") + (match["query"] or "")  # requests' path_url
        fast = self._fast.get(netloc)
        if fast is None:
            fast = not _proxied(url) and not _netrc_exists()
            self._fast[netloc] = fast
        return (netloc, path) if fast else None

    def post(
        self,
        url: str,
        body: Any,
        timeout: tuple[float, float],
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """POST ``body`` as JSON, with this request's own ``headers`` over the session's (a
        turn's ``traceparent``); raises Failure, or DeadlinePassed from the retry loop."""
        route = self._route(url)
        if route is not None:
            answer = self._post_fast(url, route, body, timeout, headers)
            if answer is not None:
                return answer
        return self._post_requests(url, body, timeout, headers)

    def _post_fast(
        self,
        url: str,
        route: tuple[str, str],
        body: Any,
        timeout: tuple[float, float],
        extra: Mapping[str, str] | None = None,
    ) -> Answer | None:
        netloc, path = route
        try:
            data = json.dumps(body, allow_nan=False).encode("utf-8")  # as requests' json=
        except ValueError as exc:
            raise Failure("other", str(exc), "InvalidJSONError") from None
        headers = dict(self._headers)
        if extra:
            headers.update(extra)
        headers["Content-Length"] = str(len(data))
        host, _, port = netloc.partition(":")
        try:
            pool = self._pool.connection_from_host(host, int(port) if port else 80, "http")
            response = pool.urlopen(
                "POST",
                path,
                body=data,
                headers=headers,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
                decode_content=False,
                retries=self._retry,
                timeout=Timeout(connect=timeout[0], read=timeout[1]),
                chunked=False,
            )
        except MaxRetryError as exc:  # as requests' HTTPAdapter.send maps them
            reason = exc.reason
            if isinstance(reason, ConnectTimeoutError) and not isinstance(
                reason, NewConnectionError
            ):
                raise Failure("timeout", str(exc), "ConnectTimeout") from None
            if isinstance(reason, ResponseError):
                raise Failure("retry", str(exc), "RetryError") from None
            timed_out = isinstance(reason, ReadTimeoutError)
            raise Failure(
                "timeout" if timed_out else "connect", str(exc), "ConnectionError"
            ) from None
        except (ProtocolError, OSError, ClosedPoolError, ProxyError, SSLError) as exc:
            raise Failure("connect", str(exc), "ConnectionError") from None
        except ReadTimeoutError as exc:
            raise Failure("timeout", str(exc), "ReadTimeout") from None
        except InvalidHeader as exc:
            raise Failure("other", str(exc), "InvalidHeader") from None
        if response.status in _REDIRECTS and "location" in response.headers:
            # requests follows redirects its own way (a 302 to a GET...): this host goes
            # through it from now on, starting with this call
            response.drain_conn()
            self._fast[netloc] = False
            return None
        if "set-cookie" in response.headers:
            # requests keeps cookies and returns them (a sticky load balancer): give it this
            # one, and this host from now on
            import requests
            from requests.cookies import extract_cookies_to_jar

            extract_cookies_to_jar(
                self._requests().cookies, requests.Request("POST", url, headers=headers), response
            )
            self._fast[netloc] = False
        try:
            content = _bounded(response.stream(CHUNK, decode_content=True))
        except (ProtocolError, DecodeError) as exc:  # as requests' Response.content maps them
            raise Failure("garbled", str(exc), "ChunkedEncodingError") from None
        except (ReadTimeoutError, SSLError) as exc:
            raise Failure("connect", str(exc), "ConnectionError") from None
        history = getattr(response.retries, "history", ()) or ()
        content_type = response.headers.get("content-type", "")
        encoding = _encoding(content_type)
        return Answer(
            response.status,
            content_type,
            content,
            len(history),
            encoding,
            lambda: _text(content, encoding),
        )

    def _post_requests(
        self,
        url: str,
        body: Any,
        timeout: tuple[float, float],
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        import requests

        try:
            response = self._requests().post(
                url, json=body, timeout=timeout, stream=True, headers=dict(headers or {})
            )
            content = _bounded(response.iter_content(CHUNK))
        except requests.exceptions.RetryError as exc:
            raise Failure("retry", str(exc), type(exc).__name__) from None
        except requests.exceptions.RequestException as exc:
            timed_out = isinstance(exc, requests.exceptions.Timeout) or isinstance(
                getattr(exc.args[0] if exc.args else None, "reason", None), ReadTimeoutError
            )  # read timeouts, retried, end up as a ConnectionError
            if timed_out:
                kind = "timeout"
            elif isinstance(exc, requests.exceptions.ConnectionError):
                kind = "connect"
            elif isinstance(
                exc,
                requests.exceptions.ChunkedEncodingError | requests.exceptions.ContentDecodingError,
            ):
                kind = "garbled"
            else:
                kind = "other"
            raise Failure(kind, str(exc), type(exc).__name__) from None
        history = getattr(getattr(response.raw, "retries", None), "history", ()) or ()
        response._content = content  # what .text decodes, read within the cap
        return Answer(
            response.status_code,
            response.headers.get("content-type", ""),
            content,
            len(history),
            response.encoding,
            lambda: response.text,
        )

    def close(self) -> None:
        self._pool.clear()
        if self._session is not None:
            self._session.close()


def _default_headers(extra: dict[str, str]) -> dict[str, str]:
    """What a requests session sends with a JSON POST: its defaults (requests' own user agent,
    so an agent sees the same client as before), the settings' headers over them (case
    insensitively), the JSON content type unless they name one."""
    from importlib.metadata import version

    headers: dict[str, str] = {
        "User-Agent": f"python-requests/{version('requests')}",
        # requests.utils.DEFAULT_ACCEPT_ENCODING
        "Accept-Encoding": ", ".join(
            re.split(r",\s*", make_headers(accept_encoding=True)["accept-encoding"])
        ),
        "Accept": "*/*",
        "Connection": "keep-alive",
    }
    for name, value in extra.items():
        for existing in [k for k in headers if k.lower() == name.lower()]:
            del headers[existing]
        headers[name] = value
    if not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    return headers


def _proxied(url: str) -> bool:
    """Whether requests would send ``url`` through a proxy from the environment."""
    from urllib.request import getproxies

    if not [k for k in getproxies() if k != "no"]:
        return False
    from requests.utils import get_environ_proxies, select_proxy

    return select_proxy(url, get_environ_proxies(url)) is not None


def _netrc_exists() -> bool:
    """Whether requests would look in a .netrc for credentials (requests.utils.get_netrc_auth)."""
    netrc = os.environ.get("NETRC")
    places = (netrc,) if netrc is not None else tuple(f"~/{f}" for f in _NETRC_FILES)
    return any(os.path.exists(os.path.expanduser(p)) for p in places)


def _encoding(content_type: str) -> str | None:
    """requests.utils.get_encoding_from_headers, for a Content-Type header."""
    if not content_type:
        return None
    kind, *params = content_type.split(";")
    found: dict[str, str | bool] = {}
    for param in params:
        param = param.strip()
        if param:
            key, value = param, True
            equals = param.find("=")
            if equals != -1:
                key, value = param[:equals].strip("\"' "), param[equals + 1 :].strip("\"' ")
            found[key.lower()] = value
    charset = found.get("charset")
    if isinstance(charset, str):
        return charset.strip("'\"")
    kind = kind.strip()
    if "text" in kind:
        return "ISO-8859-1"
    if "application/json" in kind:
        return "utf-8"
    return None


CHUNK = 64 * 1024
MAX_ANSWER = 16 * 1024 * 1024  # bytes of an answer once decoded, as a command reply's line


def _bounded(chunks: Any) -> bytes:
    """An answer's body, decoded (gzip, deflate...) chunk by chunk: one that inflates past
    MAX_ANSWER is a failure named for it, not gigabytes of memory."""
    parts, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_ANSWER:
            raise Failure(
                "other",
                f"the answer is larger than {MAX_ANSWER // 2**20} MiB once decoded",
                "AnswerTooLarge",
            )
        parts.append(chunk)
    return b"".join(parts)


def _text(content: bytes, encoding: str | None) -> str:
    """requests' ``Response.text``: the declared encoding, else the one charset detection
    guesses (only ever for an error's body)."""
    if not content:
        return ""
    if encoding is None:
        from requests.compat import chardet

        encoding = chardet.detect(content)["encoding"] if chardet is not None else "utf-8"
    try:
        return str(content, encoding, errors="replace")  # type: ignore[arg-type]
    except (LookupError, TypeError):
        return str(content, errors="replace")


def make_session(settings: HttpSettings, pool_size: int = 128) -> Client:
    """The client :func:`~ci_eval.net.http.post_json` sends through: one per connector or LLM
    client."""
    return Client(settings, pool_size)
