"""Every shape a trace file comes in, as agentevals-cli 0.11 reads them, replays the same: OTLP
JSON as the collector writes it, with protobuf field names, Tempo's export (``batches``, the
``{"trace": …}`` wrapper), attributes as an object, bare spans, and JSON lines. A traced
session that names its eval case is that case's; one case and one session are paired."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

USER_TEXT = "What is the weather in Paris?"
ANSWER_TEXT = "It is sunny in Paris, 22 degrees."
CASE = {
    "eval_id": "paris",
    "conversation": [
        {
            "invocation_id": "i-1",
            "user_content": {"role": "user", "parts": [{"text": USER_TEXT}]},
            "final_response": {"role": "model", "parts": [{"text": ANSWER_TEXT}]},
            "intermediate_data": {
                "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]
            },
        }
    ],
}
METRICS = ["--metric", "tool_trajectory_avg_score", "--metric", "response_match_score"]


def _attribute(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _call_llm(span_id: str, user: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    request = {"contents": [{"role": "user", "parts": [{"text": user}]}]}
    return {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": span_id,
        "parentSpanId": "a000000000000000",
        "name": "call_llm",
        "startTimeUnixNano": str(int(span_id[:4], 16)),
        "attributes": [
            _attribute("gcp.vertex.agent.invocation_id", "e-1"),
            _attribute("gcp.vertex.agent.session_id", "s-1"),
            _attribute("gcp.vertex.agent.llm_request", json.dumps(request)),
            _attribute(
                "gcp.vertex.agent.llm_response",
                json.dumps({"content": {"role": "model", "parts": parts}}),
            ),
        ],
    }


def _otlp(user: str = USER_TEXT, resource: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An ADK agent's trace, in ADK's legacy schema, as the collector's file exporter writes."""
    call = {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}
    spans = [
        {
            "traceId": "0af7651916cd43dd8448eb211c80319c",
            "spanId": "a000000000000000",
            "name": "invoke_agent weather_agent",
            "startTimeUnixNano": "1",
            "attributes": [],
        },
        _call_llm("a100000000000000", user, [call]),
        _call_llm("a200000000000000", user, [{"text": ANSWER_TEXT}]),
    ]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource or []},
                "scopeSpans": [{"scope": {"name": "gcp.vertex.agent"}, "spans": spans}],
            }
        ]
    }


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _proto_names(value: Any) -> Any:
    """The document as protobuf's JSON with proto field names writes it (Go's UseProtoNames)."""
    if isinstance(value, dict):
        return {_snake(k): _proto_names(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_proto_names(v) for v in value]
    return value


def _tempo(data: dict[str, Any]) -> dict[str, Any]:
    """Tempo v1's export: ``batches`` of ``instrumentationLibrarySpans``."""
    return {
        "batches": [
            {
                "resource": rs["resource"],
                "instrumentationLibrarySpans": [
                    {"instrumentationLibrary": ss["scope"], "spans": ss["spans"]}
                    for ss in rs["scopeSpans"]
                ],
            }
            for rs in data["resourceSpans"]
        ]
    }


def _attributes_as_objects(data: dict[str, Any]) -> dict[str, Any]:
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                span["attributes"] = {
                    a["key"]: a["value"]["stringValue"] for a in span["attributes"]
                }
    return data


def _spans(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _lines(values: list[Any]) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


SHAPES: dict[str, Callable[[], str]] = {
    "OTLP JSON": lambda: json.dumps(_otlp()),
    "protobuf field names": lambda: json.dumps(_proto_names(_otlp())),
    "Tempo batches": lambda: json.dumps(_tempo(_otlp())),
    "Tempo's trace wrapper": lambda: json.dumps({"trace": _tempo(_otlp())}),
    "attributes as an object": lambda: json.dumps(_attributes_as_objects(_otlp())),
    "bare spans": lambda: json.dumps(_spans(_otlp())),
    "JSON lines of exports": lambda: _lines(
        [{"resourceSpans": [{"scopeSpans": [{"spans": [s]}]}]} for s in _spans(_otlp())]
    ),
    "JSON lines of bare spans": lambda: _lines(_spans(_otlp())),
}


def _evals(folder: Path, *cases: dict[str, Any]) -> Path:
    path = folder / "weather.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "weather", "eval_cases": list(cases or [CASE])}))
    return path


def _replay(folder: Path, trace: str, name: str = "trace.json") -> tuple[int, dict[str, Any], str]:
    (folder / name).write_text(trace, "utf-8")
    evals = _evals(folder) if not (folder / "weather.evalset.json").exists() else None
    done = run_cli(
        "run", str(evals or folder / "weather.evalset.json"), "--agent", "replay", "--replay",
        name, "--results", "r.json", *METRICS, cwd=folder,
    )  # fmt: skip
    results = json.loads((folder / "r.json").read_text()) if (folder / "r.json").exists() else {}
    cases = {c["eval_id"]: c for s in results.get("sets", []) for c in s["cases"]}
    return done.returncode, cases, done.stdout + done.stderr


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_of_a_trace_file_replays_to_the_same_scores(shape: str, tmp_path: Path) -> None:
    code, cases, out = _replay(tmp_path, SHAPES[shape]())
    assert code == 0, out
    assert cases["paris"]["status"] == "PASSED"
    scores = {m["name"]: m["score"] for m in cases["paris"]["metrics"]}
    assert scores["tool_trajectory_avg_score"] == scores["response_match_score"] == 1.0


def test_a_session_that_names_its_case_replays_it_whatever_its_first_message(
    tmp_path: Path,
) -> None:
    other = {**CASE, "eval_id": "london"}  # two cases: no lone pairing
    _evals(tmp_path, CASE, other)
    named = _otlp("hello?", resource=[_attribute("agentevals.eval.case.id", "paris")])
    code, cases, out = _replay(tmp_path, json.dumps(named))
    assert cases["paris"]["status"] == "PASSED", out
    assert cases["london"]["status"] == "ERROR"  # the same first message, but named for paris
    assert code == 3


def test_one_case_and_one_session_are_paired_whatever_the_first_message(tmp_path: Path) -> None:
    code, cases, out = _replay(tmp_path, json.dumps(_otlp("Weather in Paris, please")))
    assert code == 0, out
    assert cases["paris"]["status"] == "PASSED"


def test_with_two_cases_a_session_is_paired_by_its_first_message_only(tmp_path: Path) -> None:
    london = {"role": "user", "parts": [{"text": "London?"}]}
    turn = {**CASE["conversation"][0], "user_content": london}
    _evals(tmp_path, CASE, {**CASE, "eval_id": "london", "conversation": [turn]})
    code, cases, out = _replay(tmp_path, json.dumps(_otlp("  what is THE weather in   paris? ")))
    assert cases["paris"]["status"] == "PASSED", out  # as agentevals compares: spaces, case
    assert cases["london"]["status"] == "ERROR"
    assert code == 3


BAD_LINES = {
    "a line that is not JSON": (
        lambda: _lines(_spans(_otlp())[:1]) + "{not json\n",
        r"trace\.jsonl:2: ",
    ),
    "a span without its id": (
        lambda: _lines([{**_spans(_otlp())[0]}, {"traceId": "t", "span_id": "", "name": "x"}]),
        r"trace\.jsonl:2: \$: span_id: expected a non-empty string",
    ),
    "a line that is no span": (
        lambda: _lines([_spans(_otlp())[0], {"hello": "world"}]),
        r"trace\.jsonl:2: \$: not a trace document or an OTLP span",
    ),
}


@pytest.mark.parametrize("name", list(BAD_LINES))
def test_a_bad_line_of_a_json_lines_trace_is_one_line_naming_it(name: str, tmp_path: Path) -> None:
    make, message = BAD_LINES[name]
    code, _, out = _replay(tmp_path, make(), name="trace.jsonl")
    assert code == 2, out
    [line] = [line for line in out.splitlines() if "trace.jsonl" in line]
    assert re.search(message, line), line
    assert "Traceback" not in out


def test_a_tempo_span_without_its_id_names_its_json_path(tmp_path: Path) -> None:
    data = _tempo(_otlp())
    del data["batches"][0]["instrumentationLibrarySpans"][0]["spans"][1]["spanId"]
    code, _, out = _replay(tmp_path, json.dumps(data))
    assert code == 2, out
    expected = "$.batches[0].instrumentationLibrarySpans[0].spans[1]: spanId: expected a non-empty"
    assert expected in out


def _two_turns() -> dict[str, Any]:
    """One session's two invocations, each its own trace (as ADK starts one an invocation):
    Paris, then London."""
    data = _otlp()
    london = _otlp("What is the weather in London?")
    for span in _spans(london):
        span["traceId"] = "1bf7651916cd43dd8448eb211c80319c"
        span["spanId"] = "b" + span["spanId"][1:]
        if span.get("parentSpanId"):
            span["parentSpanId"] = "b" + span["parentSpanId"][1:]
        span["startTimeUnixNano"] = str(100_000 + int(span["startTimeUnixNano"]))
        for attribute in span["attributes"]:
            if attribute["key"] == "gcp.vertex.agent.invocation_id":
                attribute["value"]["stringValue"] = "e-2"
    data["resourceSpans"][0]["scopeSpans"][0]["spans"] += _spans(london)
    return data


def _london_case() -> dict[str, Any]:
    london = {"role": "user", "parts": [{"text": "What is the weather in London?"}]}
    return {**CASE, "eval_id": "london", "conversation": [{**CASE["conversation"][0],
            "user_content": london}]}  # fmt: skip


def test_with_single_turn_cases_each_trace_of_a_session_pairs_on_its_own(tmp_path: Path) -> None:
    """As agentevals' group_by auto: no multi-turn case, so each trace is evaluated alone and
    the session's second turn pairs with the case that starts with it."""
    _evals(tmp_path, CASE, _london_case())
    _, cases, out = _replay(tmp_path, json.dumps(_two_turns()))
    assert cases["paris"]["status"] == "PASSED", out
    assert cases["london"]["status"] != "ERROR", out  # paired (its answer is Paris's: fails)


def test_with_a_multi_turn_case_a_sessions_traces_stay_one_conversation(tmp_path: Path) -> None:
    both = {**CASE, "eval_id": "both", "conversation": [
        CASE["conversation"][0], _london_case()["conversation"][0]]}  # fmt: skip
    _evals(tmp_path, both, _london_case())
    _, cases, out = _replay(tmp_path, json.dumps(_two_turns()))
    assert cases["both"]["status"] != "ERROR", out  # its two turns are the session's
    assert cases["london"]["status"] == "ERROR", out  # no conversation starts with London
