"""Traces google-adk 2.13 writes with its DEFAULT telemetry (OpenTelemetry GenAI semantic
conventions: no ``call_llm`` span) replay and score as agentevals-cli 0.11 scores them; without
content capture the run says which metrics cannot be computed rather than scoring empty text.

The traces are real (tests/data/traces/adk-2.13/make.py records them). agentevals 0.11's numbers
on them, at its defaults (tool_trajectory_avg_score threshold 1.0, response_match_score 0.8):
content.otlp.json with weather.evalset.json — paris 1.0 / 1.0, multi_turn 1.0 / 1.0 (per turn
1, 1, 1), berlin 0.0 / 0.25; no-content.otlp.json — every metric NOT_EVALUATED."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.errors import EXIT_INPUT
from tests.helpers import run_replay

DATA = Path(__file__).resolve().parents[1] / "data/traces/adk-2.13"
METRICS = ("--metric", "tool_trajectory_avg_score", "--metric", "response_match_score")


def _replay(
    tmp_path: Path, evalset: Path, trace: Path
) -> tuple[int, str, dict[str, dict[str, Any]]]:
    results = tmp_path / "results.json"
    done = run_replay(str(evalset), *METRICS, "--results", str(results), replay=str(trace))
    out = done.stdout + done.stderr
    if not results.exists():
        return done.returncode, out, {}
    data = json.loads(results.read_text())
    metrics = {
        case["eval_id"]: {m["name"]: m for m in case["runs"][0]["metrics"] if m["name"] in METRICS}
        for s in data["sets"]
        for case in s["cases"]
    }
    return done.returncode, out, metrics


def test_adk_default_telemetry_with_content_scores_as_agentevals_does(tmp_path: Path) -> None:
    code, out, metrics = _replay(
        tmp_path, DATA / "weather.evalset.json", DATA / "content.otlp.json"
    )
    assert code == 1, out  # berlin fails, as in agentevals
    scores = {
        case: {name: (m["score"], m["status"]) for name, m in found.items()}
        for case, found in metrics.items()
    }
    assert scores == {
        "paris_weather": {
            "tool_trajectory_avg_score": (1.0, "PASSED"),
            "response_match_score": (1.0, "PASSED"),
        },
        "multi_turn_london_tokyo": {
            "tool_trajectory_avg_score": (1.0, "PASSED"),
            "response_match_score": (1.0, "PASSED"),
        },
        "berlin_expected_to_fail": {
            "tool_trajectory_avg_score": (0.0, "FAILED"),
            "response_match_score": (pytest.approx(0.25, abs=1e-9), "FAILED"),
        },
    }


def test_adk_default_telemetry_without_content_says_what_cannot_be_computed(
    tmp_path: Path,
) -> None:
    code, out, metrics = _replay(
        tmp_path, DATA / "no-content.evalset.json", DATA / "no-content.otlp.json"
    )
    assert code == 1, out  # nothing was evaluated
    assert "no ADK call_llm spans" not in out
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in out
    for case, found in metrics.items():
        for name, metric in found.items():
            assert metric["status"] == "NOT_EVALUATED", (case, name)
            assert metric["score"] is None
            assert "message content the trace did not capture" in metric["reason"]


def _trace(attributes: dict[str, Any]) -> dict[str, Any]:
    """One agent turn: an invoke_agent span over a chat span with these attributes."""

    def attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    spans = [
        {
            "traceId": "0" * 31 + "1",
            "spanId": "0" * 15 + "1",
            "name": "invoke_agent a",
            "startTimeUnixNano": "1",
            "attributes": attrs({"gen_ai.operation.name": "invoke_agent"}),
        },
        {
            "traceId": "0" * 31 + "1",
            "spanId": "0" * 15 + "2",
            "parentSpanId": "0" * 15 + "1",
            "name": "chat m",
            "startTimeUnixNano": "2",
            "attributes": attrs({"gen_ai.operation.name": "chat", **attributes}),
        },
    ]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("[{not json", "gen_ai.input.messages: not JSON"),
        ("42", "gen_ai.input.messages: expected a list of messages"),
        ('["hello"]', "gen_ai.input.messages: expected a list of messages"),
    ],
)
def test_a_hostile_messages_attribute_is_one_line_with_its_json_path(
    tmp_path: Path, value: str, said: str
) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(_trace({"gen_ai.input.messages": value})))
    done = run_replay(str(DATA / "weather.evalset.json"), replay=str(trace))
    out = done.stdout + done.stderr
    assert done.returncode == EXIT_INPUT, out
    [line] = [line for line in out.splitlines() if said in line]
    assert "$.resourceSpans[0].scopeSpans[0].spans[1]" in line
    assert "Traceback" not in out
