"""The summary and the comment as GitHub shows them: rendered by a GFM renderer (markdown-it-py,
CommonMark with GFM tables and strikethrough, raw HTML allowed as GitHub allows
``<details>``) for the bundled samples, a run with regressions and a hostile run, and checked
for what a reviewer would see: no literal backslash escapes, tables whose rows all have their
columns, no live HTML beyond the report's own, no @-mentions."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ci_eval.metrics.base import CaseMetric, MetricResult
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.report.markdown import render_comment, render_summary
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    read_results,
)
from tests.conftest import REPO
from tests.helpers import run_cli

# what the report itself writes; Markdown's own output tags
ALLOWED_TAGS = {
    "h2", "h3", "p", "strong", "em", "code", "pre", "ul", "ol", "li", "blockquote", "br",
    "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "b", "sub", "hr",
}  # fmt: skip
ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")
MENTION = re.compile(r"(?<![\w.])@[A-Za-z0-9][A-Za-z0-9-]*")


def gfm() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.code_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        self.code_depth += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.code_depth -= tag in ("code", "pre")

    def handle_data(self, data: str) -> None:
        if not self.code_depth:  # code shows text verbatim, backslashes included
            self.text.append(data)


def page(markdown: str) -> _Page:
    """The rendered page's tags and visible text, raw HTML blocks included."""
    parser = _Page()
    parser.feed(gfm().render(markdown))
    return parser


def tables(markdown: str) -> list[list[int]]:
    """Cells per row of every table."""
    out, row = [], 0
    for token in gfm().parse(markdown):
        if token.type == "table_open":
            out.append([])
        elif token.type == "tr_open":
            row = 0
        elif token.type in ("th_open", "td_open"):
            row += 1
        elif token.type == "tr_close":
            out[-1].append(row)
    return out


def check(markdown: str, *, backslashes_in_source: bool = False) -> _Page:
    rendered = page(markdown)
    text = "".join(rendered.text)
    if backslashes_in_source:
        assert not ESCAPE.search(text.replace("\\\\", "")), ESCAPE.findall(text)[:5]
    else:
        assert "\\" not in text, text[max(0, text.index("\\") - 80) : text.index("\\") + 80]
    assert rendered.tags <= ALLOWED_TAGS, rendered.tags - ALLOWED_TAGS
    assert not MENTION.search(text), MENTION.findall(text)
    for table in tables(markdown):
        assert len(set(table)) == 1, table  # every row has the header's cells
    return rendered


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("samples")
    proc = run_cli("run", "--results", str(folder / "results.json"), cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    return folder / "results.json"


def test_the_bundled_samples_render_clean(samples: Path) -> None:
    results = read_results(samples)
    summary = render_summary(results, artifact="results.json")
    rendered = check(summary)
    text = "".join(rendered.text)
    assert "weather_basic › berlin_expected_to_fail" in text  # no weather\_basic
    assert "tool_trajectory_avg_score 0 < 1" in text
    assert len(tables(summary)) >= 3
    check(render_comment(results, "ci/evals", artifact="results.json"))


def test_the_bundled_samples_summary_snapshot(samples: Path) -> None:
    """The sample's summary as it is (timings and paths of this machine aside)."""
    summary = render_summary(read_results(samples), artifact="results.json")
    lines = summary.splitlines()
    assert lines[-1].startswith("<sub>ci-eval ")
    text = "\n".join(lines[:-1]) + "\n"
    # the usage's latencies, and so the slowest cases' order, are this machine's
    text = re.sub(r"\d+\.\d\d s\b", "N s", text)
    text = re.sub(r"(\*\*Slowest turns \(p95\):\*\*).*", r"\1 …", text)
    snapshot = REPO / "tests/snapshots/sample-summary.md"
    if not snapshot.is_file():  # first run writes it; review it in the diff
        snapshot.write_text(text)
    assert text == snapshot.read_text()


def test_the_summary_reads_in_order(samples: Path) -> None:
    summary = render_summary(read_results(samples))
    first = summary.splitlines()[0]
    assert first.startswith("## ❌ ci-eval: gate failed:")  # the verdict first
    assert summary.index("### Blocking: 1 failed case") < summary.index("### weather_basic")
    assert summary.index("### Not blocking: 1 skipped") < summary.index("### Details")
    table = summary[summary.index("### weather_basic") :]
    assert table.index("🔴 failure") < table.index("✅ passed")  # listed rows first
    # a legacy file is one case named by its path: the path names the set (in the sets'
    # table and its heading), its row names the file alone
    assert summary.count("samples/evals/legacy/calculator.test.json") == 2
    assert "| ✅ passed | calculator.test.json |" in summary


@pytest.fixture(scope="module")
def regressed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples, five runs each, against a baseline where every case scored 1: the
    expected failure fails all five, which confirms it a regression."""
    folder = tmp_path_factory.mktemp("regressed")
    samples = folder / "samples.json"
    proc = run_cli("run", "--num-runs", "5", "--results", str(samples), cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    better = json.loads(samples.read_text())
    for s in better["sets"]:
        for c in s["cases"]:
            c["status"] = "PASSED"
            for m in c["metrics"]:
                m.update(score=1.0, status="PASSED", runs=[1.0] * 5, min=1.0, pass_rate=1.0)
            for r in c["runs"]:
                for m in r["metrics"]:
                    m.update(score=1.0, status="PASSED")
    (folder / "better.json").write_text(json.dumps(better))
    base = folder / "baseline.json"
    proc = run_cli("baseline", "update", str(folder / "better.json"), "--baseline", str(base))
    assert proc.returncode == 0, proc.stderr
    out = folder / "compared.json"
    proc = run_cli("compare", str(samples), "--baseline", str(base), "-o", str(out), cwd=REPO)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return out


def test_a_run_with_regressions_renders_clean(regressed: Path) -> None:
    results = read_results(regressed)
    assert results.comparison is not None and results.comparison.regressions
    summary = render_summary(results, artifact="results.json")
    text = "".join(check(summary).text)
    assert "regression" in summary.splitlines()[0]
    # what blocks comes right after the verdict, with the change against the baseline
    assert summary.index("### Blocking: 1 regression") < summary.index("### Not blocking")
    assert "runs on main → failed" in text
    assert "▼" in text
    check(render_comment(results, "ci/evals"))


HOSTILE = (
    "</details><script>alert(1)</script> <img src=x onerror=alert(1)> @octocat | pipe | "
    "weather_basic:berlin_expected_to_fail `tick` ``` **bold** _em_ [link](http://x) "
    "<!-- c --> &amp; \\ back\\slash # not a heading\n- not a list\n> not a quote $x$ ~~s~~ "
    "::set-output name=x::y ##vso[task.complete]"
)


def hostile_results() -> RunResults:
    spec = MetricSpec("response_match_score", 0.8)
    inv = Invocation(
        user_content=Content(role="user", parts=[Part(text=HOSTILE)]),
        final_response=Content(role="model", parts=[Part(text=HOSTILE)]),
        intermediate_data=IntermediateData(tool_uses=[FunctionCall(name=HOSTILE, args={"q": 1})]),
    )
    record = SetRecord(
        f"set {HOSTILE}", "evals/x.evalset.json", "adk", MetricConfig([spec], "default", "default")
    )
    record.applied_metrics = [spec]
    for i, status in enumerate(("FAILED", "ERROR", "PASSED", "SKIPPED")):
        score = {"FAILED": 0.1, "PASSED": 1.0}.get(status)
        run = RunRecord(
            1,
            [InvocationRecord(inv, inv, 0.01)],
            error=f"turn 1: {HOSTILE}" if status == "ERROR" else None,
            metrics=[MetricResult(spec.name, status, score, 0.8, [score])]
            if score is not None
            else [],
        )
        record.cases.append(
            CaseRecord(
                f"{HOSTILE} {i}",
                record.file,
                10 + i,
                [run] if status != "SKIPPED" else [],
                skipped=HOSTILE if status == "SKIPPED" else None,
                scored_status=status,
                metrics=[CaseMetric(spec.name, status, score, 0.8, runs=[score])]
                if score is not None
                else [],
            )
        )
    return RunResults([record], f"agent {HOSTILE}", "2026-11-22T12:00:00+00:00", 1.0)


def test_a_hostile_run_renders_inert() -> None:
    results = hostile_results()
    for markdown in (render_summary(results), render_comment(results, "x")):
        rendered = check(markdown, backslashes_in_source=True)
        assert "script" not in rendered.tags and "img" not in rendered.tags
        text = "".join(rendered.text)
        assert "<script>alert(1)</script>" in text  # shown as text, not run
        assert "weather_basic:berlin_expected_to_fail" in text
        assert "##vso[" not in markdown


def test_a_hostile_summary_keeps_one_details_block_per_case() -> None:
    summary = render_summary(hostile_results())
    tokens = gfm().parse(summary)
    opened = sum(t.content.count("<details>") for t in tokens if t.type.startswith("html"))
    closed = sum(t.content.count("</details>") for t in tokens if t.type.startswith("html"))
    assert opened == closed == 2  # the failed and the errored case; agent text closed none


def test_a_chart_only_where_it_says_more_than_a_table() -> None:
    results = hostile_results()
    assert "```mermaid" not in render_summary(results)  # one set: its table says it all
    results.sets = results.sets * 4
    summary = render_summary(results)
    chart = summary[summary.index("```mermaid") : summary.index("```", summary.index("xychart"))]
    assert "bar [33, 33, 33, 33]" in chart  # passed 1, failed 1, errored 1 in each set
    labels = chart[chart.index("x-axis [") : chart.index("]", chart.index("x-axis ["))]
    assert "<" not in labels and labels.count('"') == 8  # agent text cannot leave its label
    check(summary, backslashes_in_source=True)


def test_the_comment_shares_what_the_summary_made_and_reads_the_same(regressed: Path) -> None:
    results = read_results(regressed)
    alone = render_comment(results, "ci/evals", artifact="results.json")
    shared: dict[object, object] = {}
    summary = render_summary(results, artifact="results.json", cache=shared)
    assert shared  # the summary's rows and details, made once
    assert render_comment(results, "ci/evals", artifact="results.json", cache=shared) == alone
    assert render_summary(results, artifact="results.json", cache=shared) == summary
