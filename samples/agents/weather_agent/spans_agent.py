"""The sample agent instrumented with OpenTelemetry: it replies with text only, and its tool
calls are in the spans it exports — what a deployed agent usually does. ``ci-eval run --otlp``
scores it on those spans:

    ci-eval run samples/evals/weather_basic.evalset.json --otlp --agent command \\
        --agent-command "python samples/agents/weather_agent/spans_agent.py"

    python samples/agents/weather_agent/spans_agent.py --http 8010   # an http agent instead

Each turn runs under the W3C trace context ci-eval sends (the request's ``traceparent``, or
the header for ``--http``): an ``invoke_agent`` span and one ``execute_tool`` span per tool
call, with the GenAI semantic conventions' attributes. The OpenTelemetry SDK's OTLP/HTTP
exporter (protobuf) sends them where ``OTEL_EXPORTER_OTLP_ENDPOINT`` says, which ci-eval sets
for a command agent. Needs ``pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from logic import respond

try:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError:
    sys.exit(
        "spans_agent.py needs the OpenTelemetry SDK: "
        "pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http"
    )

provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
# a batch processor, as a deployed agent has; OTEL_BSP_SCHEDULE_DELAY (ci-eval sets 100 ms for
# a command agent) says how soon a batch goes
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("weather-agent")


def answer(message: str, previous: str | None, traceparent: str | None) -> dict[str, Any]:
    """One turn, traced under ``traceparent``; the reply says nothing of its tool calls."""
    carrier = {"traceparent": traceparent} if traceparent else {}
    context = TraceContextTextMapPropagator().extract(carrier)
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"}
    with tracer.start_as_current_span("invoke_agent weather_agent", context, attributes=attributes):
        reply = respond(message, previous)
        for n, call in enumerate(reply.calls, 1):
            with tracer.start_as_current_span(
                f"execute_tool {call.name}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.name,
                    "gen_ai.tool.call.id": f"call_{n}",
                    "gen_ai.tool.call.arguments": json.dumps(call.args),
                    "gen_ai.tool.call.result": json.dumps(call.result),
                },
            ):
                pass
    return {"final_response": reply.text}


def lines() -> None:
    previous = None  # one process per session: the agent's last reply is its memory
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        reply = answer(request.get("message", ""), previous, request.get("traceparent"))
        previous = reply["final_response"]
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def serve(port: int) -> None:
    memory: dict[str, str] = {}  # session id → the agent's last reply

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            session = request.get("session_id", "")
            traceparent = self.headers.get("traceparent")
            reply = answer(request.get("message", ""), memory.get(session), traceparent)
            memory[session] = reply["final_response"]
            body = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"serving on http://127.0.0.1:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    try:
        if sys.argv[1:2] == ["--http"]:
            serve(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
        else:
            lines()
    finally:
        provider.shutdown()  # the last batch goes before the agent exits
