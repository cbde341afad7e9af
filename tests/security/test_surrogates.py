"""Lone surrogates (``"Sunny \\ud83d"``, what JavaScript's JSON.stringify emits for a cut emoji)
never lose a run: every connector replaces them with U+FFFD at its boundary, and every writer
copes with any str it is handed."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.connectors.adk_http import AdkHttpConnector
from ci_eval.connectors.command import CommandConnector
from ci_eval.connectors.http import HttpConnector
from ci_eval.io.jsonpos import parse_json
from ci_eval.model import Content, EvalCase, Invocation, Part
from ci_eval.model.metric_spec import MetricConfig
from ci_eval.net.http import HttpSettings
from ci_eval.publish import ReportSettings, publish
from ci_eval.publish.github import Workflow, append_summary, write_outputs
from ci_eval.report.adk_results import to_adk_results
from ci_eval.report.junit import to_junit
from ci_eval.report.markdown import render_comment, render_summary
from ci_eval.report.terminal import summary_lines
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    read_results,
    to_json,
    write_json_atomic,
)
from ci_eval.text.surrogates import REPLACEMENT, has_surrogates, scrub
from tests.helpers import run_cli
from tests.loopback import Loopback, QuietHandler

# any str Python can hold, lone surrogates included (hypothesis leaves them out by default)
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=40)
SUNNY = "Sunny \ud83d"


def _utf8(text: str) -> str:
    text.encode("utf-8")  # raises on a lone surrogate
    return text


@given(ANY_TEXT)
def test_scrub_leaves_only_encodable_text_and_changes_nothing_else(text: str) -> None:
    clean = scrub(text)
    _utf8(clean)
    assert len(clean) == len(text)
    if not has_surrogates(text):
        assert clean == text
    assert all(
        a == b or (b == REPLACEMENT and 0xD800 <= ord(a) <= 0xDFFF)
        for a, b in zip(text, clean, strict=True)
    )


class _FakeAgent(Loopback):
    """One loopback server for the http (``/turn``) and adk-http (``/sessions``, ``/run``)
    connectors; it answers whatever text the test sets, JSON-encoded as JavaScript does
    (lone surrogates as ``\\udXXX`` escapes)."""

    def __init__(self) -> None:
        self.text = ""
        agent = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.endswith("/sessions"):
                    body: Any = {"id": "s1"}
                elif self.path == "/run":
                    body = [{"author": "agent", "content": {"parts": [{"text": agent.text}]}}]
                else:
                    body = {"final_response": agent.text, "tool_calls": [{"name": agent.text}]}
                # ensure_ascii: "\ud83d" stays an escape
                self.reply(200, json.dumps(body).encode())

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def fake_agent() -> Iterator[_FakeAgent]:
    with _FakeAgent() as agent:
        yield agent


def _case(text: str = "hello") -> EvalCase:
    return EvalCase.model_validate(
        {
            "eval_id": "c1",
            "conversation": [{"user_content": {"role": "user", "parts": [{"text": text}]}}],
        }
    )


def _final(turn: Any) -> str:
    return turn.final_response.parts[0].text


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ANY_TEXT)
def test_http_connector_replies_hold_no_lone_surrogate(fake_agent: _FakeAgent, text: str) -> None:
    fake_agent.text = text
    connector = HttpConnector(f"{fake_agent.url}/turn", HttpSettings(timeout=10, retries=0))
    try:
        turn = connector.open("s", _case(), 1).send(Content(role="user", parts=[Part(text="hi")]))
    finally:
        connector.close()
    assert _final(turn) == scrub(text)
    assert turn.tool_uses[0].name == scrub(text)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ANY_TEXT.filter(lambda t: t != ""))
def test_adk_http_connector_replies_hold_no_lone_surrogate(
    fake_agent: _FakeAgent, text: str
) -> None:
    fake_agent.text = text
    connector = AdkHttpConnector(fake_agent.url, HttpSettings(timeout=10, retries=0), "app")
    try:
        turn = connector.open("s", _case(), 1).send(Content(role="user", parts=[Part(text="hi")]))
    finally:
        connector.close()
    assert _final(turn) == scrub(text)


ECHO_AGENT = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    text = json.loads(line)['state']['reply']\n"
    "    print(json.dumps({'final_response': text}), flush=True)\n"
)


@settings(max_examples=15, deadline=None)
@given(text=ANY_TEXT)
def test_command_connector_replies_hold_no_lone_surrogate(text: str) -> None:
    case = EvalCase.model_validate(
        {
            "eval_id": "c1",
            "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}],
            "session_input": {"app_name": "a", "user_id": "u", "state": {"reply": text}},
        }
    )
    connector = CommandConnector(f"{sys.executable} -c {shlex.quote(ECHO_AGENT)}", timeout=20)
    session = connector.open("s", case, 1)
    try:
        turn = session.send(Content(role="user", parts=[Part(text="hi")]))
    finally:
        session.close()
    assert _final(turn) == scrub(text)


def _results(text: str) -> RunResults:
    """A run whose every agent- and file-controlled string is ``text``."""
    inv = Invocation(
        invocation_id=text,
        user_content=Content(role="user", parts=[Part(text=text)]),
        final_response=Content(role="model", parts=[Part(text=text)]),
    )
    case = CaseRecord(text or "c", text, 3, skipped=None, extensions={"x": text})
    case.runs = [
        RunRecord(
            run=1,
            error=f"turn 1: {text}",
            invocations=[InvocationRecord(expected=inv, actual=inv, error=text)],
        )
    ]
    record = SetRecord(
        text or "s", f"{text}.evalset.json", "adk", MetricConfig([], "default", "adk")
    )
    record.cases = [case]
    return RunResults(
        sets=[record], agent=text, started="2026-01-01T00:00:00+00:00", duration_s=1.0
    )


@settings(max_examples=30, deadline=None)
@given(text=ANY_TEXT)
def test_every_writer_copes_with_any_str(text: str, tmp_path_factory: Any) -> None:
    folder = tmp_path_factory.mktemp("w")
    results = _results(text)
    write_json_atomic(folder / "r.json", to_json(results))
    json.loads((folder / "r.json").read_text("utf-8"))
    for name, data in to_adk_results(results).items():
        write_json_atomic(folder / "adk" / name, data)
    summary = folder / "step-summary.md"
    output = folder / "output.txt"
    append_summary(str(summary), render_summary(results))
    write_outputs(str(output), {"x": text})
    log = _Log()
    Workflow(out=log).command("warning", text)
    warnings = publish(
        results,
        ReportSettings(junit=str(folder / "j.xml"), summary=str(folder / "s.md")),
        env={},
        workflow=Workflow(out=log),
    )
    assert warnings == []
    for line in summary_lines(results):
        _utf8(scrub(line))
    _utf8(scrub(render_comment(results, "id")))
    to_junit(results)
    for path in folder.rglob("*"):
        if path.is_file():
            path.read_bytes().decode("utf-8")  # every file is valid UTF-8


class _Log:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        _utf8(text)
        self.text += text
        return len(text)


def test_a_run_with_a_lone_surrogate_reply_writes_every_report(
    fake_agent: _FakeAgent, tmp_path: Path
) -> None:
    fake_agent.text = SUNNY
    (tmp_path / "s.evalset.json").write_text(
        json.dumps({"eval_set_id": "s", "eval_cases": [_case().model_dump(exclude_none=True)]})
    )
    proc = run_cli(
        "run",
        "s.evalset.json",
        "--agent",
        "http",
        "--agent-url",
        f"{fake_agent.url}/turn",
        "--results",
        "r.json",
        "--junit",
        "j.xml",
        "--summary",
        "s.md",
        "--adk-results",
        "adk",
        cwd=tmp_path,
    )
    assert "internal error" not in proc.stderr
    assert proc.returncode == 1, proc.stderr  # scored (and failing), not lost
    actual = json.loads((tmp_path / "r.json").read_text("utf-8"))["sets"][0]["cases"][0]["runs"][0][
        "invocations"
    ][0]["actual"]
    assert actual["final_response"]["parts"][0]["text"] == "Sunny \ufffd"
    assert "Sunny \ufffd" in (tmp_path / "s.md").read_text("utf-8")
    assert (tmp_path / "j.xml").read_bytes().decode("utf-8")
    assert list((tmp_path / "adk").iterdir())
    assert read_results(tmp_path / "r.json").sets[0].cases[0].status == "FAILED"


def test_an_eval_set_with_lone_surrogates_loads_with_replacement_characters() -> None:
    doc = parse_json('{"eval_set_id": "s\\ud83d", "k\\udc00": ["\\ud83d", {"x": "\\udfff"}]}', "f")
    assert doc.data == {"eval_set_id": "s\ufffd", "k\ufffd": ["\ufffd", {"x": "\ufffd"}]}
    assert doc.line_of(doc.data["k\ufffd"]) == 1  # positions survive the replacement
