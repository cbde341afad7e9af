"""A case's status as ADK gives it, recorded beside ci-eval's where the two differ.

google-adk 2.13 ``evaluation/local_eval_service.py``, line 554
(``LocalEvalService._generate_final_eval_status``), skips a metric that is NOT_EVALUATED or
INFORMATIONAL: a case with one metric not evaluated and the others passed PASSES in ADK.
ci-eval keeps such a case NOT_EVALUATED (the gate never passes what was not measured) and
records ADK's PASSED as ``adk_status``."""

from __future__ import annotations

import itertools

import pytest

from ci_eval.metrics.base import CaseMetric
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    from_json,
    to_json,
)
from ci_eval.score.adk_status import adk_case_status
from ci_eval.score.scorer import ScoreOptions, metrics_for, score_case

_STATUSES = (Status.PASSED, Status.FAILED, Status.NOT_EVALUATED, Status.INFO)


def _metric(i: int, status: Status) -> CaseMetric:
    informational = status == Status.INFO
    return CaseMetric(f"m{i}", status, None, None if informational else 0.5, informational)


@pytest.mark.parametrize(
    "statuses",
    [combo for n in range(4) for combo in itertools.product(_STATUSES, repeat=n)],
    ids=lambda c: ",".join(c) or "none",
)
def test_the_adk_status_is_what_google_adk_computes(statuses: tuple[Status, ...]) -> None:
    local_eval_service = pytest.importorskip("google.adk.evaluation.local_eval_service")
    eval_metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
    adk = eval_metrics.EvalStatus
    as_adk = {
        Status.PASSED: adk.PASSED,
        Status.FAILED: adk.FAILED,
        Status.NOT_EVALUATED: adk.NOT_EVALUATED,
        Status.INFO: adk.INFORMATIONAL,
    }
    theirs = local_eval_service.LocalEvalService._generate_final_eval_status(
        None,  # ``self`` is unused: the fold reads only the metric results
        [
            eval_metrics.EvalMetricResult(metric_name=f"m{i}", threshold=0.5, eval_status=as_adk[s])
            for i, s in enumerate(statuses)
        ],
    )
    ours = adk_case_status([_metric(i, s) for i, s in enumerate(statuses)])
    assert ours.value == theirs.name


def _inv() -> Invocation:
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="Weather in Paris?")]),
        final_response=Content(role="model", parts=[Part(text="Sunny")]),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name="get_weather", args={"city": "Paris"})]
        ),
    )


def _scored(set_dialect: str, specs: list[MetricSpec]) -> CaseRecord:
    case = CaseRecord(
        eval_id="paris", runs=[RunRecord(run=1, invocations=[InvocationRecord(_inv(), _inv())])]
    )
    record = SetRecord("s", "s.json", set_dialect, MetricConfig(specs, "test_config.json", "adk"))
    applied, dialect = metrics_for(record, ScoreOptions())
    score_case(case, applied, dialect, set_dialect, ScoreOptions())
    return case


# a metric ADK's registry does not know: ADK catches the NotFoundError and leaves the metric
# NOT_EVALUATED (local_eval_service.py ``_evaluate_metric_for_eval_case``), as ci-eval does
_PASSING = MetricSpec("tool_trajectory_avg_score", 1.0)
_UNKNOWN = MetricSpec("tool_trajectory_avg_scor", 0.5)


def test_an_adk_case_with_a_metric_not_evaluated_is_not_evaluated_and_adk_passes_it() -> None:
    case = _scored("adk", [_PASSING, _UNKNOWN])
    assert [m.status for m in case.metrics[:2]] == [Status.PASSED, Status.NOT_EVALUATED]
    assert (case.status, case.adk_status) == (Status.NOT_EVALUATED, Status.PASSED)


@pytest.mark.parametrize(
    "specs",
    [[_PASSING], [_UNKNOWN]],
    ids=["all passed", "nothing evaluated"],
)
def test_where_adk_gives_the_same_status_none_is_recorded(specs: list[MetricSpec]) -> None:
    assert _scored("adk", specs).adk_status is None


def test_a_legacy_adk_file_is_adks_too() -> None:
    assert _scored("adk-legacy", [_PASSING, _UNKNOWN]).adk_status == Status.PASSED


def test_another_tools_case_records_no_adk_status() -> None:
    case = _scored("adk-rs", [_PASSING, _UNKNOWN])
    assert (case.status, case.adk_status) == (Status.NOT_EVALUATED, None)


def _file(case: CaseRecord) -> dict:
    s = SetRecord("s", "s.json", "adk", MetricConfig([], "default", "adk"), cases=[case])
    return to_json(RunResults([s], "agent", "2026-11-26T00:00:00+00:00", 1.0))


def test_the_results_file_holds_adks_status_only_where_it_differs() -> None:
    differing = _file(_scored("adk", [_PASSING, _UNKNOWN]))
    [written] = differing["sets"][0]["cases"]
    assert (written["status"], written["adk_status"]) == ("NOT_EVALUATED", "PASSED")
    [read] = from_json(differing).sets[0].cases
    assert read.adk_status == Status.PASSED
    [same] = _file(_scored("adk", [_PASSING]))["sets"][0]["cases"]
    assert "adk_status" not in same
