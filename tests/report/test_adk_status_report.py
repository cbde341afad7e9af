"""Where ADK would give a case another status than ci-eval's (it passes a case whose metric was
not evaluated: google-adk 2.13 ``evaluation/local_eval_service.py``, line 554), the reports say
ADK's beside ci-eval's: a JUnit property ``adk status``, and "(ADK: PASSED)" in the summary's
case row. A case without that difference reads as before."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.report.junit import to_junit
from ci_eval.report.markdown import render_summary
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord, RunResults, SetRecord
from ci_eval.score.scorer import ScoreOptions, Scorer

# the second names no metric ADK or ci-eval knows: not evaluated in both
SPECS = [MetricSpec("tool_trajectory_avg_score", 1.0), MetricSpec("tool_trajectory_avg_scor", 0.5)]


def _inv() -> Invocation:
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="Weather in Paris?")]),
        final_response=Content(role="model", parts=[Part(text="Sunny")]),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name="get_weather", args={"city": "Paris"})]
        ),
    )


def _results(specs: list[MetricSpec]) -> RunResults:
    case = CaseRecord(
        "paris", "evals/w.evalset.json", 3, [RunRecord(1, [InvocationRecord(_inv(), _inv())])]
    )
    s = SetRecord(
        "w", "evals/w.evalset.json", "adk", MetricConfig(specs, "test_config.json", "adk")
    )
    s.cases = [case]
    results = RunResults([s], "agent", "2026-11-26T00:00:00+00:00", 1.0)
    Scorer(ScoreOptions()).rest(results)
    return results


def _properties(results: RunResults) -> dict[str, str]:
    [case] = ET.fromstring(to_junit(results)).iter("testcase")
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_junit_says_adks_status_where_it_differs() -> None:
    results = _results(SPECS)
    assert results.sets[0].cases[0].status == "NOT_EVALUATED"
    assert _properties(results)["adk status"] == "PASSED"


def test_the_summarys_case_row_says_adks_status_where_it_differs() -> None:
    summary = render_summary(_results(SPECS))
    [row] = [line for line in summary.splitlines() if "| paris |" in line]
    assert "(ADK: PASSED) | paris |" in row


def test_a_case_adk_gives_the_same_status_reads_as_before() -> None:
    results = _results(SPECS[:1])
    assert "adk status" not in _properties(results)
    assert "ADK:" not in render_summary(results)
