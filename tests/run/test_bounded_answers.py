"""An answer that inflates past the cap is an error that says so, whichever path the request
takes: not gigabytes of memory and seconds past the timeout."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator

import pytest

from ci_eval.http import HttpError, HttpSettings, make_session, post_json
from ci_eval.http_client import MAX_ANSWER

BOMB = gzip.compress(b"0" * (MAX_ANSWER + 2**20), compresslevel=9)  # ~65 KB on the wire


class _Bomb(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(BOMB)))
        self.end_headers()
        self.wfile.write(BOMB)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def bomb_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Bomb)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/run"
    server.shutdown()


@pytest.mark.parametrize("proxied", [False, True])
def test_an_answer_inflating_past_the_cap_is_an_error_naming_it(
    bomb_url: str, proxied: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session(HttpSettings(timeout=10, retries=0))
    if proxied:  # the requests path (proxies, https...), not the plain-http fast path
        monkeypatch.setattr(session, "_route", lambda url: None)
    with pytest.raises(HttpError) as caught:
        post_json(session, bomb_url, {"q": 1}, timeout=10, retries=0)
    assert "the answer is larger than 64 MiB once decoded" in str(caught.value)
