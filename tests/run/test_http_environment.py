"""The HTTP session honours the environment's proxy settings, per host, on every request,
though it reads them once per host (ci_eval.net.http._Session)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ci_eval.net.client import make_session
from ci_eval.net.http import HttpSettings, post_json
from tests.loopback import Loopback, QuietHandler


class _Recorder(Loopback):
    """A loopback server answering ``{}`` to any POST and keeping each request's target."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        recorder = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                recorder.targets.append(self.path)
                self.reply(200, json.dumps({}).encode())

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}"
        self.start()


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_Recorder, _Recorder]]:
    proxy, direct = _Recorder(), _Recorder()
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    yield proxy, direct
    for server in (proxy, direct):
        server.stop()


def test_each_request_goes_through_the_proxy_its_host_calls_for(
    servers: tuple[_Recorder, _Recorder],
) -> None:
    proxy, direct = servers
    session = make_session(HttpSettings(timeout=10, retries=0))
    for _ in range(2):
        post_json(session, "http://agent.example/run", {}, 10, 0)
        post_json(session, f"{direct.url}/run", {}, 10, 0)
    assert proxy.targets == ["http://agent.example/run"] * 2  # the absolute form: proxied
    assert direct.targets == ["/run"] * 2  # in no_proxy: straight to the host


def test_a_new_session_reads_the_environment_again(
    servers: tuple[_Recorder, _Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy, direct = servers
    post_json(make_session(HttpSettings(timeout=10, retries=0)), f"{direct.url}/a", {}, 10, 0)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("HTTP_PROXY", direct.url)  # now the "direct" server is the proxy
    post_json(make_session(HttpSettings(timeout=10, retries=0)), f"{proxy.url}/b", {}, 10, 0)
    assert direct.targets == ["/a", f"{proxy.url}/b"]
    assert proxy.targets == []
