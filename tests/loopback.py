"""What every stand-in HTTP server of the tests shares: a quiet HTTP/1.1 handler that sends a
whole JSON reply, and a server on a free loopback port served from a daemon thread."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as real servers do; else 40 ms per reply

    def log_message(self, *args: Any) -> None:
        return None

    def reply(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        """A JSON reply of ``data`` (already encoded: some tests need exact bytes)."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class Loopback:
    """A server for ``handler`` on 127.0.0.1 and a free port, serving between ``start()`` (or
    ``with``) and ``stop()``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        # shutdown() waits for the loop's next poll: at the default 0.5 s, a quarter of a second
        # per server on average, for every test that starts one
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
