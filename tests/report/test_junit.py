"""JUnit as consumers read it: repeated runs as Surefire reruns (one test per case, with the
gate's verdict), millisecond times, a suite's wall time, skip reasons — valid against the
consumers' schema and read back by junitparser."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.metrics.base import CaseMetric, MetricResult
from ci_eval.model import Content, Invocation, Part
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.report.junit import to_junit
from ci_eval.report.markdown import render_summary
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord, RunResults, SetRecord
from tests.conftest import SHARED

SPEC = MetricSpec("response_match_score", 0.8)


def _inv() -> Invocation:
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="hi")]),
        final_response=Content(role="model", parts=[Part(text="hello")]),
    )


def _run(n: int, score: float | None, start: float, duration: float, error: str = "") -> RunRecord:
    status = "ERROR" if error else ("PASSED" if (score or 0) >= 0.8 else "FAILED")
    return RunRecord(
        n,
        [InvocationRecord(_inv(), None if error else _inv(), duration, error=error or None)],
        error=error or None,
        duration_s=duration,
        metrics=[] if error else [MetricResult(SPEC.name, status, score, 0.8, [score])],
        started_s=start,
    )


def _case(eval_id: str, verdict: str, runs: list[RunRecord], **kw: object) -> CaseRecord:
    scores = [m.score for r in runs for m in r.metrics]
    mean = sum(scores) / len(scores) if scores else None
    metric_status = verdict if verdict in ("PASSED", "FAILED") else "NOT_EVALUATED"
    return CaseRecord(
        eval_id,
        "evals/x.evalset.json",
        7,
        runs,
        scored_status=verdict,
        metrics=[CaseMetric(SPEC.name, metric_status, mean, 0.8, runs=scores)] if scores else [],
        **kw,
    )


def results() -> RunResults:
    s = SetRecord("x", "evals/x.evalset.json", "adk", MetricConfig([SPEC], "default", "default"))
    s.applied_metrics = [SPEC]
    s.cases = [
        # passed 2 of 3 (min-pass 2): flaky, passes the gate
        _case(
            "flaky",
            "PASSED",
            [_run(1, 1.0, 0.0, 1.0), _run(2, 0.1, 0.0, 1.2345678), _run(3, 1.0, 1.0, 1.0)],
            flaky=True,
        ),
        # failed every run
        _case(
            "failing",
            "FAILED",
            [_run(1, 0.1, 0.5, 1.0), _run(2, 0.2, 1.5, 1.0), _run(3, 0.1, 2.0, 1.5)],
        ),
        # errored in run 2
        _case(
            "erroring",
            "ERROR",
            [
                _run(1, 1.0, 0.0, 0.5),
                _run(2, None, 0.5, 0.5, "turn 1: boom"),
                _run(3, 1.0, 1.0, 0.5),
            ],
        ),
        _case("skipped", "SKIPPED", [], skipped="conversation_scenario needs a user simulator"),
    ]
    return RunResults([s], "agent", "2026-11-22T12:00:00+00:00", 3.9999, RunFacts(num_runs=3))


@pytest.fixture
def xml(tmp_path: Path) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(to_junit(results()))
    return path


def test_valid_against_the_consumers_schema(xml: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    schema = SHARED / "schemas/junit.xsd"
    if not schema.is_file():
        pytest.skip("../shared/schemas is not here")
    xmlschema.XMLSchema(str(schema)).validate(str(xml))


def test_one_test_per_case_with_the_gates_verdict(xml: Path) -> None:
    from junitparser import Error, Failure, JUnitXml, Skipped

    [suite] = list(JUnitXml.fromfile(str(xml)))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 1, 1)
    cases = {c.name: c for c in suite}
    assert cases["flaky"].is_passed  # the flaky run is no failure of the case
    assert isinstance(cases["failing"].result[0], Failure)
    [error] = cases["erroring"].result
    assert isinstance(error, Error)
    assert error.message == "error: errored in 1 of 3 runs; run 2 of 3, turn 1: boom"
    [skipped] = cases["skipped"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "skipped: conversation_scenario needs a user simulator"


def test_repeated_runs_are_surefire_reruns(xml: Path) -> None:
    root = ET.parse(xml).getroot()
    case = {c.get("name"): c for c in root.iter("testcase")}
    [flaky] = case["flaky"].findall("flakyFailure")
    assert flaky.get("message").startswith("run 2 of 3: response_match_score 0.1 < 0.8")
    assert flaky.get("type") == "ThresholdNotMet"
    # the first failing run is the failure; the others are reruns, each with its message
    assert case["failing"].find("failure") is not None
    assert [r.get("message")[:10] for r in case["failing"].findall("rerunFailure")] == [
        "run 2 of 3",
        "run 3 of 3",
    ]
    assert case["erroring"].findall("rerunFailure") == []  # its other runs passed
    props = {p.get("name"): p.get("value") for p in case["flaky"].iter("property")}
    assert props["runs passed"] == "2/3" and props["flaky"] == "true"


def test_times_in_milliseconds_and_suite_wall_time(xml: Path) -> None:
    root = ET.parse(xml).getroot()
    case = {c.get("name"): c.get("time") for c in root.iter("testcase")}
    assert case["flaky"] == "3.235"  # 1 + 1.2346 + 1: the sum of its runs, 3 decimals
    suite = root.find("testsuite")
    assert suite is not None
    # runs overlapped: from the first start (0) to the last end (2 + 1.5), not the 10.7 s sum
    assert suite.get("time") == "3.500"
    assert root.get("time") == "4.000"
    assert all(len(t.split(".")[1]) == 3 for t in case.values())


def test_a_set_whose_cases_all_errored_has_no_column_of_na() -> None:
    r = results()
    s = r.sets[0]
    s.cases = [_case("a", "ERROR", [_run(1, None, 0, 1, "turn 1: down")])]
    summary = render_summary(r)
    table = summary[summary.index("### x") :]
    assert "response_match_score" not in table.split("\n\n")[2]
    assert "No scores: no case of this set was scored" in table
    assert "| n/a |" not in summary


def _as_elementtree_writes_it(text: str) -> str:
    """The same document parsed and written again by ElementTree, indented as ci-eval indents."""
    head, body = text.split("\n", 1)
    root = ET.fromstring(body)
    ET.indent(root, space="  ")
    return f"{head}\n{ET.tostring(root, encoding='unicode')}\n"


@settings(max_examples=60, deadline=None)
@given(
    hostile=st.text(alphabet=st.characters(), max_size=40),
    other=st.sampled_from(['a"b', "x & y <z>", "tab\there", "cr\r\nlf\n", "::warning::x", ""]),
)
def test_the_text_is_what_elementtree_writes_for_the_same_tree(hostile: str, other: str) -> None:
    r = results()
    s = r.sets[0]
    s.eval_set_id = hostile + other
    s.cases[1].eval_id = other + hostile
    s.cases[2].runs[1].error = f"turn 1: {hostile}{other}"
    s.cases[3].skipped = other + hostile
    text = to_junit(r)
    assert text == _as_elementtree_writes_it(text)


def test_no_eval_set_is_an_empty_root() -> None:
    r = results()
    r.sets = []
    text = to_junit(r)
    assert text == _as_elementtree_writes_it(text)
    assert text.endswith('timestamp="2026-11-22T12:00:00+00:00" />\n')


def test_a_regression_and_a_known_failure_as_consumers_read_them() -> None:
    from ci_eval.model.comparison import CaseJudgement, Comparison, Judgement, MetricChange

    r = results()
    r.fail_on = ("regression", "error")  # known failures do not block
    change = MetricChange("x", "flaky", SPEC.name, 1.0, 0.7, regressed=True)
    r.comparison = Comparison(
        "abc",
        "2026-11-01",
        changes=[change],
        cases=[
            CaseJudgement("x", "flaky", Judgement.REGRESSION, 10, 0, 3, 1, "history"),
            CaseJudgement("x", "failing", Judgement.KNOWN_FAILURE, 10, 10, 3, 3, "history"),
        ],
    )
    text = to_junit(r)
    assert text == _as_elementtree_writes_it(text)
    case = {c.get("name"): c for c in ET.fromstring(text.split("\n", 1)[1]).iter("testcase")}
    # the kind and reason in the message and the body's first line, and no type (dorny
    # prints "type: message"; GitLab shows only the body)
    [failure] = case["flaky"].findall("failure")
    assert failure.get("type") is None
    assert failure.get("message").startswith("regression: passed 10 of 10 runs on main → ")
    assert failure.text.split("\n", 1)[0] == failure.get("message")
    [skipped] = case["failing"].findall("skipped")
    assert skipped.get("message").startswith("known failure, not blocking: passed 0 of 10 ")
    assert skipped.text.split("\n", 1)[0] == skipped.get("message")


def test_a_removed_case_is_a_failure_of_its_own_suite_and_the_file_stays_valid(
    tmp_path: Path,
) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    from tests.report.scenarios import reviewer

    text = to_junit(reviewer())  # greetings:old_farewell is in main's history, not in the run
    root = ET.fromstring(text.split("\n", 1)[1])
    [suite] = [s for s in root.iter("testsuite") if s.get("name") == "removed from main's history"]
    [case] = suite.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("greetings", "old_farewell")
    assert case.find("failure").get("message").startswith("removed: in main's history")
    schema = SHARED / "schemas/junit.xsd"
    if schema.is_file():
        (tmp_path / "j.xml").write_text(text)
        xmlschema.XMLSchema(str(schema)).validate(str(tmp_path / "j.xml"))
