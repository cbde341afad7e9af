"""What every stand-in HTTP server of the tests shares: a quiet HTTP/1.1 handler that sends a
whole JSON reply, and a server on a free loopback port served from a daemon thread."""

from __future__ import annotations

import sys
import threading
import traceback
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


class QuietServer(ThreadingHTTPServer):
    """A threading server whose handlers never write to ``sys.stderr``. A handler may outlive
    its test (a ``slow 7`` turn the client gave up on at 5 s wakes after the server stopped):
    socketserver would print its broken pipe to ``sys.stderr``, which by then may be a later
    test's in-process run's redirected stream (``tests.helpers.run_cli``), one that asserts
    the lines it holds. A client that left is what such a test wanted: nothing said; any other
    handler error goes to the process's own stderr (pytest shows it), never a run's."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # broken pipe, reset, aborted
            return
        stream = sys.__stderr__
        if stream is not None:
            print(f"stand-in server: a request from {client_address} failed:", file=stream)
            traceback.print_exc(file=stream)


class Loopback:
    """A server for ``handler`` on 127.0.0.1 and a free port, serving between ``start()`` (or
    ``with``) and ``stop()``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = QuietServer(("127.0.0.1", 0), handler)
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
