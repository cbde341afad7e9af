"""Record the traces in this folder: google-adk 2.13's DEFAULT telemetry (OpenTelemetry GenAI
semantic conventions: ``invoke_workflow`` / ``invoke_agent`` / ``generate_content`` /
``execute_tool`` spans, no ``call_llm``) of an LLM-free ``LlmAgent`` over weather.evalset.json:

    .venv/bin/python tests/data/traces/adk-2.13/make.py

- ``content.otlp.json``: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``, the
  messages in ``gen_ai.input.messages`` / ``gen_ai.output.messages`` and the tools' arguments and
  results in ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``;
- ``no-content.otlp.json``: content capture off (ADK's default): the spans, tool names and ids
  only; no user message to match a case by, so ``no-content.evalset.json`` is the eval set with
  each case's ``session_input.session_id`` (ADK's own field) the conversation it was recorded in.

The agent is tests/traced_agent.py's (the sample weather agent's logic as a ``BaseLlm``, its real
``FunctionTool``s); each file is recorded in a subprocess of its own, as ADK reads the telemetry
variables when it is imported. OTLP JSON as the collector's file exporter writes it (camelCase,
64-bit integers as strings), with span events. Deterministic: ids are counters, times are each
timestamp's rank (order kept), and the uuids ADK makes (sessions, invocations, events, tool calls)
are numbered in order of appearance.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
EVALSET = HERE / "weather.evalset.json"
FILES = {"content.otlp.json": "SPAN_ONLY", "no-content.otlp.json": None}
EPOCH_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    from tests.traced_agent import otlp_value  # an attribute's value, as the other traces'

    return [{"key": k, "value": otlp_value(v)} for k, v in (attributes or {}).items()]


def to_otlp(spans: Sequence[Any]) -> dict[str, Any]:
    times = sorted({t for s in spans for t in (s.start_time, s.end_time)} | {
        e.timestamp for s in spans for e in s.events
    })  # fmt: skip
    rank = {t: EPOCH_NS + i * 1_000_000 for i, t in enumerate(times)}
    scopes: dict[str, list[dict[str, Any]]] = {}
    for span in sorted(spans, key=lambda s: (s.start_time, s.context.span_id)):
        item: dict[str, Any] = {
            "traceId": f"{span.context.trace_id:032x}",
            "spanId": f"{span.context.span_id:016x}",
            "name": span.name,
            "kind": span.kind.value + 1,  # OTLP numbers SPAN_KIND_INTERNAL 1
            "startTimeUnixNano": str(rank[span.start_time]),
            "endTimeUnixNano": str(rank[span.end_time]),
            "attributes": _attributes(span.attributes),
            "status": {"code": span.status.status_code.value}
            if span.status.status_code.value
            else {},
        }
        if span.parent is not None:
            item["parentSpanId"] = f"{span.parent.span_id:016x}"
        if span.events:
            item["events"] = [
                {
                    "timeUnixNano": str(rank[e.timestamp]),
                    "name": e.name,
                    "attributes": _attributes(e.attributes),
                }
                for e in span.events
            ]
        scopes.setdefault(span.instrumentation_scope.name, []).append(item)
    resource = {"attributes": _attributes({"service.name": "weather_agent"})}
    return {
        "resourceSpans": [
            {
                "resource": resource,
                "scopeSpans": [{"scope": {"name": n}, "spans": s} for n, s in scopes.items()],
            }
        ]
    }


def _numbered(text: str) -> str:
    """Each distinct uuid ADK made, numbered in order of appearance (its form kept)."""
    seen: dict[str, str] = {}

    def number(match: re.Match[str]) -> str:
        return seen.setdefault(match[0], f"00000000-0000-4000-8000-{len(seen) + 1:012d}")

    return UUID.sub(number, text)


def record(out: Path) -> None:
    """In this process: run the agent over the eval set, write its spans to ``out``."""
    sys.path.insert(0, str(REPO))
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    from tests import traced_agent

    class Counting(IdGenerator):
        def __init__(self) -> None:
            self.spans = self.traces = 0

        def generate_span_id(self) -> int:
            self.spans += 1
            return self.spans

        def generate_trace_id(self) -> int:
            self.traces += 1
            return self.traces

    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=Counting())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    asyncio.run(traced_agent._record(json.loads(EVALSET.read_text())))
    text = json.dumps(to_otlp(exporter.get_finished_spans()), indent=1)
    out.write_text(_numbered(text) + "\n")


def conversations(otlp: dict[str, Any]) -> list[str]:
    """The ``gen_ai.conversation.id`` of each conversation, in the order it began."""
    ids: list[str] = []
    for resource in otlp["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attr in span["attributes"]:
                    value = attr["value"].get("stringValue")
                    if attr["key"] == "gen_ai.conversation.id" and value not in ids:
                        ids.append(value)
    return ids


def main() -> None:
    for name, capture in FILES.items():
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ADK_", "OTEL_"))}
        if capture:
            env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = capture
        subprocess.run(
            [sys.executable, __file__, "--record", str(HERE / name)], env=env, check=True
        )
    evalset = json.loads(EVALSET.read_text())
    ids = conversations(json.loads((HERE / "no-content.otlp.json").read_text()))
    for case, session_id in zip(evalset["eval_cases"], ids, strict=True):
        case["session_input"]["session_id"] = session_id
    (HERE / "no-content.evalset.json").write_text(json.dumps(evalset, indent=1) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        record(Path(sys.argv[2]))
    else:
        main()
