"""Bad and hostile trace files given to ``--replay`` are one line naming the file and the JSON
path of the span, never a traceback; a good one is read as ADK invocations."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors.replay import load_recordings
from ci_eval.connectors.traces import is_trace_file, read_sessions
from tests.helpers import run_cli

EVALSET = Path(__file__).resolve().parents[2] / "samples/evals/weather_basic.evalset.json"


def _call_llm(span_id: str, parent: str, request: Any, response: Any, **extra: Any) -> dict:
    tags = {
        "gcp.vertex.agent.invocation_id": "e-1",
        "gcp.vertex.agent.session_id": "s-1",
        "gcp.vertex.agent.llm_request": request
        if isinstance(request, str)
        else json.dumps(request),
        "gcp.vertex.agent.llm_response": json.dumps(response),
        **extra,
    }
    return {
        "spanID": span_id,
        "operationName": "call_llm",
        "references": [{"refType": "CHILD_OF", "spanID": parent}],
        "startTime": int(span_id, 16),
        "tags": [{"key": k, "value": v} for k, v in tags.items()],
    }


def _jaeger(*spans: dict) -> dict:
    return {"data": [{"traceID": "t1", "spans": list(spans)}]}


USER = {"contents": [{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}]}
WEATHER = {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}
CALL = {"content": {"role": "model", "parts": [WEATHER]}}
ANSWER = {"content": {"role": "model", "parts": [{"text": "It is sunny in Paris, 22 degrees."}]}}
INVOKE = {"spanID": "a0", "operationName": "invoke_agent weather_agent", "tags": []}


def test_a_jaeger_trace_without_tool_spans_takes_the_calls_the_model_asked_for() -> None:
    data = _jaeger(INVOKE, _call_llm("a1", "a0", USER, CALL), _call_llm("a2", "a0", USER, ANSWER))
    assert is_trace_file(data)
    [session] = read_sessions(data, "t.json")
    [inv] = session.invocations
    assert session.session_id == "s-1"
    assert inv["user_content"]["parts"] == [{"text": "What is the weather in Paris?"}]
    assert inv["final_response"]["parts"] == [{"text": "It is sunny in Paris, 22 degrees."}]
    assert inv["intermediate_data"]["tool_uses"] == [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": None}
    ]


def _tool(**tags: Any) -> dict:
    return {
        "spanID": "b1",
        "operationName": "execute_tool get_weather",
        "references": [{"refType": "CHILD_OF", "spanID": "a0"}],
        "tags": [{"key": k, "value": v} for k, v in tags.items()],
    }


BAD = {
    "llm_request not JSON": (
        _jaeger(INVOKE, _call_llm("a1", "a0", "{not json", ANSWER)),
        r"\$\.data\[0\]\.spans\[1\]: gcp\.vertex\.agent\.llm_request: not JSON",
    ),
    "llm_request nested past the limit": (
        _jaeger(INVOKE, _call_llm("a1", "a0", "[" * 100_000 + "]" * 100_000, ANSWER)),
        r"\$\.data\[0\]\.spans\[1\]: gcp\.vertex\.agent\.llm_request: not JSON",
    ),
    "no user message": (
        _jaeger(INVOKE, _call_llm("a1", "a0", {"contents": []}, ANSWER)),
        r"\$\.data\[0\]\.spans\[1\]: gcp\.vertex\.agent\.llm_request: no user message",
    ),
    "no invocation id": (
        _jaeger(INVOKE, _call_llm(
            "a1", "a0", USER, ANSWER, **{"gcp.vertex.agent.invocation_id": 7})),
        r"gcp\.vertex\.agent\.invocation_id: expected a non-empty string",
    ),
    "tool args not an object": (
        _jaeger(INVOKE, _call_llm("a1", "a0", USER, ANSWER), _tool(**{
            "gen_ai.tool.name": "get_weather", "gcp.vertex.agent.tool_call_args": "[1]"})),
        r"\$\.data\[0\]\.spans\[2\]: gcp\.vertex\.agent\.tool_call_args: expected a JSON object",
    ),
    "tool without a name": (
        _jaeger(INVOKE, _call_llm("a1", "a0", USER, ANSWER), _tool()),
        r"\$\.data\[0\]\.spans\[2\]: gen_ai\.tool\.name: expected a string",
    ),
    "tags not a list": (
        _jaeger({"spanID": "a0", "operationName": "x", "tags": {"k": "v"}}),
        r"\$\.data\[0\]\.spans\[0\]\.tags: expected a list",
    ),
    "span id missing": (
        _jaeger({"operationName": "call_llm"}),
        r"\$\.data\[0\]\.spans\[0\]: spanID: expected a non-empty string",
    ),
    "no ADK spans": (_jaeger(INVOKE), r"no ADK call_llm spans"),
    "OTLP start time not a number": (
        {"resourceSpans": [{"scopeSpans": [{"spans": [
            {"spanId": "a1", "name": "call_llm", "startTimeUnixNano": "soon"}]}]}]},
        r"\.scopeSpans\[0\]\.spans\[0\]: startTimeUnixNano: expected a number",
    ),
    "OTLP spans not a list": (
        {"resourceSpans": [{"scopeSpans": [{"spans": "all of them"}]}]},
        r"\$\.resourceSpans\[0\]\.scopeSpans\[0\]\.spans: expected a list",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_trace_file_is_one_line_naming_the_file_and_the_span(
    name: str, tmp_path: Path
) -> None:
    data, message = BAD[name]
    traces = tmp_path / "traces.json"
    traces.write_text(json.dumps(data), "utf-8")
    proc = run_cli(
        "run", str(EVALSET), "--agent", "replay", "--replay", str(traces), cwd=tmp_path
    )  # fmt: skip
    assert proc.returncode != 0 and proc.returncode != 1, proc.stdout + proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "traces.json" in line]
    assert "Traceback" not in proc.stderr
    assert str(traces) in line
    assert re.search(message, line), line


def test_a_good_trace_file_loads_as_replay_sessions_not_as_case_results(tmp_path: Path) -> None:
    traces = tmp_path / "traces.json"
    data = _jaeger(INVOKE, _call_llm("a1", "a0", USER, CALL), _call_llm("a2", "a0", USER, ANSWER))
    traces.write_text(json.dumps(data), "utf-8")
    traced: list[Any] = []
    assert load_recordings([traces], traced=traced) == {}
    [(_, recording)] = traced
    assert recording[0].final_response is not None
    assert recording[0].final_response.text() == "It is sunny in Paris, 22 degrees."


def test_validate_does_not_reject_a_trace_file_beside_the_eval_sets(tmp_path: Path) -> None:
    data = _jaeger(INVOKE, _call_llm("a1", "a0", USER, ANSWER))
    (tmp_path / "traces.json").write_text(json.dumps(data), "utf-8")
    (tmp_path / "weather.evalset.json").write_text(EVALSET.read_text("utf-8"), "utf-8")
    proc = run_cli("validate", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 other JSON not read" in proc.stdout + proc.stderr
    # named directly, it is not an eval set, and the message says where it belongs
    proc = run_cli("validate", str(tmp_path / "traces.json"), cwd=tmp_path)
    assert "OpenTelemetry trace file (Jaeger, OTLP or Tempo JSON): give it to --replay" in (
        proc.stdout + proc.stderr
    )
