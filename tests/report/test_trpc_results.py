"""`--trpc-results DIR` writes trpc-agent-go's own result files: one ``EvalSetResult`` (with its
``summary``) per trpc-agent-go eval set, at ``DIR/<app>/<app>_<set>_<uuid>.evalset_result.json``,
as trpc-agent-go's ``evaluation`` saves them (trpc-group/trpc-agent-go at 0e352fdd:
``evaluation/evalresult/evalresult.go``, ``summary.go``, ``local/local.go``, ``locator.go``,
``evaluation/internal/multirun/multirun.go``); the files replay through ``--agent replay``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.report.trpc_results import summary, to_trpc_results
from ci_eval.results.file import MetricResult
from tests import factories
from tests.conftest import CORPUS, SAMPLES
from tests.helpers import run_replay, run_sample_agent

TRPC_EXAMPLES = CORPUS / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation"

# The structs' JSON tags and Go types at trpc-group/trpc-agent-go 0e352fdd
# (evaluation/evalresult/evalresult.go, evaluation/evalresult/summary.go; invocations are
# evaluation/evalset's, checked by the replay): field → JSON type or nested struct
COUNTS = {"passed": int, "failed": int, "notEvaluated": int}
METRIC_DETAILS = {"reason": str, "score": float, "value": dict, "rubricScores": list}
METRIC = {
    "metricName": str,
    "score": float,
    "evalStatus": str,
    "threshold": float,
    "criterion": dict,
    "details": METRIC_DETAILS,
}
PER_INVOCATION = {
    "actualInvocation": dict,
    "expectedInvocation": dict,
    "evalMetricResults": [METRIC],
}
CASE_RESULT = {
    "evalSetId": str,
    "evalId": str,
    "runId": int,
    "score": float,
    "finalEvalStatus": str,
    "errorMessage": str,
    "overallEvalMetricResults": [METRIC],
    "evalMetricResultPerInvocation": [PER_INVOCATION],
    "sessionId": str,
    "userId": str,
    "ciEval": dict,  # ci-eval's own, for a case it did not run: Go's decoder ignores it
}
METRIC_SUMMARY = {
    "metricName": str,
    "averageScore": float,
    "evalStatus": str,
    "threshold": float,
    "statusCounts": COUNTS,
}
METRIC_RUN_SUMMARY = {"metricName": str, "score": float, "evalStatus": str, "threshold": float}
SUMMARY = {
    "overallStatus": str,
    "numRuns": int,
    "runStatusCounts": COUNTS,
    "runSummaries": [
        {
            "runId": int,
            "overallStatus": str,
            "caseStatusCounts": COUNTS,
            "metricSummaries": [METRIC_SUMMARY],
        }
    ],
    "evalCaseSummaries": [
        {
            "evalId": str,
            "overallStatus": str,
            "runStatusCounts": COUNTS,
            "metricSummaries": [METRIC_SUMMARY],
            "runSummaries": [
                {
                    "runId": int,
                    "finalEvalStatus": str,
                    "errorMessage": str,
                    "metricResults": [METRIC_RUN_SUMMARY],
                }
            ],
        }
    ],
}
SET_RESULT = {
    "evalSetResultId": str,
    "evalSetResultName": str,
    "evalSetId": str,
    "evalCaseResults": [CASE_RESULT],
    "summary": SUMMARY,
    "creationTimestamp": float,
}
STATUSES = {"passed", "failed", "not_evaluated"}  # evaluation/status/status.go


def _conforms(value: Any, shape: Any, where: str = "$") -> None:
    """``value`` decodes into the Go struct ``shape``, with ``omitempty``: no zero value."""
    if isinstance(shape, list):
        assert isinstance(value, list) and value, where
        for n, item in enumerate(value):
            _conforms(item, shape[0], f"{where}[{n}]")
    elif isinstance(shape, dict):
        assert isinstance(value, dict) and value, where
        for key, item in value.items():
            assert key in shape, f"{where}.{key} is no field of trpc's struct"
            _conforms(item, shape[key], f"{where}.{key}")
    elif shape is float:
        assert type(value) in (int, float) and value != 0, where
    else:
        assert type(value) is shape and value not in ("", 0), where
        if where.endswith("Status"):
            assert value in STATUSES, where


def _written(folder: Path) -> dict[str, Any]:
    [file] = folder.rglob("*.evalset_result.json")
    return json.loads(file.read_text())


def _scores(results: Path) -> dict[str, Any]:
    data = json.loads(results.read_text())
    return {
        (s["eval_set_id"], c["eval_id"]): (
            c["status"],
            # informational metrics (the turns' measured durations) are not trpc's: left out
            [
                (m["name"], m["score"], m["status"], m["runs"])
                for m in c["metrics"]
                if m["status"] != "INFO"
            ],
        )
        for s in data["sets"]
        for c in s["cases"]
    }


def test_only_trpc_sets_get_a_file_in_trpcs_layout(tmp_path: Path) -> None:
    run_sample_agent(str(SAMPLES / "evals"), "--trpc-results", "out", cwd=tmp_path)

    [file] = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    # DIR/<appName>/<appName>_<evalSetId>_<uuid>.evalset_result.json (locator.go, local.go):
    # the app is the folder trpc's eval set manager reads the set from
    assert file.parent.name == "trpc"
    assert file.name.startswith("trpc_weather-trpc_")
    data = json.loads(file.read_text())
    assert data["evalSetResultId"] == file.name.removesuffix(".evalset_result.json")
    assert data["evalSetResultName"] == data["evalSetResultId"]
    # encoder.SetIndent("", "  ") and Encode's final newline
    assert file.read_text() == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    _conforms(data, SET_RESULT)


def test_a_run_without_trpc_sets_says_so_in_one_line(tmp_path: Path) -> None:
    proc = run_sample_agent(
        str(SAMPLES / "evals/weather_basic.evalset.json"), "--trpc-results", "out", cwd=tmp_path
    )

    assert (
        "ci-eval: warning: out: the run has no trpc-agent-go eval set: "
        "no trpc-agent-go result file written"
    ) in proc.stderr
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


def test_the_files_replay_to_the_same_scores(tmp_path: Path) -> None:
    trpc_set = str(SAMPLES / "evals/trpc")
    run_sample_agent(
        trpc_set, "--num-runs", "2", "--results", "r1.json", "--trpc-results", "out", cwd=tmp_path
    )
    data = _written(tmp_path / "out")
    assert [(c["evalId"], c["runId"]) for c in data["evalCaseResults"]] == [
        ("tokyo_time", 1),
        ("tokyo_time", 2),
    ]

    proc = run_replay(
        trpc_set, "--num-runs", "2", "--results", "r2.json", replay="out", cwd=tmp_path
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _scores(tmp_path / "r2.json") == _scores(tmp_path / "r1.json")


@pytest.mark.parametrize("example", ["local", "tooltrajectory", "toolmock"])
def test_trpcs_own_recordings_rewritten_replay_to_the_same_scores(
    example: str, tmp_path: Path
) -> None:
    if not TRPC_EXAMPLES.is_dir():
        pytest.skip("../shared/corpus is not here")
    base = TRPC_EXAMPLES / example
    data = str(base / "data")
    run_replay(
        data, "--results", "r1.json", "--trpc-results", "out", replay=str(base / "output"),
        cwd=tmp_path,
    )  # fmt: skip

    run_replay(data, "--results", "r2.json", replay="out", cwd=tmp_path)

    first = _scores(tmp_path / "r1.json")
    assert first and _scores(tmp_path / "r2.json") == first
    _conforms(_written(tmp_path / "out"), SET_RESULT)


def _recorded_summaries() -> list[Path]:
    if not TRPC_EXAMPLES.is_dir():
        return []
    return sorted(
        p
        for p in TRPC_EXAMPLES.rglob("*.evalset_result.json")
        if '"summary"' in p.read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("file", _recorded_summaries(), ids=lambda p: p.parent.name)
def test_the_summary_is_the_one_trpc_computes_from_the_same_case_results(file: Path) -> None:
    """trpc-agent-go 0e352fdd's SummarizeMultiRun (evaluation/internal/multirun/multirun.go),
    against the summaries its examples recorded beside their case results."""
    data = json.loads(file.read_text(encoding="utf-8"))
    assert summary(data["evalCaseResults"], data["summary"]["numRuns"]) == data["summary"]


def _trpc(results: Any) -> Any:
    """The factory's set as a trpc-agent-go set, each run scored as its case is."""
    results.sets = [dataclasses.replace(s, dialect="trpc") for s in results.sets]
    for case in results.sets[0].cases:
        for run in case.runs:
            if not run.error:
                run.metrics = [
                    MetricResult(m.name, m.status, m.score, m.threshold) for m in case.metrics
                ]
    return results


def test_a_case_that_did_not_run_says_why_in_trpcs_terms() -> None:
    results = _trpc(factories.results({"ok": "PASSED", "skipped": "SKIPPED", "broke": "ERROR"}))

    [data] = to_trpc_results(results).values()

    by_case = {c["evalId"]: c for c in data["evalCaseResults"]}
    assert by_case["ok"]["finalEvalStatus"] == "passed" and by_case["ok"]["score"] == 1
    # not run by choice: not evaluated, the reason where Go's decoder does not look
    assert by_case["skipped"]["finalEvalStatus"] == "not_evaluated"
    assert "errorMessage" not in by_case["skipped"]
    assert by_case["skipped"]["ciEval"] == {"status": "SKIPPED", "reason": "needs a simulator"}
    # the agent failed: failed with its error, as trpc fails a case whose inference failed
    assert by_case["broke"]["finalEvalStatus"] == "failed"
    assert by_case["broke"]["errorMessage"] == "agent: HTTP 500"
    assert "score" not in by_case["broke"]  # omitempty: a zero score is not written
    assert data["summary"]["overallStatus"] == "failed"
    assert data["summary"]["runSummaries"][0]["caseStatusCounts"] == {
        "passed": 1,
        "failed": 1,
        "notEvaluated": 1,
    }
    _conforms(data, SET_RESULT)


def test_a_file_is_the_same_each_time_and_another_run_gets_another() -> None:
    first = to_trpc_results(_trpc(factories.results({"ok": "PASSED"})))
    assert to_trpc_results(_trpc(factories.results({"ok": "PASSED"}))) == first
    other = _trpc(factories.results({"ok": "PASSED"}))
    other.run_id = "another-run"
    assert set(to_trpc_results(other)).isdisjoint(first)
