"""An OTLP/HTTP trace receiver (``POST /v1/traces``) for the length of a run: what an agent's
OpenTelemetry exporter sends, framed and bounded here, handed to ``deliver`` as bytes.

The receiver knows HTTP and OTLP's framing only (the path, ``Content-Type``, ``Content-Encoding``,
the status codes and response bodies exporters expect: OTLP 1.x, "OTLP/HTTP"); what the bytes
say is the caller's (:mod:`ci_eval.connectors.live_spans`). The agent sending them is the pull
request's code: a request is capped in size before and after gzip, a slow sender is cut off,
and at most :data:`MAX_HANDLERS` requests are read at once (more are told 503 with
``Retry-After``, which exporters honour by retrying later)."""

from __future__ import annotations

import socket
import threading
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATH = "/v1/traces"
MAX_BODY = 8 * 2**20  # bytes of one request, compressed or not: an exporter's batch is far less
MAX_HANDLERS = 8  # requests read at once
READ_TIMEOUT = 10.0  # seconds a sender may take to send its request
PROTOBUF, JSON = "application/x-protobuf", "application/json"


@dataclass(frozen=True)
class Delivered:
    """What the caller made of one request: its spans it did not keep, and why (OTLP's
    ``partial_success``); or, with ``refused``, why the whole request is malformed (400)."""

    rejected: int = 0
    message: str = ""
    refused: str | None = None


# (the request's body, decompressed; its content type, PROTOBUF or JSON) -> what became of it
Deliver = Callable[[bytes, str], Delivered]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # the agent's exporter may retry as soon as the run starts; a port just freed stays usable
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], receiver: OtlpReceiver) -> None:
        self.receiver = receiver
        self.slots = threading.BoundedSemaphore(MAX_HANDLERS)
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a sender that left or broke the connection is its problem, said as a count
        self.receiver.count("a connection that broke off")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = READ_TIMEOUT  # each read of the socket: a sender dripping bytes is cut off

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        receiver = self.server.receiver
        if not self.server.slots.acquire(blocking=False):
            receiver.count(f"a request while {MAX_HANDLERS} others were read (told to retry)")
            self._answer(503, b"busy", "text/plain", {"Retry-After": "1"}, close=True)
            return
        try:
            self._post(receiver)
        finally:
            self.server.slots.release()

    def _post(self, receiver: OtlpReceiver) -> None:
        if self.path.split("?", 1)[0].rstrip("/") != PATH:
            receiver.count(f"a request to a path other than {PATH}")
            self._answer(404, b"not found", "text/plain", close=True)
            return
        kind = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if kind not in (PROTOBUF, JSON):
            receiver.count("a request neither protobuf nor JSON")
            self._answer(415, b"unsupported media type", "text/plain", close=True)
            return
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            receiver.count("a request without Content-Length")
            self._answer(411, b"length required", "text/plain", close=True)
            return
        if length < 0 or length > MAX_BODY:
            receiver.count(f"a request over {MAX_BODY // 2**20} MiB")
            self._answer(413, b"too large", "text/plain", close=True)
            return
        body = self.rfile.read(length)
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "gzip":
            body = _gunzip(body)
            if body is None:
                receiver.count(f"a gzip request that is not gzip or is over {MAX_BODY >> 20} MiB")
                self._answer(413, b"bad or too large gzip body", "text/plain", close=True)
                return
        elif encoding != "identity":
            receiver.count("a request with an encoding other than gzip")
            self._answer(415, b"unsupported encoding", "text/plain", close=True)
            return
        delivered = receiver.deliver(body, kind)
        if delivered.refused is not None:
            receiver.refuse(delivered.refused)
            self._answer(400, delivered.refused.encode(), "text/plain")
            return
        self._answer(200, _response(kind, delivered), kind)

    def _answer(
        self,
        status: int,
        body: bytes,
        kind: str,
        headers: dict[str, str] | None = None,
        close: bool = False,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            if close:  # what was not read of the request must not be read as the next one
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True


def _gunzip(body: bytes) -> bytes | None:
    """The body decompressed, or None when it is not gzip or would pass MAX_BODY."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, MAX_BODY + 1)
    except zlib.error:
        return None
    return None if len(out) > MAX_BODY or inflater.unconsumed_tail else out


def _response(kind: str, delivered: Delivered) -> bytes:
    """OTLP's ``ExportTraceServiceResponse``, with its partial success where spans were
    rejected, in the request's encoding."""
    if kind == JSON:
        import json

        if not delivered.rejected:
            return b"{}"
        partial = {"rejectedSpans": str(delivered.rejected), "errorMessage": delivered.message}
        return json.dumps({"partialSuccess": partial}).encode()
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTracePartialSuccess,
        ExportTraceServiceResponse,
    )

    response = ExportTraceServiceResponse()
    if delivered.rejected:
        response.partial_success.CopyFrom(
            ExportTracePartialSuccess(
                rejected_spans=delivered.rejected, error_message=delivered.message
            )
        )
    return response.SerializeToString()


class OtlpReceiver:
    """Serves OTLP/HTTP traces on ``host``:``port`` (0: a free port) from a daemon thread,
    from :meth:`start` to :meth:`close`; each request's body goes to ``deliver``."""

    def __init__(self, deliver: Deliver, host: str = "127.0.0.1", port: int = 0) -> None:
        self.deliver = deliver
        self.host = host
        self._server = _Server((host, port), self)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="ci-eval-otlp",
            daemon=True,
        )
        self._lock = threading.Lock()
        self.problems: Counter[str] = Counter()  # requests not read, by why
        self.refused: Counter[str] = Counter()  # malformed requests, by their first message

    def start(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def endpoint(self, host: str | None = None) -> str:
        """``OTEL_EXPORTER_OTLP_ENDPOINT`` for an exporter reaching it at ``host`` (default:
        the address it listens on; loopback when it listens on every address)."""
        host = host or ("127.0.0.1" if self.host in ("0.0.0.0", "") else self.host)
        return f"http://{host}:{self.port}"

    def count(self, why: str) -> None:
        with self._lock:
            self.problems[why] += 1

    def refuse(self, why: str) -> None:
        with self._lock:
            self.refused[why] += 1

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


def own_address() -> str:
    """This machine's address on its network (a container's, as other containers reach it),
    or loopback when it has none."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
