"""The client ``post_json`` sends through talks to an agent exactly as a requests session did:
the same request on the wire, cookies the agent sets come back, redirects are followed as
requests follows them, an error's body is decoded as requests decoded it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ci_eval.net.client import make_session
from ci_eval.net.http import HttpError, HttpSettings, make_requests_session, post_json
from tests.loopback import Loopback, QuietHandler


class _Agent(Loopback):
    """Records each request (method, path, headers, body) and answers as ``answer`` says:
    (status, body bytes, extra headers)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        self.answer: Any = lambda path: (200, b'{"ok": true}', {})
        agent = self

        class Handler(QuietHandler):
            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                agent.seen.append((self.command, self.path, dict(self.headers.items()), body))
                status, data, headers = agent.answer(self.path)
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = _any

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}"
        self.start()


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Agent]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    server = _Agent()
    yield server
    server.stop()


SETTINGS = HttpSettings(timeout=10, retries=0, headers={"Authorization": "Bearer t", "accept": "x"})
BODY = {"new_message": {"parts": [{"text": "héllo ☃"}]}, "n": 1.5}


@pytest.mark.parametrize("rest", ["/run?x=1", "?x=1", "", "/a/b;c=d/e@f~", "/apps/x%20y/run"])
def test_the_request_on_the_wire_is_the_one_a_requests_session_sends(
    agent: _Agent, rest: str
) -> None:
    post_json(make_session(SETTINGS), f"{agent.url}{rest}", BODY, 10, 0)
    make_requests_session(SETTINGS).post(f"{agent.url}{rest}", json=BODY, timeout=10)
    ours, theirs = agent.seen
    assert ours == theirs


def test_cookies_the_agent_sets_are_sent_back(agent: _Agent) -> None:
    agent.answer = lambda path: (200, b"{}", {"Set-Cookie": "lb=backend-2; Path=/"})
    client = make_session(SETTINGS)
    for _ in range(3):
        post_json(client, f"{agent.url}/run", {}, 10, 0)
    assert [headers.get("Cookie") for _, _, headers, _ in agent.seen] == [
        None,
        "lb=backend-2",
        "lb=backend-2",
    ]


@pytest.mark.parametrize(("status", "method"), [(307, "POST"), (308, "POST"), (302, "GET")])
def test_a_redirect_is_followed_as_requests_follows_it(
    agent: _Agent, status: int, method: str
) -> None:
    agent.answer = lambda path: (
        (status, b"", {"Location": "/v2/run"}) if path == "/run" else (200, b'{"at": 2}', {})
    )
    client = make_session(SETTINGS)
    assert post_json(client, f"{agent.url}/run", BODY, 10, 0) == ({"at": 2}, 0)
    assert (agent.seen[-1][0], agent.seen[-1][1]) == (method, "/v2/run")
    assert post_json(client, f"{agent.url}/run", BODY, 10, 0) == ({"at": 2}, 0)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", "caf\u00e9 ferm\u00e9".encode("latin-1")),
        ("application/json", '{"error": "caf\u00e9"}'.encode()),
        ("application/json; charset=latin-1", "caf\u00e9".encode("latin-1")),
        ("application/octet-stream", "caf\u00e9 ferm\u00e9 aujourd'hui".encode()),
    ],
)
def test_an_errors_body_reads_as_requests_read_it(
    agent: _Agent, content_type: str, body: bytes
) -> None:
    agent.answer = lambda path: (500, body, {"Content-Type": content_type})
    with pytest.raises(HttpError) as ours:
        post_json(make_session(SETTINGS), f"{agent.url}/run", {}, 10, 0)
    theirs = make_requests_session(SETTINGS).post(f"{agent.url}/run", json={}, timeout=10)
    assert str(ours.value) == f"POST {agent.url}/run: HTTP 500: {theirs.text.strip()}"


def test_a_charset_the_agent_names_decodes_its_json(agent: _Agent) -> None:
    data = json.dumps({"text": "caf\u00e9"}, ensure_ascii=False).encode("latin-1")
    agent.answer = lambda path: (200, data, {"Content-Type": "application/json; charset=latin-1"})
    assert post_json(make_session(SETTINGS), f"{agent.url}/run", {}, 10, 0) == (
        {"text": "caf\u00e9"},
        0,
    )


def test_credentials_in_the_url_are_sent_as_basic_auth(agent: _Agent) -> None:
    url = agent.url.replace("http://", "http://user:p%40ss@")
    post_json(make_session(HttpSettings(timeout=10, retries=0)), f"{url}/run", {}, 10, 0)
    assert agent.seen[-1][2]["Authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss


def test_a_netrc_entry_for_the_host_is_used(
    agent: _Agent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login robot password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    post_json(make_session(HttpSettings(timeout=10, retries=0)), f"{agent.url}/run", {}, 10, 0)
    assert agent.seen[-1][2]["Authorization"] == "Basic cm9ib3Q6czNjcmV0"  # robot:s3cret
