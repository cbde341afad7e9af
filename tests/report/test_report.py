"""Reports: JUnit that validates against the consumers' schema and reads back right, Markdown
that renders as tables with hostile agent text inert, size caps, ADK-format results."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from ci_eval.metrics.base import CaseMetric, MetricResult
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.report.markdown import COMMENT_LIMIT, SUMMARY_LIMIT, render_comment, render_summary
from ci_eval.results import spill
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    read_results,
)
from tests.conftest import REPO, SHARED
from tests.helpers import run_cli

HOSTILE = (
    "</testcase>]]><![CDATA[ \x00 \x1b[31mred\x1b[0m 🤖 <script>alert(1)</script> "
    "@octocat | col | ` ``` **bold** [link](http://x) <!-- -->"
)

AGENT = (
    "import json, sys\n"
    f"TEXT = {HOSTILE!r}\n"
    "for line in sys.stdin:\n"
    "    json.loads(line)\n"
    "    print(json.dumps({'final_response': TEXT, 'tool_calls': [{'name': 'x', 'args': "
    "{'q': TEXT}}]}), flush=True)\n"
)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "agent.py").write_text(AGENT)
    evals = folder / "hostile.evalset.json"
    evals.write_text(
        json.dumps(
            {
                "eval_set_id": "hostile <set>",
                "eval_cases": [
                    {
                        "eval_id": name,
                        "conversation": [
                            {
                                "user_content": {
                                    "role": "user",
                                    "parts": [{"text": f"say it {HOSTILE}"}],
                                },
                                "final_response": {"role": "model", "parts": [{"text": expected}]},
                            }
                        ],
                    }
                    for name, expected in (("fails", "something else"), ("passes", HOSTILE))
                ],
            }
        )
    )
    out = {
        "junit": folder / "junit.xml",
        "summary": folder / "summary.md",
        "results": folder / "results.json",
        "adk": folder / "adk",
    }
    proc = run_cli(
        "run",
        str(evals),
        "--agent",
        "command",
        "--agent-command",
        f"{sys.executable} {folder / 'agent.py'}",
        "--metric",
        "response_match_score",
        "--junit",
        str(out["junit"]),
        "--summary",
        str(out["summary"]),
        "--results",
        str(out["results"]),
        "--adk-results",
        str(out["adk"]),
        cwd=folder,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return out


def test_junit_validates_against_the_schema(hostile_run: dict[str, Path]) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    schema_file = SHARED / "schemas/junit.xsd"
    if not schema_file.is_file():
        pytest.skip("../shared/schemas is not here")
    xmlschema.XMLSchema(str(schema_file)).validate(str(hostile_run["junit"]))


def test_junit_reads_back_with_the_right_counts(hostile_run: dict[str, Path]) -> None:
    from junitparser import Failure, JUnitXml

    xml = JUnitXml.fromfile(str(hostile_run["junit"]))
    [suite] = list(xml)
    assert suite.name == "hostile <set>" and suite.tests == 2 and suite.failures == 1
    assert suite.time > 0
    cases = {c.name: c for c in suite}
    [failure] = [r for r in cases["fails"].result if isinstance(r, Failure)]
    assert failure.message.startswith("failure: response_match_score ")
    assert "</testcase>" in failure.text and "]]>" in failure.text  # kept, escaped
    assert "\x00" not in failure.text and "\x1b" not in failure.text  # NUL and ANSI gone
    assert "[31m" not in failure.text and "🤖" in failure.text
    assert cases["fails"].classname == "hostile <set>"
    assert cases["fails"]._elem.get("file").endswith("hostile.evalset.json")
    assert int(cases["fails"]._elem.get("line")) > 0


def test_summary_tables_are_tables_and_agent_text_is_inert(
    hostile_run: dict[str, Path],
) -> None:
    text = hostile_run["summary"].read_text()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert sum(1 for t in tokens if t.type == "table_open") >= 2
    rows = [t for t in tokens if t.type == "tr_open"]
    assert rows  # the per-set table and the tool-call tables parse as tables
    # every row of the per-set table has exactly its columns: a '|' from the agent broke none
    for table in _tables(tokens):
        assert len({len(row) for row in table}) == 1
    html = [t for t in tokens if t.type in ("html_inline", "html_block")]
    assert all("<script" not in t.content and "<!--" not in t.content for t in html)
    assert "@octocat" not in text  # a zero-width space keeps GitHub from pinging
    assert "\x1b" not in text


def _tables(tokens: list[Any]) -> list[list[list[str]]]:
    tables, rows, row = [], None, None
    for t in tokens:
        if t.type == "table_open":
            rows = []
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open") and row is not None:
            row.append(t.type)
        elif t.type == "tr_close" and rows is not None:
            rows.append(row)
        elif t.type == "table_close":
            tables.append(rows)
    return tables


def test_adk_results_load_in_adk(hostile_run: dict[str, Path]) -> None:
    adk = pytest.importorskip("google.adk.evaluation.eval_result")
    [file] = list(hostile_run["adk"].glob("*.evalset_result.json"))
    result = adk.EvalSetResult.model_validate_json(file.read_text())
    assert {c.eval_id: c.final_eval_status.value for c in result.eval_case_results} == {
        "fails": 2,
        "passes": 1,
    }


def test_report_renders_the_same_junit_from_saved_results(
    hostile_run: dict[str, Path], tmp_path: Path
) -> None:
    again = tmp_path / "junit.xml"
    proc = run_cli("report", str(hostile_run["results"]), "--junit", str(again))
    assert proc.returncode == 1
    assert again.read_text() == hostile_run["junit"].read_text()


@pytest.mark.parametrize("command", ["report", "compare", "merge"])
def test_a_file_of_more_runs_than_the_limit_gives_the_same_outputs(
    hostile_run: dict[str, Path], tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past CI_EVAL_RUNS_IN_MEMORY case runs, the cases read keep their runs in a temporary
    file (ci_eval.results.spill): what is written is the same."""
    held: list[str] = []
    hold = spill.RunSpill.hold
    monkeypatch.setattr(
        spill.RunSpill, "hold", lambda self, c: held.append(c.eval_id) or hold(self, c)
    )
    outputs = {}
    for limit in ("1", "25000"):
        out = tmp_path / limit
        out.mkdir()
        env = {**os.environ, "CI_EVAL_RUNS_IN_MEMORY": limit}
        results = str(hostile_run["results"])
        if command == "merge":
            args = ["merge", results, "-o", str(out / "merged.json")]
        else:
            args = [command, results, "--junit", str(out / "j.xml"), "--summary", str(out / "s.md")]
            args += ["-o", str(out / "compared.json")] if command == "compare" else []
        proc = run_cli(*args, env=env, cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        outputs[limit] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert held == ["passes"]  # the second case, with the limit at one run
    assert outputs["1"] and outputs["1"] == outputs["25000"]


def test_report_on_a_bad_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"sets": []}')
    proc = run_cli("report", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"ci-eval: {bad}: not a ci-eval results file (no schema_version and sets); write one "
        "with `ci-eval run --results FILE`"
    ]


# --- snapshot and caps ----------------------------------------------------------------


def _results(cases: int, failing_every: int = 3) -> RunResults:
    inv = Invocation(
        user_content=Content(role="user", parts=[Part(text="What is up?")]),
        final_response=Content(role="model", parts=[Part(text="All good.")]),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name="status", args={"verbose": True})]
        ),
    )
    actual = inv.model_copy(
        update={"final_response": Content(role="model", parts=[Part(text="Not sure " * 40)])}
    )
    spec = MetricSpec("response_match_score", 0.8)
    record = SetRecord(
        "big",
        "evals/big.evalset.json",
        "adk",
        MetricConfig([spec], "default", "default"),
        applied_metrics=[spec],
    )
    for i in range(cases):
        failing = i % failing_every == 0
        score = 0.1 if failing else 1.0
        status = "FAILED" if failing else "PASSED"
        run = RunRecord(
            1,
            [InvocationRecord(inv, actual if failing else inv, 0.01)],
            duration_s=0.01,
            metrics=[MetricResult("response_match_score", status, score, 0.8, [score])],
        )
        record.cases.append(
            CaseRecord(
                f"case_{i:05d}",
                record.file,
                10 + i,
                [run],
                scored_status=status,
                metrics=[CaseMetric("response_match_score", status, score, 0.8, runs=[score])],
            )
        )
    return RunResults(
        [record],
        "HTTP agent at http://127.0.0.1:1/turn",
        "2026-11-22T12:00:00+00:00",
        12.5,
        RunFacts(num_runs=1),
    )


def test_summary_snapshot() -> None:
    snapshot = REPO / "tests/snapshots/summary.md"
    text = render_summary(_results(4), artifact="results.json")
    if not snapshot.is_file():  # first run writes it; review it in the diff
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(text)
    assert text == snapshot.read_text()


def test_comment_snapshot() -> None:
    snapshot = REPO / "tests/snapshots/comment.md"
    text = render_comment(_results(4), "ci/evals")
    if not snapshot.is_file():
        snapshot.write_text(text)
    assert text == snapshot.read_text()
    assert text.startswith("<!-- ci-eval report (id: ci/evals) -->")


def test_caps_hold_on_a_5000_case_run() -> None:
    results = _results(5000)
    summary = render_summary(results, artifact="results.json")
    comment = render_comment(results, "x", artifact="results.json")
    assert len(summary.encode()) <= SUMMARY_LIMIT
    assert len(comment) <= COMMENT_LIMIT
    # what blocks is listed first: in the summary every failing case with its reason; what
    # goes first is passing rows, then the table rows of listed cases, then details
    assert summary.count("\n- 🔴 **failure** · big › case_") == 1667
    assert (
        "leaves out 759 blocking cases' details, 1667 set table rows of listed cases, "
        "3333 passing cases' rows. Everything is in the results file results.json." in summary
    )
    # the comment: as many blocking cases as 65,536 characters hold, and how many did not fit
    listed = comment.count("\n- 🔴 **failure** · big › case_")
    assert len(comment) > COMMENT_LIMIT - 1000 and listed > 300
    assert f"- … {1667 - listed} more blocking not listed here" in comment
    assert (
        f"this comment leaves out {1667 - listed} blocking cases. Everything is in the results "
        "file results.json." in comment
    )


def test_templates_can_be_overridden(tmp_path: Path) -> None:
    (tmp_path / "summary.md.j2").write_text("custom: {{ totals.FAILED }} failed\n")
    # below the verdict, which ci-eval writes
    assert render_summary(_results(3), template_dir=tmp_path) == (
        "## ❌ ci-eval: gate failed: 1 failed case (big:case_00000)\n\ncustom: 1 failed\n"
    )
    (tmp_path / "comment.md.j2").write_text("no marker here\n")
    body = render_comment(_results(3), "id", template_dir=tmp_path)
    assert body.startswith("<!-- ci-eval report (id: id) -->\n### ❌ ci-eval: gate failed")


def test_a_template_that_says_the_gate_passed_is_below_the_verdict_that_says_it_failed(
    tmp_path: Path,
) -> None:
    (tmp_path / "comment.md.j2").write_text("{{ marker }}\n### ✅ gate passed\n")
    body = render_comment(_results(3), "id", template_dir=tmp_path)
    assert body.splitlines()[:3] == [
        "<!-- ci-eval report (id: id) -->",
        "### ❌ ci-eval: gate failed: 1 failed case (big:case_00000)",
        "",
    ]


def test_the_sandbox_stops_a_hostile_template(tmp_path: Path) -> None:
    from ci_eval.text.templates import TemplateProblem

    (tmp_path / "summary.md.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(TemplateProblem, match=r"summary.md.j2:1: .* is unsafe"):
        render_summary(_results(1), template_dir=tmp_path)


def test_results_round_trip(hostile_run: dict[str, Path]) -> None:
    from ci_eval.results.file import to_json

    data = json.loads(hostile_run["results"].read_text())
    assert to_json(read_results(hostile_run["results"])) == data
