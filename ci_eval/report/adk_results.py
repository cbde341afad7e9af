"""ADK-format results: one ``.evalset_result.json`` per eval set (``--adk-results DIR``), in
the shape google-adk 2.13 writes and reads (``EvalSetResult``), so ADK's tooling and ci-eval's
``--agent replay`` can both use them. Statuses: 1 passed, 2 failed, 3 not evaluated, 4
informational; an errored case is FAILED with no metrics, as ADK records a crashed agent."""

from __future__ import annotations

import re
from typing import Any

from ci_eval.results import CaseRecord, RunResults, SetRecord

STATUS = {"PASSED": 1, "FAILED": 2, "NOT_EVALUATED": 3, "INFO": 4, "ERROR": 3}


def _metric(m: Any, per_invocation: int | None = None) -> dict[str, Any]:
    score = (
        m.score
        if per_invocation is None
        else (m.per_invocation[per_invocation] if per_invocation < len(m.per_invocation) else None)
    )
    status = m.status
    if (
        per_invocation is not None
        and status in ("PASSED", "FAILED")
        and score is not None
        and m.threshold is not None
    ):
        status = "PASSED" if score >= m.threshold else "FAILED"
    return {
        "metric_name": m.name,
        "threshold": m.threshold,
        "score": score,
        "eval_status": STATUS.get(status, 3),
    }


def _case(set_record: SetRecord, case: CaseRecord) -> list[dict[str, Any]]:
    """One EvalCaseResult per run, as ADK records repeated runs."""
    out = []
    for run in case.runs:
        failed = bool(run.error) or any(m.status == "FAILED" for m in run.metrics)
        passed = any(m.status == "PASSED" for m in run.metrics)
        final = 2 if failed else 1 if passed else 3
        per = [
            {
                "actual_invocation": i.actual.model_dump(mode="json", exclude_none=True),
                "expected_invocation": i.expected.model_dump(mode="json", exclude_none=True),
                "eval_metric_results": [_metric(m, n) for m in run.metrics],
            }
            for n, i in enumerate(run.invocations)
            if i.actual is not None
        ]
        out.append(
            {
                "eval_set_id": set_record.eval_set_id,
                "eval_id": case.eval_id,
                "final_eval_status": final,
                "overall_eval_metric_results": []
                if run.error
                else [_metric(m) for m in run.metrics],
                "eval_metric_result_per_invocation": per,
                "session_id": f"ci-eval-{case.eval_id}-run{run.run}",
                "user_id": "ci-eval",
            }
        )
    return out


def file_name(set_record: SetRecord) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", set_record.eval_set_id).strip("_") or "eval_set"
    return f"{safe}.evalset_result.json"


def to_adk_results(results: RunResults) -> dict[str, dict[str, Any]]:
    """File name → EvalSetResult JSON, one per eval set."""
    out = {}
    for s in results.sets:
        name = file_name(s)
        out[name] = {
            "eval_set_result_id": name.removesuffix(".evalset_result.json"),
            "eval_set_result_name": s.eval_set_id,
            "eval_set_id": s.eval_set_id,
            "eval_case_results": [r for c in s.cases for r in _case(s, c)],
            "creation_timestamp": 0.0,
        }
    return out
