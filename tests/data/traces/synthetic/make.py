"""Writes the synthetic traces of this folder and their eval sets (see README.md):
``.venv/bin/python tests/data/traces/synthetic/make.py``. Deterministic; no dependencies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SYSTEM = "You are a weather assistant."


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def _span(
    trace: int, span: int, parent: int | None, name: str, attributes: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:08x}{span:08x}",
        "name": name,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + trace * 1_000_000_000 + span * 1000),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + trace * 1_000_000_000 + 900_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
        **extra,
    }
    if parent is not None:
        out["parentSpanId"] = f"{trace:08x}{parent:08x}"
    return out


def _otlp(service: str, spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": _value(service)}]},
                "scopeSpans": [{"scope": {"name": "synthetic"}, "spans": spans}],
            }
        ]
    }


def _turn(user: str, answer: str | None, tools: list[dict[str, Any]], i: str) -> dict[str, Any]:
    turn: dict[str, Any] = {
        "invocation_id": i,
        "user_content": {"role": "user", "parts": [{"text": user}]},
        "intermediate_data": {"tool_uses": tools},
    }
    if answer is not None:
        turn["final_response"] = {"role": "model", "parts": [{"text": answer}]}
    return turn


def _case(eval_id: str, *turns: dict[str, Any]) -> dict[str, Any]:
    state = {"app_name": "weather_agent", "user_id": "u", "state": {}}
    return {"eval_id": eval_id, "conversation": list(turns), "session_input": state}


def _weather(city: str) -> list[dict[str, Any]]:
    return [{"name": "get_weather", "args": {"city": city}}]


# --- OpenLLMetry's indexed gen_ai.prompt.N.* / gen_ai.completion.N.* ------------------------


def _chat(
    trace: int, span: int, prompts: list[dict[str, Any]], completion: dict[str, Any]
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "llm.request.type": "chat",
    }
    for prefix, messages in (("gen_ai.prompt", prompts), ("gen_ai.completion", [completion])):
        for n, message in enumerate(messages):
            for key, value in message.items():
                if key == "tool_calls":
                    for m, call in enumerate(value):
                        for field, v in call.items():
                            attributes[f"{prefix}.{n}.tool_calls.{m}.{field}"] = v
                else:
                    attributes[f"{prefix}.{n}.{key}"] = value
    return _span(trace, span, 1, "openai.chat", attributes)


def _indexed_trace(trace: int, city: str, answer: str) -> list[dict[str, Any]]:
    user = {"role": "user", "content": f"What is the weather in {city}?"}
    call = {"id": f"call_{trace}", "name": "get_weather", "arguments": json.dumps({"city": city})}
    asked = {"role": "assistant", "finish_reason": "tool_calls", "tool_calls": [call]}
    told = {"role": "tool", "tool_call_id": f"call_{trace}", "content": '{"temperature": 22}'}
    system = {"role": "system", "content": SYSTEM}
    return [
        _span(trace, 1, None, "weather.workflow", {"traceloop.span.kind": "workflow"}),
        _chat(trace, 2, [system, user], asked),
        _span(trace, 3, 1, "get_weather.tool", {"traceloop.span.kind": "tool"}),
        _chat(trace, 4, [system, user, asked, told], {"role": "assistant", "content": answer}),
    ]


def _paris_and_rome(set_id: str, paris: str, rome: str) -> dict[str, Any]:
    """The eval set of a Paris turn and a Rome turn: paris matches the trace, rome expects
    other tool arguments."""
    return {
        "eval_set_id": set_id,
        "name": set_id,
        "description": "paris matches the trace; rome expects other tool arguments.",
        "eval_cases": [
            _case("paris", _turn("What is the weather in Paris?", paris, _weather("Paris"), "p1")),
            _case(
                "rome",
                _turn("What is the weather in Rome?", rome, _weather("Rome, Italy"), "r1"),
            ),
        ],
    }


def indexed() -> tuple[dict[str, Any], dict[str, Any]]:
    paris, rome = "It is sunny in Paris, 22 degrees.", "It is sunny in Rome, 22 degrees."
    trace = _otlp(
        "openllmetry", _indexed_trace(1, "Paris", paris) + _indexed_trace(2, "Rome", rome)
    )
    evalset = _paris_and_rome("openllmetry_indexed", paris, rome)
    return trace, evalset


# --- failed agent spans: turns though they hold nothing ---------------------------------------


def failed() -> tuple[dict[str, Any], dict[str, Any]]:
    conversation = {"gen_ai.conversation.id": "conv-1"}
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"}
    user, answer = "What is the weather in Paris?", "It is sunny in Paris, 22 degrees."
    messages = {
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": user}]}],
        "gen_ai.output.messages": [
            {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
        ],
    }
    spans = [
        _span(1, 1, None, "invoke_agent weather_agent", {**agent, **conversation, **messages}),
        _span(1, 2, 1, "chat gpt-4o-mini", {"gen_ai.operation.name": "chat"}),
        _span(
            1,
            3,
            1,
            "execute_tool get_weather",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}),
            },
        ),
        _span(
            2,
            1,
            None,
            "invoke_agent weather_agent",
            {**agent, **conversation},
            status={"code": "STATUS_CODE_ERROR", "message": "model unavailable"},
        ),
        _span(
            3,
            1,
            None,
            "invoke_agent weather_agent",
            {**agent, **conversation, "error.type": "timeout"},
        ),
        _span(
            4, 1, None, "invoke_agent weather_agent", {**agent, **conversation}, status={"code": 1}
        ),
    ]
    evalset = {
        "eval_set_id": "failed_agent_spans",
        "name": "failed_agent_spans",
        "description": (
            "One conversation of four agent spans: the first answers, the second fails (status "
            "error), the third records an error.type, the fourth (status ok, nothing in it) is no "
            "turn; so three turns, the last two with no tool and no answer."
        ),
        "eval_cases": [
            _case(
                "paris_then_failures",
                _turn(user, answer, _weather("Paris"), "t1"),
                _turn("And in Berlin?", "It is cloudy in Berlin.", _weather("Berlin"), "t2"),
                _turn("And in Rome?", "It is sunny in Rome.", _weather("Rome"), "t3"),
            )
        ],
    }
    return _otlp("failing-agent", spans), evalset


# --- provider-only traces: a tool round's model calls each a root span -----------------------


def _provider_round(trace: int, span: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
    }
    return _span(trace, span, None, "chat gpt-4o-mini", attributes)


def _provider_trace(trace: int, city: str, answer: str, call_id: str | None) -> list[Any]:
    user = {
        "role": "user",
        "parts": [{"type": "text", "content": f"What is the weather in {city}?"}],
    }
    call = {"type": "tool_call", "name": "get_weather", "arguments": {"city": city}}
    response = {"type": "tool_call_response", "response": {"temperature": 22}}
    if call_id:
        call, response = {**call, "id": call_id}, {**response, "id": call_id}
    asked = {"role": "assistant", "parts": [call], "finish_reason": "tool_call"}
    told = {"role": "tool", "parts": [response]}
    said = {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
    return [
        _provider_round(trace, 1, [user], [asked]),
        _provider_round(trace, 2, [user, asked, told], [said]),
    ]


def provider_only() -> tuple[dict[str, Any], dict[str, Any]]:
    paris, rome = "It is sunny in Paris, 22 degrees.", "It is sunny in Rome, 22 degrees."
    spans = _provider_trace(1, "Paris", paris, "call_1") + _provider_trace(2, "Rome", rome, None)
    evalset = _paris_and_rome("provider_only", paris, rome)
    return _otlp("provider-only", spans), evalset


def _jaeger_tag(key: str, value: dict[str, Any]) -> dict[str, Any]:
    if "boolValue" in value:
        return {"key": key, "type": "bool", "value": value["boolValue"]}
    if "intValue" in value:
        return {"key": key, "type": "int64", "value": int(value["intValue"])}
    return {"key": key, "type": "string", "value": value["stringValue"]}


def jaeger(otlp: dict[str, Any]) -> dict[str, Any]:
    """The OTLP trace as Jaeger's JSON: status as Jaeger's tags (``otel.status_code``), and a
    span recording an ``error.type`` recorded with the ``error`` tag instead."""
    spans = [s for r in otlp["resourceSpans"] for c in r["scopeSpans"] for s in c["spans"]]
    traces: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        tags = [_jaeger_tag(a["key"], a["value"]) for a in span["attributes"]]
        if any(t["key"] == "error.type" for t in tags):
            tags = [t for t in tags if t["key"] != "error.type"]
            tags.append({"key": "error", "type": "bool", "value": True})
        code = span.get("status", {}).get("code")
        if code in ("STATUS_CODE_ERROR", 2, "STATUS_CODE_OK", 1):
            status = "ERROR" if code in ("STATUS_CODE_ERROR", 2) else "OK"
            tags.append({"key": "otel.status_code", "type": "string", "value": status})
        start = int(span["startTimeUnixNano"]) // 1000
        traces.setdefault(span["traceId"], []).append(
            {
                "traceID": span["traceId"],
                "spanID": span["spanId"],
                "operationName": span["name"],
                "references": [
                    {"refType": "CHILD_OF", "traceID": span["traceId"], "spanID": parent}
                    for parent in [span.get("parentSpanId")]
                    if parent
                ],
                "startTime": start,
                "duration": int(span["endTimeUnixNano"]) // 1000 - start,
                "tags": tags,
                "processID": "p1",
            }
        )
    process = {"p1": {"serviceName": "failing-agent", "tags": []}}
    return {"data": [{"traceID": t, "spans": s, "processes": process} for t, s in traces.items()]}


def main() -> None:
    for name, (trace, evalset) in {
        "openllmetry-indexed": indexed(),
        "failed-agent": failed(),
        "provider-only": provider_only(),
    }.items():
        (HERE / f"{name}.otlp.json").write_text(json.dumps(trace, indent=1) + "\n")
        (HERE / f"{name}.evalset.json").write_text(json.dumps(evalset, indent=2) + "\n")
    (HERE / "failed-agent.jaeger.json").write_text(json.dumps(jaeger(failed()[0]), indent=1) + "\n")


if __name__ == "__main__":
    main()
