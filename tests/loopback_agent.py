"""A loopback HTTP agent speaking ci-eval's JSON contract, with faults on demand.

The user message picks the behaviour, so one server serves every fault test:
``fail 500`` / ``fail 503`` always fail; ``flaky 503 N`` fails N times then answers;
``limit 429 N`` answers 429 with Retry-After: 1 N times; ``slow S`` sleeps S seconds;
``reset`` drops the connection; ``garbage`` answers a non-JSON body; ``badshape`` answers JSON
that breaks the contract; ``coin`` is right on odd requests and wrong on even ones; ``drip S``
sends the right answer a byte every S seconds; ``big`` pads the right answer to 10 MB;
``surrogate`` ends the answer with a lone surrogate escape, as JavaScript's JSON.stringify
does. Anything else is answered by the sample weather agent's logic.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples/agents/weather_agent"))
from logic import respond

from tests.loopback import Loopback, QuietHandler


class LoopbackAgent(Loopback):
    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.requests: Counter[str] = Counter()
        self.previous: dict[str, str] = {}  # session id → the agent's last reply (its memory)
        self.lock = threading.Lock()
        agent = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                message = body.get("message", "")
                with agent.lock:
                    agent.requests[message] += 1
                    count = agent.requests[message]
                agent.handle(self, message, count, str(body.get("session_id") or ""))

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}/turn"

    def handle(
        self, h: BaseHTTPRequestHandler, message: str, count: int, session: str = ""
    ) -> None:
        words = message.split()
        if self.latency:
            time.sleep(self.latency)
        if words[:1] == ["fail"]:
            return _send(h, int(words[1]), {"error": "boom"})
        if words[:1] == ["flaky"] and count <= int(words[2]):
            return _send(h, int(words[1]), {"error": "try again"})
        if words[:1] == ["limit"] and count <= int(words[2]):
            return _send(h, 429, {"error": "slow down"}, {"Retry-After": "1"})
        if words[:1] == ["slow"]:
            time.sleep(float(words[1]))
        if words[:1] == ["reset"]:
            h.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            h.connection.close()
            h.close_connection = True
            return None
        if words[:1] == ["garbage"]:
            return _send(h, 200, None, raw=b"<html>oops</html>")
        if words[:1] == ["coin"]:  # right on odd requests, wrong on even: a flaky agent
            city = "Paris" if count % 2 else "Lyon"
            return _send(
                h,
                200,
                {
                    "final_response": f"It is sunny in {city}.",
                    "tool_calls": [{"name": "get_weather", "args": {"city": city}}],
                },
            )
        if words[:1] == ["badshape"]:
            return _send(h, 200, {"tool_calls": [{"args": "not an object"}]})
        with self.lock:
            previous = self.previous.get(session)
        answer = contract_reply(message, previous)
        with self.lock:
            self.previous[session] = answer["final_response"]
        if words[:1] == ["drip"]:
            return _drip(h, json.dumps(answer).encode(), float(words[1]))
        if words[:1] == ["big"]:
            answer["padding"] = "x" * 10_000_000
        if words[:1] == ["surrogate"]:
            answer["final_response"] += " \ud83d"
        return _send(h, 200, answer)


def contract_reply(message: str, previous: str | None = None) -> dict[str, Any]:
    """The sample weather agent's answer in ci-eval's contract (``previous``: its last reply in
    this session, its memory)."""
    reply = respond(message, previous)
    return {
        "final_response": reply.text,
        "tool_calls": [{"name": c.name, "args": c.args} for c in reply.calls],
        "tool_results": [{"name": c.name, "response": c.result} for c in reply.calls],
    }


def _drip(h: BaseHTTPRequestHandler, data: bytes, every: float) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    try:
        for byte in data:
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(every)
    except OSError:
        return  # the client gave up


def _send(
    h: QuietHandler,
    status: int,
    body: Any,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> None:
    h.reply(status, raw if raw is not None else json.dumps(body).encode(), headers)


def serve_forever(latency: float) -> None:
    """Run the agent in its own process (benchmarks): prints its URL, serves until killed."""
    agent = LoopbackAgent(latency=latency)
    print(agent.url, flush=True)
    agent.server.serve_forever()


if __name__ == "__main__":
    serve_forever(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)
