"""ADK-format results: one ``.evalset_result.json`` per eval set (``--adk-results DIR``), in
the shape google-adk 2.13 writes and reads (``EvalSetResult``), so ADK's tooling and ci-eval's
``--agent replay`` can both use them. Statuses: 1 passed, 2 failed, 3 not evaluated, 4
informational; an errored case is FAILED with no metrics, as ADK records a crashed agent."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, RunResults, SetRecord

STATUS = {
    Status.PASSED: 1,
    Status.FAILED: 2,
    Status.NOT_EVALUATED: 3,
    Status.INFO: 4,
    Status.ERROR: 3,
}


def _metric(m: Any, per_invocation: int | None = None) -> dict[str, Any]:
    score = (
        m.score
        if per_invocation is None
        else (m.per_invocation[per_invocation] if per_invocation < len(m.per_invocation) else None)
    )
    status = m.status
    if (
        per_invocation is not None
        and status in (Status.PASSED, Status.FAILED)
        and score is not None
        and m.threshold is not None
    ):
        status = Status.PASSED if score >= m.threshold else Status.FAILED
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
        failed = bool(run.error) or any(m.status == Status.FAILED for m in run.metrics)
        passed = any(m.status == Status.PASSED for m in run.metrics)
        final = 2 if failed else 1 if passed else 3
        per = []
        for n, i in enumerate(run.invocations):
            actual = i.actual  # a compacted record rebuilds it on each read
            if actual is None:
                continue
            per.append(
                {
                    "actual_invocation": actual.model_dump(mode="json", exclude_none=True),
                    "expected_invocation": i.expected.model_dump(mode="json", exclude_none=True),
                    "eval_metric_results": [_metric(m, n) for m in run.metrics],
                }
            )
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


_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# names Windows reserves, whatever the extension (CON.evalset_result.json is CON)
_RESERVED = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} | {
    f"{d}{n}" for d in ("COM", "LPT") for n in [*"123456789", "¹", "²", "³"]
}


def _plain(eval_set_id: str) -> bool:
    """An id that is a portable file name as it is."""
    return (
        _SAFE.fullmatch(eval_set_id) is not None
        and not eval_set_id.startswith(".")
        and not eval_set_id.endswith(".")
        and eval_set_id.split(".")[0].upper() not in _RESERVED
    )


def file_name(set_record: SetRecord) -> str:
    """The set's id when it is a portable file name (as ADK names them), else a readable
    version of it with a hash of the id, so ids that read alike (``a/b``, ``a_b``, ``a b``)
    never share a file; reserved Windows names (``CON``) are never used bare."""
    eval_set_id = set_record.eval_set_id
    if _plain(eval_set_id):
        return f"{eval_set_id}.evalset_result.json"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", eval_set_id).strip("._-")[:80] or "eval_set"
    digest = hashlib.sha256(eval_set_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{safe}-{digest}.evalset_result.json"


def file_names(results: RunResults) -> dict[int, str]:
    """A file name per set (by index), unique even on case-insensitive file systems."""
    names = {i: file_name(s) for i, s in enumerate(results.sets)}
    taken: dict[str, int] = {}
    for i, name in names.items():
        key = name.lower()
        if key in taken:  # the same id twice, or ids differing only in case
            stem = name.removesuffix(".evalset_result.json")
            n = i + 1
            while f"{stem}-{n}.evalset_result.json".lower() in taken:
                n += 1
            name = names[i] = f"{stem}-{n}.evalset_result.json"
        taken[name.lower()] = i
    return names


def to_adk_results(results: RunResults) -> dict[str, dict[str, Any]]:
    """File name → EvalSetResult JSON, one per eval set."""
    out = {}
    names = file_names(results)
    for i, s in enumerate(results.sets):
        name = names[i]
        out[name] = {
            "eval_set_result_id": name.removesuffix(".evalset_result.json"),
            "eval_set_result_name": s.eval_set_id,
            "eval_set_id": s.eval_set_id,
            "eval_case_results": [r for c in s.cases for r in _case(s, c)],
            "creation_timestamp": 0.0,
        }
    return out
