"""adk-rs's eval report: one ``EvalReport`` JSON per eval set (``--adk-rs-report DIR``), in the
shape adk-rs's ``EvalRunner::run_set`` returns and its CLI's ``eval`` prints (skundu42/adk-rs
``adk-rs-eval/src/runner.rs`` and ``src/set.rs`` at 433b5668; ``docs/content/eval.ts`` at
f2a9f2fb): ``{"results": [EvalResult]}``, each ``{eval_set_id, eval_case_id, scores:
{name: {score, status, details}}, overall_status}``, statuses ``PASSED``/``FAILED``/``ERROR``.

adk-rs knows no informational, skipped or not-evaluated metric: informational metrics are left
out (adk-rs has none); a metric ci-eval could not compute is ``ERROR`` with score 0 and its reason
in ``details``; a case that did not run is an ``ERROR`` result with no scores, its reason under
``ci_eval`` (serde ignores the key when adk-rs reads the file), so every case appears. A case
run N times has N results, in order, as its ADK results do."""

from __future__ import annotations

from typing import Any

from ci_eval.model.status import Status
from ci_eval.report.adk_results import file_names
from ci_eval.results.file import CaseRecord, RunResults, SetRecord

SUFFIX = ".adk_rs_report.json"
_STATUS = {Status.PASSED: "PASSED", Status.FAILED: "FAILED"}


def _score(m: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"threshold": m.threshold}
    if m.per_invocation:
        details["per_invocation"] = list(m.per_invocation)
    if m.reason:
        details["reason"] = m.reason
    status = _STATUS.get(m.status, "ERROR")
    if status == "ERROR" and m.status != Status.ERROR:
        details["ci_eval_status"] = str(m.status)
    return {"score": m.score if m.score is not None else 0.0, "status": status, "details": details}


def _results(set_record: SetRecord, case: CaseRecord) -> list[dict[str, Any]]:
    head = {"eval_set_id": set_record.eval_set_id, "eval_case_id": case.eval_id}
    if not case.runs:  # skipped, or never run: said, not left out
        why = case.skipped or case.error or str(case.status)
        return [
            {
                **head,
                "scores": {},
                "overall_status": "ERROR",
                "ci_eval": {"status": str(case.status), "reason": why},
            }
        ]
    informational = {m.name for m in case.metrics if m.informational}
    out = []
    for run in case.runs:
        if run.error:
            out.append(
                {
                    **head,
                    "scores": {},
                    "overall_status": "ERROR",
                    "ci_eval": {"status": "ERROR", "reason": run.error, "run": run.run},
                }
            )
            continue
        scores = {m.name: _score(m) for m in run.metrics if m.name not in informational}
        statuses = {s["status"] for s in scores.values()}
        overall = "PASSED" if statuses <= {"PASSED"} else "FAILED"
        out.append({**head, "scores": scores, "overall_status": overall})
    return out


def to_adk_rs_reports(results: RunResults) -> dict[str, dict[str, Any]]:
    """File name → adk-rs EvalReport JSON, one per eval set."""
    names = file_names(results)
    return {
        names[i].removesuffix(".evalset_result.json") + SUFFIX: {
            "results": [r for c in s.cases for r in _results(s, c)]
        }
        for i, s in enumerate(results.sets)
    }
