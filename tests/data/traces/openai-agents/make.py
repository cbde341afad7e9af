"""Write traces.json: an OpenAI Agents SDK agent's OpenTelemetry GenAI spans, made offline.

The agent is a real ``agents.Agent`` with one function tool (``get_weather``) on the SDK's own
``OpenAIResponsesModel``; its ``AsyncOpenAI`` client talks to an in-process ``httpx.MockTransport``
that answers the Responses API with scripted responses, so the SDK, the model class and the
instrumentation run as they do against OpenAI, and no socket is opened (``socket.connect`` is
refused for the whole run). Spans come from ``opentelemetry-instrumentation-openai-agents-v2``
with message content captured on the spans
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only``), collected by the SDK's
in-memory exporter and written as OTLP JSON the way the Collector's file exporter writes it
(camelCase keys, hex ids, integer enums, 64-bit integers as strings).

Each conversation runs as its own process would: its own ``TracerProvider`` whose resource
carries ``service.name`` and ``session.id`` (the conversation's name), so the two turns of the
multi-turn conversation (two ``Runner.run`` calls, two traces) share a ``session.id``.

Run it in a venv of its own (``requirements.txt`` pins the versions it was made with):

    python3 -m venv /tmp/fw && /tmp/fw/bin/pip install -r requirements.txt
    /tmp/fw/bin/python make.py          # rewrites traces.json beside this file
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
os.environ["OTEL_INSTRUMENTATION_OPENAI_AGENTS_CAPTURE_METRICS"] = "false"


def _refuse(*_args: object, **_kwargs: object) -> None:
    raise OSError("make.py runs offline: no socket may connect")


socket.socket.connect = _refuse  # type: ignore[method-assign]
socket.create_connection = _refuse  # type: ignore[assignment]

import httpx2 as httpx  # noqa: E402  (openai 3.x speaks httpx2)
from agents import (  # noqa: E402
    Agent,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_trace_processors,
)
from google.protobuf.json_format import MessageToDict  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

HERE = Path(__file__).resolve().parent
MODEL = "gpt-4o-mini"
WEATHER = {
    "Paris": "sunny, 20 °C",
    "Tokyo": "rainy, 16 °C",
    "London": "cloudy, 12 °C",
    "Rome": "windy, 18 °C",
}


@function_tool
def get_weather(city: str) -> str:
    """Return the current weather in a city."""
    return WEATHER.get(city, "unknown")


def _usage(inp: int, out: int) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "total_tokens": inp + out,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }


def tool_call(n: int, city: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": "get_weather",
        "arguments": json.dumps({"city": city}),
        "status": "completed",
    }


def text(n: int, words: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": words, "annotations": []}],
    }


class ScriptedResponses:
    """The fake model server: each POST /responses gets the next scripted output item."""

    def __init__(self, outputs: list[dict[str, Any]]):
        self._outputs: Iterator[dict[str, Any]] = iter(outputs)
        self._n = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/responses"), request.url
        self._n += 1
        item = next(self._outputs)
        body = {
            "id": f"resp_{self._n}",
            "object": "response",
            "created_at": 1_760_000_000 + self._n,
            "model": MODEL,
            "status": "completed",
            "output": [item],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": _usage(50 + 10 * self._n, 12),
        }
        return httpx.Response(200, json=body)


def make_agent(script: ScriptedResponses) -> Agent:
    client = AsyncOpenAI(
        api_key="sk-fake",
        base_url="http://fake-model.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(script)),
        max_retries=0,
    )
    return Agent(
        name="Weather Agent",
        instructions="You answer questions about the weather; get_weather gives a city's weather.",
        tools=[get_weather],
        model=OpenAIResponsesModel(model=MODEL, openai_client=client),
    )


# (conversation name, user texts, scripted model outputs in call order)
CONVERSATIONS: list[tuple[str, list[str], list[dict[str, Any]]]] = [
    (
        "weather_paris",
        ["What is the weather in Paris?"],
        [tool_call(1, "Paris"), text(2, "It is sunny and 20 °C in Paris.")],
    ),
    (
        "greeting",
        ["Hi! What can you do?"],
        [text(1, "I can tell you the current weather in any city.")],
    ),
    (
        "weather_rome",
        ["How is the weather in Rome today?"],
        [tool_call(1, "Rome"), text(2, "It is windy and 18 °C in Rome.")],
    ),
    (
        "weather_multi_turn",
        ["What is the weather in Tokyo?", "And in London?"],
        [
            tool_call(1, "Tokyo"),
            text(2, "It is rainy and 16 °C in Tokyo."),
            tool_call(3, "London"),
            text(4, "It is cloudy and 12 °C in London."),
        ],
    ),
]


async def converse(agent: Agent, user_texts: list[str]) -> None:
    history: list[Any] = []
    for words in user_texts:
        result = await Runner.run(agent, [*history, {"role": "user", "content": words}])
        history = result.to_input_list()


def ids_to_hex(node: Any) -> Any:
    """MessageToDict writes bytes as base64; OTLP JSON writes trace and span ids as hex."""
    if isinstance(node, list):
        return [ids_to_hex(item) for item in node]
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str)
            else ids_to_hex(value)
            for key, value in node.items()
        }
    return node


def main() -> None:
    set_trace_processors([])  # no upload to OpenAI's trace backend; OpenTelemetry only
    resource_spans: list[dict[str, Any]] = []
    for name, user_texts, outputs in CONVERSATIONS:
        exporter = InMemorySpanExporter()
        provider = TracerProvider(
            resource=Resource.create({"service.name": "weather-agent", "session.id": name})
        )
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        instrumentor = OpenAIAgentsInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        asyncio.run(converse(make_agent(ScriptedResponses(outputs)), user_texts))
        instrumentor.uninstrument()
        provider.shutdown()
        request = encode_spans(exporter.get_finished_spans())
        document = MessageToDict(request, use_integers_for_enums=True)
        resource_spans.extend(ids_to_hex(document["resourceSpans"]))
    out = HERE / "traces.json"
    out.write_text(
        json.dumps({"resourceSpans": resource_spans}, indent=1, ensure_ascii=False) + "\n"
    )
    count = sum(len(scope["spans"]) for r in resource_spans for scope in r["scopeSpans"])
    print(f"wrote {out.name}: {count} spans")


if __name__ == "__main__":
    main()
