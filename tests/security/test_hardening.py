"""Regression tests for the reliability and security issue (#11, items 8-12): ADK result file
names that never collide, no NaN or Infinity anywhere, a GitHub client that survives odd
servers, crafted results files refused with their place, and every option and output path
checked before the first agent call."""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.io.jsonpos import parse_json
from ci_eval.model.metric_spec import MetricConfig
from ci_eval.net.client import make_session
from ci_eval.net.http import HttpError, HttpSettings, post_json
from ci_eval.publish import github
from ci_eval.report.adk_results import file_names
from ci_eval.report.markdown import render_summary
from ci_eval.results.file import RunResults, SetRecord, read_results, write_json_atomic
from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.loopback import Loopback, QuietHandler
from tests.mutation import replace_one_value

EVALS = str(SAMPLES / "evals/weather_basic.evalset.json")


cli = run_cli


def marker_agent(tmp_path: Path) -> tuple[str, Path]:
    """A command agent that leaves a file behind when it is started at all."""
    marker = tmp_path / "agent-was-called"
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, pathlib, sys\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'final_response': 'x'}), flush=True)\n"
    )
    return f"{sys.executable} {script}", marker


def strict_json(text: str) -> Any:
    def refuse(literal: str) -> None:
        raise ValueError(f"{literal} in strict JSON")

    return json.loads(text, parse_constant=refuse)


# --- 8. ADK result file names ---------------------------------------------------------


def _results(ids: list[str]) -> RunResults:
    sets = [
        SetRecord(i, f"{n}.json", "adk", MetricConfig([], "default", "default"))
        for n, i in enumerate(ids)
    ]
    return RunResults(sets=sets, agent="a", started="", duration_s=0.0)


def test_ids_that_read_alike_get_files_of_their_own() -> None:
    names = file_names(_results(["a/b", "a_b", "a b", "CON", "con.x", "A_B", "a_b"]))
    assert len({n.lower() for n in names.values()}) == 7
    assert names[1] == "a_b.evalset_result.json"  # a portable id keeps ADK's name
    assert not names[3].upper().startswith("CON.")


@given(st.lists(st.text(max_size=300), min_size=1, max_size=12))
def test_adk_result_file_names_are_unique_and_portable(ids: list[str]) -> None:
    names = list(file_names(_results(ids)).values())
    assert len({n.lower() for n in names}) == len(names)
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.evalset_result\.json", name), name
        assert len(name) <= 160
        assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL"}


# --- 9. NaN and Infinity ------------------------------------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_json_without_finite_numbers_is_refused_with_its_place(literal: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_json(f'{{"criteria": {{"m": {{"threshold": {literal}}}}}}}', "x.json")
    assert str(caught.value).startswith("x.json:1:")
    assert "$.criteria.m.threshold" in str(caught.value) and literal in str(caught.value)


@pytest.mark.parametrize("threshold", ["NaN", "1e999"])
def test_validate_refuses_a_non_finite_threshold(tmp_path: Path, threshold: str) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "w.evalset.json").write_text(Path(EVALS).read_text())
    (evals / "test_config.json").write_text(
        '{"criteria": {"response_match_score": ' + threshold + "}}"
    )
    result = cli("validate", str(evals))
    assert result.returncode == 2
    assert re.search(r"test_config.json:1:\d+: \$\.criteria\.response_match_score: ", result.stdout)


def test_written_json_is_strict_whatever_it_holds(tmp_path: Path) -> None:
    write_json_atomic(tmp_path / "r.json", {"a": float("nan"), "b": [float("inf"), 1.5]})
    assert strict_json((tmp_path / "r.json").read_text()) == {"a": None, "b": [None, 1.5]}


@pytest.mark.parametrize(
    "option",
    [
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--timeout", "0"],
        ["--tolerance", "-1"],
        ["--tolerance", "nan"],
        ["--significance", "2"],
        ["--significance", "nan"],
        ["--baseline-max-age", "inf"],
        ["--fail-on", "bogus"],
        ["--metric", "response_match_score=inf"],
        ["--baseline-ref", "no-such-ref-anywhere"],
        ["--results", "/proc/nope/r.json"],
        ["--junit", "/proc/nope/j.xml"],
        ["--summary", "/proc/nope/s.md"],
        ["--adk-results", "/proc/nope/adk"],
        ["--results", "."],
        ["--update-baseline", "--baseline", "/proc/nope/b.json"],
    ],
)
def test_bad_options_and_output_paths_are_refused_before_the_first_agent_call(
    tmp_path: Path, option: list[str]
) -> None:
    command, marker = marker_agent(tmp_path)
    result = cli(
        "run", EVALS, "--agent", "command", "--agent-command", command, *option, cwd=tmp_path
    )
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ci-eval: "), lines
    assert "internal error" not in lines[0]
    assert not marker.exists()  # the agent was never started


def test_the_action_refuses_a_bad_fail_on_before_the_run(tmp_path: Path) -> None:
    from ci_eval.cli.action_entry import run_action

    command, marker = marker_agent(tmp_path)
    env = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "INPUT_PATHS": EVALS,
        "INPUT_AGENT": "command",
        "INPUT_AGENT-COMMAND": command,
        "INPUT_FAIL-ON": "regressions",
    }
    old = Path.cwd()
    try:
        with pytest.raises(InputError, match="input fail-on: unknown regressions"):
            run_action(env)
    finally:
        os.chdir(old)
    assert not marker.exists()


# --- 10. The GitHub client ----------------------------------------------------------


def test_retry_after_reads_seconds_and_http_dates() -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    past = format_datetime(datetime.now(UTC) - timedelta(days=1), usegmt=True)
    assert github.retry_after("5") == 5
    assert 25 <= github.retry_after(soon) <= 30
    assert github.retry_after(past) == 0
    for odd in (None, "", "soon", "nan", "inf", "-inf", "Wed, 99 Foo 2026"):
        assert 0 <= github.retry_after(odd) <= github.MAX_RATE_LIMIT_WAIT


@given(st.text(max_size=40))
def test_retry_after_never_raises(value: str) -> None:
    assert 0 <= github.retry_after(value, cap=1.0) <= 1.0


class EndlessComments(Loopback):
    """A comments endpoint that always returns a full page: the same one, or new ones."""

    def __init__(self, repeat: bool) -> None:
        self.pages = 0
        hub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path == "/user":
                    status, data = 403, b'{"message": "no"}'
                else:
                    hub.pages += 1
                    first = 0 if repeat else hub.pages * 100
                    comments = [
                        {"id": first + i, "body": "x", "user": {"type": "User"}} for i in range(100)
                    ]
                    status, data = 200, json.dumps(comments).encode()
                self.reply(status, data)

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}"


@pytest.mark.parametrize("repeat", [True, False])
def test_endless_pagination_ends(repeat: bool) -> None:
    with EndlessComments(repeat) as server:
        poster = github.CommentPoster(server.url, "o/r", "t0ken-value", github.Workflow())
        with pytest.raises(github.CommentError):
            poster.upsert(7, "body", "<!-- m -->")
    assert server.pages == (2 if repeat else github.MAX_PAGES)


# --- 11. Crafted results files -------------------------------------------------------


@pytest.fixture(scope="module")
def results_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("r") / "r.json"
    command = f"{sys.executable} {SAMPLES / 'agents/weather_agent/command_agent.py'}"
    proc = cli(
        "run", EVALS, "--agent", "command", "--agent-command", command, "--results", str(out)
    )
    assert out.exists(), proc.stdout + proc.stderr
    return json.loads(out.read_text())


CRAFTED = {
    "started": (["started"], "<img src=x onerror=alert(1)>"),
    "num_runs": (["settings", "num_runs"], "@everyone <b>"),
    "case status": (["sets", 0, "cases", 0, "status"], "<img src=x>"),
    "string score": (["sets", 0, "cases", 0, "metrics", 0, "score"], "0.5"),
    "NaN score": (["sets", 0, "cases", 0, "metrics", 0, "score"], float("nan")),
    "fail_on": (["fail_on"], ["everything"]),
    "metric status": (["sets", 0, "cases", 0, "metrics", 0, "status"], "@here"),
    "line": (["sets", 0, "cases", 0, "line"], "12"),
}


def _set(data: Any, path: list[Any], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_results_file_is_refused_with_its_place(
    tmp_path: Path, results_doc: dict[str, Any], name: str
) -> None:
    path, value = CRAFTED[name]
    data = copy.deepcopy(results_doc)
    _set(data, path, value)
    file = tmp_path / "crafted.json"
    file.write_text(json.dumps(data, indent=2))
    result = cli("report", str(file), "--summary", str(tmp_path / "s.md"))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ci-eval: {file}:") and "internal error" not in line
    json_path = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
    assert json_path in line
    assert not (tmp_path / "s.md").exists()


def test_a_broken_invocation_is_refused_when_a_report_reads_it(
    tmp_path: Path, results_doc: dict[str, Any]
) -> None:
    data = copy.deepcopy(results_doc)
    [failing] = [c for c in data["sets"][0]["cases"] if c["status"] == "FAILED"][:1]
    failing["runs"][0]["invocations"][0]["actual"] = {"user_content": "<b>not content</b>"}
    file = tmp_path / "broken.json"
    file.write_text(json.dumps(data, indent=2))
    result = cli("report", str(file), "--junit", str(tmp_path / "j.xml"))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ci-eval: {file}: ") and "internal error" not in line
    assert "user_content" in line and "is not an ADK Invocation" in line


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_mutated_results_file_is_read_or_refused_never_a_crash(
    tmp_path: Path, results_doc: dict[str, Any], data: st.DataObject
) -> None:
    doc = copy.deepcopy(results_doc)
    replace_one_value(doc, data)
    file = tmp_path / "mutated.json"
    file.write_text(json.dumps(doc))
    try:
        results = read_results(file)
    except InputError as exc:
        assert str(exc).startswith(str(file))
        return
    try:
        render_summary(results)  # what was accepted renders
    except InputError as exc:  # or names the invocation it cannot read (checked when read)
        assert "is not an ADK Invocation" in str(exc)


# --- 12. Honest retries, temp files, hand-edited baselines, merge/compare outputs -------


class CutOff(Loopback):
    """Answers with a Content-Length longer than the body it sends."""

    def __init__(self) -> None:
        self.requests = 0
        hub = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                hub.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.write(b'{"final_response": "cut')
                self.close_connection = True

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}/turn"


def test_a_cut_off_body_is_not_counted_as_retries() -> None:
    with CutOff() as server:
        session = make_session(HttpSettings(timeout=5, retries=3, backoff=0))
        with pytest.raises(HttpError) as caught:
            post_json(session, server.url, {"message": "hi"}, 5, 3)
    assert caught.value.retries == server.requests - 1
    assert "cut off" in str(caught.value)
    if server.requests == 1:
        assert "retr" not in str(caught.value)


def test_an_interrupted_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def killed(*args: object) -> None:
        raise SystemExit(143)  # what SIGTERM becomes (cli._terminate)

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(SystemExit):
        write_json_atomic(tmp_path / "baseline.json", {"format": 1})
    assert list(tmp_path.iterdir()) == []


def test_sigterm_becomes_an_exit_that_runs_cleanups() -> None:
    from ci_eval.cli import _terminate

    with pytest.raises(SystemExit) as caught:
        _terminate(15, None)
    assert caught.value.code == 143


@pytest.mark.parametrize("value", [float("nan"), [1, "x"]])
def test_a_hand_edited_baseline_names_file_and_place(
    tmp_path: Path, results_doc: dict[str, Any], value: Any
) -> None:
    results = tmp_path / "r.json"
    results.write_text(json.dumps(results_doc))
    baseline = tmp_path / "b.json"
    assert cli("baseline", "update", str(results), "--baseline", str(baseline)).returncode == 0
    data = json.loads(baseline.read_text())
    metric = data["sets"]["weather_basic"]["cases"]["paris_weather"]["metrics"]
    metric = metric["response_match_score"]
    metric["scores" if "scores" in metric else "runs"] = value
    baseline.write_text(json.dumps(data, indent=2))  # NaN is written as the bare word
    result = cli("compare", str(results), "--baseline", str(baseline))
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ci-eval: {baseline}:"), line
    assert "$.sets.weather_basic.cases.paris_weather" in line and "internal error" not in line


@pytest.mark.parametrize("command", ["merge", "compare"])
def test_merge_and_compare_check_their_output_first(
    tmp_path: Path, results_doc: dict[str, Any], command: str
) -> None:
    results = tmp_path / "r.json"
    results.write_text(json.dumps(results_doc))
    result = cli(command, str(results), "-o", "/proc/nope/out.json")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "/proc/nope/out.json" in line and "internal error" not in line
