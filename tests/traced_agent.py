"""Record real OpenTelemetry traces of an ADK agent over an eval set's conversations, and write
them as Jaeger JSON and OTLP JSON:

    python -m tests.traced_agent EVALSET OUT_DIR   →  OUT_DIR/traces.jaeger.json, traces.otlp.json

The sample weather agent (samples/agents/weather_agent) is a ``BaseAgent`` that yields its
events itself, so ADK records no ``call_llm`` or ``execute_tool`` span for it: it calls no model
and runs no tool. Traces such as agentevals reads come from an ``LlmAgent``; here the same
logic (``logic.respond``) is its model, a ``BaseLlm`` that answers without any network, and its
functions are the agent's real ``FunctionTool``s, so ADK's own instrumentation records the
spans a model-backed agent's run has. ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`` (google-adk
2.13.0, ``telemetry/_schema_version.py``) asks for the schema with ``call_llm`` spans and the
``gcp.vertex.agent.*`` content attributes; the caller sets it, before ADK is imported.

The two exporters are this file's own, written from the formats' documentation: Jaeger's query
API JSON (``{"data": [{"traceID", "spans": [{"spanID", "operationName", "references",
"startTime" µs, "duration" µs, "tags": [{"key", "type", "value"}]}]}]}``) and OTLP/JSON
(``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [{"traceId", "spanId",
"parentSpanId", "name", "startTimeUnixNano", "endTimeUnixNano", "attributes": [{"key",
"value": {"stringValue" | "intValue" | "boolValue" | "doubleValue" | "arrayValue"}}]}]}]}]}``,
64-bit integers as strings, ids as lower-case hex).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples/agents/weather_agent"))
from logic import calculate, get_time, get_weather, respond


def _jaeger_tag(key: str, value: Any) -> dict[str, Any]:
    kind = {bool: "bool", int: "int64", float: "float64"}.get(type(value), "string")
    if isinstance(value, tuple | list):
        value = json.dumps(list(value))
    return {"key": key, "type": kind, "value": value}


def to_jaeger(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    traces: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        trace_id = f"{span.context.trace_id:032x}"
        references = []
        if span.parent is not None:
            references.append(
                {
                    "refType": "CHILD_OF",
                    "traceID": trace_id,
                    "spanID": f"{span.parent.span_id:016x}",
                }
            )
        traces.setdefault(trace_id, []).append(
            {
                "traceID": trace_id,
                "spanID": f"{span.context.span_id:016x}",
                "operationName": span.name,
                "references": references,
                "startTime": (span.start_time or 0) // 1000,
                "duration": ((span.end_time or 0) - (span.start_time or 0)) // 1000,
                "tags": [_jaeger_tag(k, v) for k, v in (span.attributes or {}).items()],
                "processID": "p1",
            }
        )
    return {
        "data": [
            {"traceID": t, "spans": s, "processes": {"p1": {"serviceName": "weather_agent"}}}
            for t, s in traces.items()
        ]
    }


def otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, tuple | list):
        return {"arrayValue": {"values": [otlp_value(v) for v in value]}}
    return {"stringValue": str(value)}


def to_otlp(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    out = []
    for span in spans:
        item: dict[str, Any] = {
            "traceId": f"{span.context.trace_id:032x}",
            "spanId": f"{span.context.span_id:016x}",
            "name": span.name,
            "kind": 1,
            "startTimeUnixNano": str(span.start_time or 0),
            "endTimeUnixNano": str(span.end_time or 0),
            "attributes": [
                {"key": k, "value": otlp_value(v)} for k, v in (span.attributes or {}).items()
            ],
        }
        if span.parent is not None:
            item["parentSpanId"] = f"{span.parent.span_id:016x}"
        out.append(item)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [{"scope": {"name": "gcp.vertex.agent"}, "spans": out}],
            }
        ]
    }


async def _record(evalset: dict[str, Any]) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    def text(content: types.Content) -> str:
        return "".join(p.text or "" for p in content.parts or [])

    class WeatherLogic(BaseLlm):
        """The sample agent's logic as a model: a tool call first, then the answer."""

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            contents = llm_request.contents
            asked = [i for i, c in enumerate(contents) if c.role == "user" and text(c)]
            message = text(contents[asked[-1]])
            # the agent's memory, as agent.py has it: its last answer in the session
            previous = next(
                (text(c) for c in reversed(contents[: asked[-1]]) if c.role == "model" and text(c)),
                None,
            )
            reply = respond(message, previous)
            answered = any(p.function_response for p in contents[-1].parts or [])
            parts = (
                [
                    types.Part(function_call=types.FunctionCall(name=c.name, args=c.args))
                    for c in reply.calls
                ]
                if reply.calls and not answered
                else [types.Part(text=reply.text)]
            )
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    agent = LlmAgent(
        name="weather_agent",
        model=WeatherLogic(model="weather-logic"),
        tools=[get_weather, get_time, calculate],
    )
    runner = InMemoryRunner(agent=agent, app_name="weather_agent")
    for case in evalset["eval_cases"]:
        session = await runner.session_service.create_session(
            app_name="weather_agent", user_id="eval_user"
        )
        for invocation in case["conversation"]:
            message = types.Content.model_validate(invocation["user_content"])
            async for _ in runner.run_async(
                user_id="eval_user", session_id=session.id, new_message=message
            ):
                pass


def main(argv: list[str]) -> None:
    evalset, out = json.loads(Path(argv[0]).read_text()), Path(argv[1])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    asyncio.run(_record(evalset))
    spans = exporter.get_finished_spans()
    (out / "traces.jaeger.json").write_text(json.dumps(to_jaeger(spans), indent=1))
    (out / "traces.otlp.json").write_text(json.dumps(to_otlp(spans), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
