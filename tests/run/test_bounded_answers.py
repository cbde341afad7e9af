"""An answer that inflates past the cap is an error that says so, whichever path the request
takes: not gigabytes of memory and seconds past the timeout."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval.net.client import MAX_ANSWER, make_session
from ci_eval.net.http import HttpError, HttpSettings, post_json
from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.loopback import QuietServer

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
    # the client leaves mid-answer: QuietServer keeps that broken pipe off sys.stderr
    server = QuietServer(("127.0.0.1", 0), _Bomb)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/run"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("proxied", [False, True])
def test_an_answer_inflating_past_the_cap_is_an_error_naming_it(
    bomb_url: str, proxied: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session(HttpSettings(timeout=10, retries=0))
    if proxied:  # the requests path (proxies, https...), not the plain-http fast path
        monkeypatch.setattr(session, "_route", lambda url: None)
    with pytest.raises(HttpError) as caught:
        post_json(session, bomb_url, {"q": 1}, timeout=10, retries=0)
    assert "the answer is larger than 16 MiB once decoded" in str(caught.value)


def test_a_run_keeps_no_more_than_its_ceiling_of_the_agents_replies(tmp_path: Path) -> None:
    # three turns of 7 MiB each: every reply is under its own cap, their sum is not
    agent = tmp_path / "big.py"
    agent.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'final_response': 'x' * (7 * 2**20)}), flush=True)\n"
    )
    results, junit = tmp_path / "r.json", tmp_path / "j.xml"
    done = run_cli(
        "run",
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--case",
        "weather_basic:multi_turn_london_tokyo",
        "--agent",
        "command",
        "--agent-command",
        f"python {agent}",
        "--results",
        str(results),
        "--junit",
        str(junit),
    )
    assert done.returncode == 3
    assert "turn 3: the agent's replies in this run passed 16 MiB, a ceiling" in done.stdout
    assert results.stat().st_size < 16 * 2**20 * 1.1  # the results file keeps what fits
    assert junit.stat().st_size < 100_000  # a report shows each text's start, saying so
    assert "characters; the results file has them all)" in junit.read_text()
