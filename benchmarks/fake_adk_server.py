"""A stand-in for ``adk api_server`` on 127.0.0.1 for throughput benchmarks: sessions and
``POST /run`` with a fixed latency per turn, answered by a threaded server (a thread per
connection, keep-alive), so the server is never what limits the client.

    python benchmarks/fake_adk_server.py [LATENCY_S]   # prints its base URL, serves until killed
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn
    disable_nagle_algorithm = True
    latency = 0.2

    def log_message(self, *args: Any) -> None:
        return None

    def _answer(self, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        # ci-eval asks an api_server which apps it serves before the first case (2ffa637)
        if self.path.rstrip("/") == "/list-apps":
            self._answer(["weather_agent"])
            return
        self.send_error(404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path.endswith("/sessions"):
            self._answer({"id": request.get("session_id") or f"s{next(_ids)}", "state": {}})
            return
        time.sleep(self.latency)
        text = "".join(p.get("text", "") for p in request["new_message"].get("parts", []))
        self._answer(
            [
                {
                    "author": "weather_agent",
                    "content": {
                        "role": "model",
                        "parts": [{"function_call": {"name": "get_weather", "args": {"q": text}}}],
                    },
                },
                {
                    "author": "weather_agent",
                    "content": {
                        "role": "model",
                        "parts": [{"function_response": {"name": "get_weather", "response": {}}}],
                    },
                },
                {
                    "author": "weather_agent",
                    "content": {"role": "model", "parts": [{"text": f"It is sunny: {text}"}]},
                },
            ]
        )


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # 16+ clients connecting at once must not meet a full backlog


def main() -> None:
    Handler.latency = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
    server = Server(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
