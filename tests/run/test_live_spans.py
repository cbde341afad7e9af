"""``--otlp``: an agent instrumented with the OpenTelemetry SDK (its OTLP/HTTP exporter,
protobuf) that replies with text only is scored on the tool calls its spans show — the same
scores as the same agent returning its calls in the reply — as a command agent and as an
``http`` agent on loopback; the reply wins where it has calls, and a disagreement is said."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.helpers import run_cli

pytest.importorskip("opentelemetry.sdk.trace", reason="the OpenTelemetry SDK (the test extra)")
pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    reason="the OpenTelemetry OTLP/HTTP exporter (the test extra)",
)

EVALSET = SAMPLES / "evals/weather_basic.evalset.json"
AGENTS = SAMPLES / "agents/weather_agent"
SPANS_AGENT = f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENTS / 'spans_agent.py'))}"
REPLY_AGENT = f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENTS / 'command_agent.py'))}"


def _run(tmp_path: Path, name: str, *args: str) -> tuple[Any, str, int]:
    results = tmp_path / f"{name}.json"
    done = run_cli("run", str(EVALSET), "--results", str(results), *args, cwd=tmp_path)
    return json.loads(results.read_text()), done.stderr, done.returncode


def _scored(results: dict[str, Any]) -> dict[str, Any]:
    """Each case's status, metric scores and actual tool calls, turn by turn."""
    assert any("duration" in m["name"] for m in results["sets"][0]["cases"][0]["metrics"])
    out = {}
    for s in results["sets"]:
        for case in s["cases"]:
            run = case["runs"][0]
            calls = [
                [
                    (c["name"], c.get("args"))
                    for c in ((i["actual"] or {}).get("intermediate_data") or {}).get(
                        "tool_uses", []
                    )
                ]
                for i in run["invocations"]
            ]
            metrics = {  # but the measured durations, which are the agents' own
                m["name"]: (m["score"], m["status"])
                for m in case["metrics"]
                if "duration" not in m["name"]
            }
            out[case["eval_id"]] = (case["status"], metrics, calls)
    return out


def _sources(results: dict[str, Any]) -> list[str]:
    return [
        (i.get("trajectory") or {}).get("source", "-")
        for s in results["sets"]
        for case in s["cases"]
        for i in case["runs"][0]["invocations"]
    ]


def test_a_command_agent_that_replies_text_only_is_scored_on_its_spans(tmp_path: Path) -> None:
    by_reply, _, code_reply = _run(
        tmp_path, "reply", "--agent", "command", "--agent-command", REPLY_AGENT
    )
    by_spans, err, code_spans = _run(
        tmp_path, "spans", "--otlp", "--agent", "command", "--agent-command", SPANS_AGENT
    )
    assert _scored(by_spans) == _scored(by_reply)
    assert code_spans == code_reply == 1  # the sample's case meant to fail fails either way
    assert _sources(by_spans) == ["spans", "none", "spans", "spans", "spans"]
    assert by_spans["settings"]["trajectories"] == {"spans": 4, "reply": 0, "none": 1}
    assert (
        "live spans: 10 spans received; tool calls from the agent's spans in 4 turns, from its "
        "replies in 0 turns; 1 turn called no tool" in err
    )
    assert "warning: live spans" not in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_spans_agent(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The same agent served over HTTP, exporting to a port ci-eval will listen on (a server
    started before the run, as in a workflow)."""
    otlp = _free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp}",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    process = subprocess.Popen(
        [sys.executable, str(AGENTS / "spans_agent.py"), "--http", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving on "), line
        yield line.split()[-1], otlp
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_an_http_agent_on_loopback_is_scored_on_its_spans(
    tmp_path: Path, http_spans_agent: tuple[str, int]
) -> None:
    url, otlp = http_spans_agent
    by_reply, _, _ = _run(tmp_path, "reply", "--agent", "command", "--agent-command", REPLY_AGENT)
    by_spans, err, code = _run(
        tmp_path,
        "spans",
        *("--otlp", "--otlp-port", str(otlp), "--agent", "http", "--agent-url", url),
    )
    assert _scored(by_spans) == _scored(by_reply)
    assert code == 1
    assert _sources(by_spans) == ["spans", "none", "spans", "spans", "spans"]
    assert f"listening for OTLP/HTTP traces at http://127.0.0.1:{otlp}" in err


DISAGREEING = """
import json, os, sys
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("t")
for line in sys.stdin:
    request = json.loads(line)
    context = TraceContextTextMapPropagator().extract({"traceparent": request["traceparent"]})
    with tracer.start_as_current_span(
        "invoke_agent a", context, attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.arguments": json.dumps({"city": "Rome"}),
        }):
            pass
    reply = {"final_response": "It is sunny in Paris, 22 degrees.",
             "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}
    print(json.dumps(reply), flush=True)
provider.shutdown()
"""

ONE_CASE = {
    "eval_set_id": "one",
    "eval_cases": [
        {
            "eval_id": "paris",
            "conversation": [
                {
                    "invocation_id": "t1",
                    "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                    "final_response": {
                        "role": "model",
                        "parts": [{"text": "It is sunny in Paris, 22 degrees."}],
                    },
                    "intermediate_data": {
                        "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]
                    },
                }
            ],
        }
    ],
}


def test_the_reply_wins_over_the_spans_and_the_disagreement_is_said(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(DISAGREEING)
    evalset = tmp_path / "one.evalset.json"
    evalset.write_text(json.dumps(ONE_CASE))
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    done = run_cli(
        "run",
        str(evalset),
        *("--otlp", "--agent", "command", "--agent-command", f"{sys.executable} {agent}"),
        *("--results", "r.json", "--junit", str(junit), "--summary", str(summary)),
        cwd=tmp_path,
    )
    assert done.returncode == 0  # the reply's call is the expected one
    record = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"][0]
    trajectory = record["runs"][0]["invocations"][0]["trajectory"]
    assert trajectory["source"] == "reply"
    assert trajectory["disagreement"] == (
        'the spans show get_weather(city="Rome"); the reply get_weather(city="Paris")'
    )
    assert (
        "warning: live spans: 1 turns whose spans' tool calls differ from the reply's (the "
        "reply's are scored); first: one › paris, run 1, turn 1: the spans show "
        'get_weather(city="Rome"); the reply get_weather(city="Paris")'
    ) in done.stderr
    assert 'value="reply 1"' in junit.read_text()
    assert "from its replies in 1 turn" in summary.read_text()


def test_an_agent_that_sends_no_spans_is_said_once_and_scored_on_its_replies(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    results, err, code = _run(
        tmp_path,
        "quiet",
        *("--otlp", "--otlp-wait", "0.2", "--agent", "command", "--agent-command", REPLY_AGENT),
    )
    assert code == 1
    assert _sources(results) == ["reply", "none", "reply", "reply", "reply"]
    assert (
        "warning: live spans: no span came for any of the 5 turns within 0.2 s of its reply: "
        "does the agent export to OTEL_EXPORTER_OTLP_ENDPOINT, and start its spans under the "
        "turn's traceparent?"
    ) in err
    assert time.monotonic() - started < 30
    # the wait is not the agent's time
    durations = [
        i["duration_s"]
        for s in results["sets"]
        for c in s["cases"]
        for i in c["runs"][0]["invocations"][1:]
    ]
    assert all(d < 0.2 for d in durations), durations


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--agent", "replay", "--replay", "x.json"),
            "--otlp hears the spans of an agent ci-eval calls per turn (command, http, "
            "adk-http), not of --agent replay: a replay's recorded traces are read with --replay",
        ),
        (
            ("--otlp-port", "70000", "--agent", "command", "--agent-command", REPLY_AGENT),
            "--otlp-port must be from 0 (a free port) to 65535, not 70000",
        ),
        (
            ("--otlp-wait", "-1", "--agent", "command", "--agent-command", REPLY_AGENT),
            "--otlp-wait must be >= 0 and <= 60, not -1",
        ),
    ],
)
def test_a_bad_otlp_setting_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    done = run_cli("run", str(EVALSET), "--otlp", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr


def test_a_port_already_taken_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli(
            "run",
            str(EVALSET),
            *("--otlp", "--otlp-port", str(port)),
            *("--agent", "command", "--agent-command", REPLY_AGENT),
            cwd=tmp_path,
        )
    assert done.returncode == 2
    assert f"--otlp: cannot listen on 127.0.0.1:{port} (Address already in use)" in done.stderr


def test_otlp_is_a_setting_of_ci_eval_toml(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text(
        f'[agent]\nkind = "command"\ncommand = {json.dumps(SPANS_AGENT)}\n'
        "otlp = true\notlp_wait = 5\n"
    )
    (tmp_path / ".git").mkdir()
    results, err, code = _run(tmp_path, "toml")
    assert code == 1
    assert _sources(results) == ["spans", "none", "spans", "spans", "spans"]
    assert "each turn waits up to 5 s after its reply" in err
