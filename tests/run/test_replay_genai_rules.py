"""Rules agentevals 0.11 has for GenAI semantic-convention traces beyond the messages attributes
(``genai/overlay.py``, ``genai/extract.py``): OpenLLMetry's legacy indexed messages are read
when a span has no ``gen_ai.input.messages`` / ``gen_ai.output.messages``, and an agent span
that failed (status error, in OTLP or as Jaeger's tags, or an ``error.type``) is a turn though
it holds nothing, and a provider-only model call answering the previous one's tool call
continues its turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_replay

USER, ANSWER = "What is the weather in Paris?", "It is sunny in Paris, 22 degrees."
METRICS = ("--metric", "tool_trajectory_avg_score", "--metric", "response_match_score")


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]


def _span(
    trace: int, span: int, parent: int | None, attrs: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:08x}{span:08x}",
        "name": "span",
        "startTimeUnixNano": str(trace * 1000 + span),
        "attributes": _attributes(attrs),
        **extra,
    }
    return out | ({"parentSpanId": f"{trace:08x}{parent:08x}"} if parent else {})


def _otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def _turn(user: str, answer: str | None, tools: list[dict[str, Any]]) -> dict[str, Any]:
    turn: dict[str, Any] = {
        "user_content": {"role": "user", "parts": [{"text": user}]},
        "intermediate_data": {"tool_uses": tools},
    }
    if answer:
        turn["final_response"] = {"role": "model", "parts": [{"text": answer}]}
    return turn


PARIS = [{"name": "get_weather", "args": {"city": "Paris"}}]


def _actual(tmp_path: Path, trace: dict[str, Any], *turns: dict[str, Any]) -> list[Any]:
    """The invocations ci-eval replays for one case of ``turns`` from ``trace``."""
    (tmp_path / "trace.json").write_text(json.dumps(trace))
    cases = [{"eval_id": "case", "conversation": list(turns)}]
    (tmp_path / "set.evalset.json").write_text(
        json.dumps({"eval_set_id": "s", "eval_cases": cases})
    )
    results = tmp_path / "results.json"
    done = run_replay(
        str(tmp_path / "set.evalset.json"),
        *METRICS,
        "--results",
        str(results),
        replay=str(tmp_path / "trace.json"),
    )
    assert results.exists(), done.stdout + done.stderr
    (case,) = json.loads(results.read_text())["sets"][0]["cases"]
    return [inv["actual"] for inv in case["runs"][0]["invocations"]]


# --- OpenLLMetry's indexed messages -----------------------------------------------------------

_CHAT = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini"}
_ASKED = {
    "role": "assistant",
    "tool_calls.0.id": "call_1",
    "tool_calls.0.name": "get_weather",
    "tool_calls.0.arguments": '{"city": "Paris"}',
}


def _indexed(prefix: str, messages: list[dict[str, str]]) -> dict[str, str]:
    return {f"{prefix}.{n}.{k}": v for n, m in enumerate(messages) for k, v in m.items()}


def _openllmetry(**first_call: str) -> dict[str, Any]:
    user = {"role": "user", "content": USER}
    told = {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 22}'}
    return _otlp(
        [
            _span(1, 1, None, {"traceloop.span.kind": "workflow"}),
            _span(
                1,
                2,
                1,
                {**_CHAT, **_indexed("gen_ai.prompt", [user]), **first_call}
                | _indexed("gen_ai.completion", [_ASKED]),
            ),
            _span(
                1,
                3,
                1,
                _CHAT
                | _indexed("gen_ai.prompt", [user, _ASKED, told])
                | _indexed("gen_ai.completion", [{"role": "assistant", "content": ANSWER}]),
            ),
        ]
    )


def test_openllmetry_indexed_messages_are_the_turn_user_answer_and_tool_call(
    tmp_path: Path,
) -> None:
    (actual,) = _actual(tmp_path, _openllmetry(), _turn(USER, ANSWER, PARIS))
    assert actual["user_content"]["parts"] == [{"text": USER}]
    assert actual["final_response"]["parts"] == [{"text": ANSWER}]
    data = actual["intermediate_data"]
    assert data["tool_uses"] == [{"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}]
    assert [(r["id"], r["response"]) for r in data["tool_responses"]] == [
        ("call_1", {"temperature": 22})
    ]


def test_indexed_messages_are_not_read_when_the_span_has_its_messages_attribute(
    tmp_path: Path,
) -> None:
    said = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris, please"}]}]
    trace = _openllmetry(**{"gen_ai.input.messages": json.dumps(said)})
    (actual,) = _actual(tmp_path, trace, _turn("Weather in Paris, please", ANSWER, PARIS))
    assert actual["user_content"]["parts"] == [{"text": "Weather in Paris, please"}]


# --- failed agent spans -----------------------------------------------------------------------

_AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "c-1"}
_ANSWERED = {
    **_AGENT,
    "gen_ai.input.messages": json.dumps([{"role": "user", "content": USER}]),
    "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": ANSWER}]),
}
_TWO_TURNS = (_turn(USER, ANSWER, []), _turn("And in Rome?", None, []))


@pytest.mark.parametrize(
    ("attributes", "extra"),
    [
        pytest.param({}, {"status": {"code": 2}}, id="status-code-2"),
        pytest.param({}, {"status": {"code": "STATUS_CODE_ERROR"}}, id="status-enum-name"),
        pytest.param({"error.type": "timeout"}, {}, id="error-type"),
    ],
)
def test_a_failed_agent_span_with_nothing_in_it_is_a_turn(
    tmp_path: Path, attributes: dict[str, Any], extra: dict[str, Any]
) -> None:
    trace = _otlp([_span(1, 1, None, _ANSWERED), _span(2, 1, None, _AGENT | attributes, **extra)])
    first, failed = _actual(tmp_path, trace, *_TWO_TURNS)
    assert first["final_response"]["parts"] == [{"text": ANSWER}]
    assert failed.get("final_response") is None
    assert failed["intermediate_data"]["tool_uses"] == []


def test_an_agent_span_with_nothing_in_it_and_status_ok_is_no_turn(tmp_path: Path) -> None:
    trace = _otlp([_span(1, 1, None, _ANSWERED), _span(2, 1, None, _AGENT, status={"code": 1})])
    first, missing = _actual(tmp_path, trace, *_TWO_TURNS)
    assert first["final_response"]["parts"] == [{"text": ANSWER}]
    assert missing is None


def _jaeger(tags: list[dict[str, Any]]) -> dict[str, Any]:
    def span(trace: int, attrs: dict[str, str], more: list[dict[str, Any]]) -> dict[str, Any]:
        listed = [{"key": k, "type": "string", "value": v} for k, v in attrs.items()]
        return {
            "traceID": f"{trace:032x}",
            "spanID": f"{trace:016x}",
            "operationName": "invoke_agent",
            "startTime": trace,
            "tags": listed + more,
        }

    return {
        "data": [
            {"traceID": f"{t:032x}", "spans": [s]}
            for t, s in ((1, span(1, _ANSWERED, [])), (2, span(2, _AGENT, tags)))
        ]
    }


@pytest.mark.parametrize(
    "tags",
    [
        pytest.param(
            [{"key": "otel.status_code", "type": "string", "value": "error"}], id="otel.status_code"
        ),
        pytest.param([{"key": "error", "type": "bool", "value": True}], id="error-tag"),
    ],
)
def test_a_failed_agent_span_in_a_jaeger_trace_is_a_turn(
    tmp_path: Path, tags: list[dict[str, Any]]
) -> None:
    first, failed = _actual(tmp_path, _jaeger(tags), *_TWO_TURNS)
    assert first["final_response"]["parts"] == [{"text": ANSWER}]
    assert failed is not None and failed.get("final_response") is None


# --- provider-only traces: tool rounds joined -------------------------------------------------


def _round(span: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
    }
    return _span(1, span, None, attrs)


def _provider_only(answered_id: str) -> dict[str, Any]:
    user = {"role": "user", "content": USER}
    call = {
        "type": "tool_call",
        "id": "call_1",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }
    asked = {"role": "assistant", "parts": [call]}
    told = {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": answered_id, "response": {"temperature": 22}}
        ],
    }
    return _otlp(
        [
            _round(1, [user], [asked]),
            _round(2, [user, asked, told], [{"role": "assistant", "content": ANSWER}]),
        ]
    )


def test_a_provider_only_round_answering_the_previous_rounds_tool_call_is_the_same_turn(
    tmp_path: Path,
) -> None:
    (actual,) = _actual(tmp_path, _provider_only("call_1"), _turn(USER, ANSWER, PARIS))
    assert actual["user_content"]["parts"] == [{"text": USER}]
    assert actual["final_response"]["parts"] == [{"text": ANSWER}]
    data = actual["intermediate_data"]
    assert data["tool_uses"] == [{"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}]
    assert [r["response"] for r in data["tool_responses"]] == [{"temperature": 22}]


def test_a_provider_only_round_answering_another_tool_call_is_a_turn_of_its_own(
    tmp_path: Path,
) -> None:
    first, second = _actual(
        tmp_path, _provider_only("call_9"), _turn(USER, None, PARIS), _turn(USER, ANSWER, [])
    )
    assert first.get("final_response") is None
    assert second["final_response"]["parts"] == [{"text": ANSWER}]
