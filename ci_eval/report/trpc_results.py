"""trpc-agent-go's result files (``--trpc-results DIR``): one ``EvalSetResult`` per
trpc-agent-go eval set of the run, with its ``summary``, as trpc-agent-go's ``evaluation``
writes them (trpc-group/trpc-agent-go at 0e352fdd): ``evaluation/evalresult/evalresult.go`` and
``summary.go`` (the structs and their camelCase JSON tags, ``omitempty`` throughout: a zero
score or an empty list is left out), ``evaluation/evalresult/local/local.go`` and
``locator.go`` (``DIR/<appName>/<appName>_<evalSetId>_<uuid>.evalset_result.json``, two-space
indent, a final newline), ``evaluation/internal/multirun/multirun.go`` (the summary: per run,
per case and per metric statuses, counts and average scores), ``evaluation/service/local`` and
``aggregation.go`` (a case's ``finalEvalStatus`` is its metrics' statuses combined, failed
before passed before not_evaluated; its ``score`` 1 when passed, else 0; a run that failed is
``failed`` with its ``errorMessage`` and no metrics).

Only sets whose dialect is trpc get a file. The app is the set file's folder (trpc-agent-go's
local eval set manager reads ``<appName>/<evalSetId>.evalset.json``), ``ci-eval`` when it has
none. Invocations are written as ci-eval writes trpc eval sets (``ci_eval.dialects.trpc_write``,
generation 3), so the files replay through ``--agent replay``. What trpc-agent-go has no word
for: informational metrics are left out (trpc has none); a metric ci-eval could not compute is
left out and named in the run's ``errorMessage`` (trpc fails a case whose metric errored); a
case that was not run has one ``not_evaluated`` result per run (``failed`` with its error when
it could not run) and its status and reason under ``ciEval`` (Go's decoder ignores the key);
confirmation reruns are not runs of the set and are left out; criteria are not written (ci-eval
keeps them in its own spelling). The uuid is derived from the run's id and the set, so a file
is the same each time it is written and two runs never share one."""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ci_eval.dialects.trpc_write import dump_eval_set
from ci_eval.model import EvalCase, EvalSet, Invocation
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, MetricResult, RunRecord, RunResults, SetRecord

SUFFIX = ".evalset_result.json"
DIALECT = "trpc"
DEFAULT_APP = "ci-eval"
NONE_WRITTEN = "the run has no trpc-agent-go eval set: no trpc-agent-go result file written"
PASSED, FAILED, NOT_EVALUATED = "passed", "failed", "not_evaluated"
_STATUS = {Status.PASSED: PASSED, Status.FAILED: FAILED, Status.NOT_EVALUATED: NOT_EVALUATED}
_NAMESPACE = uuid.UUID("5b0f3c52-8f0e-4c1e-9a57-7d1f6c2b7e10")  # ci-eval's trpc result ids
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


def _num(value: float | None) -> float | int | None:
    """A float as Go's encoding/json writes it: ``1`` not ``1.0``; non-finite left out."""
    if value is None or not math.isfinite(value):
        return None
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def _go(data: dict[str, Any]) -> dict[str, Any]:
    """Go's ``omitempty``: zero numbers, empty strings, lists and objects, and nil left out."""
    return {k: v for k, v in data.items() if v not in (None, "", 0, [], {})}


def _portable(name: str) -> str:
    """``name`` when it is a portable file name piece, else a readable form of it and a hash
    (ids that read alike never share a file)."""
    if _SAFE.fullmatch(name) and not name.endswith("."):
        return name
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:60] or "x"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{safe}-{digest}"


def app_name(set_record: SetRecord) -> str:
    """The app trpc-agent-go would evaluate the set as: the folder its file is in."""
    folder = Path(set_record.file).parent.name
    return folder if folder not in ("", ".", "..") else DEFAULT_APP


def result_id(results: RunResults, index: int, set_record: SetRecord) -> str:
    """``<appName>_<evalSetId>_<uuid>`` as trpc's local manager names a result."""
    seed = "\0".join(
        [results.run_id or results.started, str(index), set_record.file, set_record.eval_set_id]
    )
    unique = uuid.uuid5(_NAMESPACE, seed)
    return f"{_portable(app_name(set_record))}_{_portable(set_record.eval_set_id)}_{unique}"


def _invocations(invocations: list[Invocation]) -> list[dict[str, Any]]:
    """Invocations in trpc's shape, as ci-eval's trpc eval set writer writes them."""
    if not invocations:
        return []
    case = EvalCase(eval_id="-", conversation=invocations)
    data, _ = dump_eval_set(EvalSet(eval_set_id="-", eval_cases=[case]))
    return data["evalCases"][0]["conversation"]


def _metric(m: MetricResult, score: float | None, status: str) -> dict[str, Any]:
    details = _go({"reason": m.reason, "score": _num(score)})
    return _go(
        {
            "metricName": m.name,
            "score": _num(score),
            "evalStatus": status,
            "threshold": _num(m.threshold),
            "details": details,
        }
    )


def _invocation_status(m: MetricResult, score: float | None) -> str:
    if score is None or m.threshold is None:
        return _STATUS.get(m.status, NOT_EVALUATED)
    return PASSED if score >= m.threshold else FAILED


def combine(statuses: Iterable[str]) -> str:
    """trpc's ``istatus.Summarize``: failed if any failed, else passed if any passed."""
    combined = NOT_EVALUATED
    for status in statuses:
        if status == FAILED:
            return FAILED
        if status == PASSED:
            combined = PASSED
    return combined


def _run_result(set_record: SetRecord, case: CaseRecord, run: RunRecord) -> dict[str, Any]:
    informational = {m.name for m in case.metrics if m.informational}
    head = {"evalSetId": set_record.eval_set_id, "evalId": case.eval_id, "runId": run.run}
    ids = {"sessionId": f"ci-eval-{case.eval_id}-run{run.run}", "userId": "ci-eval"}
    if run.error:
        return {**head, "finalEvalStatus": FAILED, "errorMessage": run.error, **ids}
    scored = [m for m in run.metrics if m.name not in informational and m.status in _STATUS]
    errors = [m for m in run.metrics if m.name not in informational and m.status not in _STATUS]
    overall = [_metric(m, m.score, _STATUS[m.status]) for m in scored]
    per = []
    actuals: list[Invocation] = []
    expecteds: list[Invocation] = []
    for record in run.invocations:
        actual = record.actual  # a compacted record rebuilds it on each read: once
        if actual is not None:
            actuals.append(actual)
            expecteds.append(record.expected)
    for n, (actual, expected) in enumerate(
        zip(_invocations(actuals), _invocations(expecteds), strict=True)
    ):
        results = []
        for m in scored:
            score = m.per_invocation[n] if n < len(m.per_invocation) else None
            results.append(_metric(m, score, _invocation_status(m, score)))
        per.append(
            _go(
                {
                    "actualInvocation": actual,
                    "expectedInvocation": expected,
                    "evalMetricResults": results,
                }
            )
        )
    status = FAILED if errors else combine(m["evalStatus"] for m in overall)
    message = "; ".join(f"metric {m.name}: {m.reason or 'could not be computed'}" for m in errors)
    return {
        **head,
        "score": 1 if status == PASSED else 0,
        "finalEvalStatus": status,
        "errorMessage": message,
        "overallEvalMetricResults": overall,
        "evalMetricResultPerInvocation": per,
        **ids,
    }


def _not_run(set_record: SetRecord, case: CaseRecord, run: int) -> dict[str, Any]:
    why = case.skipped or case.error or f"not run ({case.status})"
    # a case that could not run failed, as trpc fails a case whose inference failed; one
    # ci-eval chose not to run (skipped, carried) was not evaluated
    failed = case.skipped is None
    return {
        "evalSetId": set_record.eval_set_id,
        "evalId": case.eval_id,
        "runId": run,
        "finalEvalStatus": FAILED if failed else NOT_EVALUATED,
        "errorMessage": why if failed else "",
        "ciEval": {"status": str(case.status), "reason": why},
    }


def _num_runs(results: RunResults, set_record: SetRecord) -> int:
    seen = [r.run for c in set_record.cases for r in c.runs if not r.confirmation]
    return max([results.settings.num_runs or 1, *seen])


def case_results(results: RunResults, set_record: SetRecord) -> list[dict[str, Any]]:
    """The set's ``EvalCaseResult``s, run by run as trpc lists them (run 1's cases, then run
    2's), before ``omitempty``."""
    out = []
    for run_id in range(1, _num_runs(results, set_record) + 1):
        for case in set_record.cases:
            runs = [r for r in case.runs if not r.confirmation]
            if not runs:
                out.append(_not_run(set_record, case, run_id))
            for run in runs:
                if run.run == run_id:
                    out.append(_run_result(set_record, case, run))
    return out


# --- the summary, as evaluation/internal/multirun/multirun.go computes it ---------------------


def _counts(statuses: Iterable[str]) -> dict[str, int] | None:
    counted = {PASSED: 0, FAILED: 0, NOT_EVALUATED: 0}
    for status in statuses:
        counted[status] += 1
    out = _go({"passed": counted[PASSED], "failed": counted[FAILED]})
    out |= _go({"notEvaluated": counted[NOT_EVALUATED]})
    return out or None  # normalizeCounts: no counts at all is nil


def _metric_summaries(metric_results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """mergeMetricAgg then buildMetricSummaries: by name, sorted; the average over the samples
    that were evaluated, its status against the first sample's threshold."""
    agg: dict[str, dict[str, Any]] = {}
    for m in metric_results:
        a = agg.setdefault(m["metricName"], {"threshold": m.get("threshold", 0), "statuses": []})
        a["statuses"].append(m["evalStatus"])
        if m["evalStatus"] != NOT_EVALUATED:
            a.setdefault("scores", []).append(m.get("score", 0))
    out = []
    for name in sorted(agg):
        a = agg[name]
        average, status = 0.0, NOT_EVALUATED
        if a.get("scores"):
            total = 0.0
            for score in a["scores"]:  # in order, as Go adds them
                total += score
            average = total / len(a["scores"])
            status = PASSED if average >= a["threshold"] else FAILED
        out.append(
            _go(
                {
                    "metricName": name,
                    "averageScore": _num(average),
                    "evalStatus": status,
                    "threshold": _num(a["threshold"]),
                    "statusCounts": _counts(a["statuses"]),
                }
            )
        )
    return out


def summary(cases: list[dict[str, Any]], num_runs: int) -> dict[str, Any]:
    """``SummarizeMultiRun``'s ``EvalSetResultSummary`` of the set's case results."""
    run_ids = range(1, num_runs + 1)
    by_run = {r: [c for c in cases if c["runId"] == r] for r in run_ids}
    run_summaries, run_statuses = [], []
    for run_id, in_run in by_run.items():
        overall = combine(c["finalEvalStatus"] for c in in_run)
        run_statuses.append(overall)
        metrics = [m for c in in_run for m in c.get("overallEvalMetricResults", [])]
        run_summaries.append(
            _go(
                {
                    "runId": run_id,
                    "overallStatus": overall,
                    "caseStatusCounts": _counts(c["finalEvalStatus"] for c in in_run),
                    "metricSummaries": _metric_summaries(metrics),
                }
            )
        )
    per_case: dict[str, list[dict[str, Any]]] = {}
    for run_id in run_ids:
        for c in by_run[run_id]:
            per_case.setdefault(c["evalId"], []).append(c)
    case_summaries = []
    for eval_id in sorted(per_case):  # Go sorts by byte order: code point order for UTF-8
        runs = per_case[eval_id]
        statuses = [c["finalEvalStatus"] for c in runs]
        metrics = _metric_summaries(m for c in runs for m in c.get("overallEvalMetricResults", []))
        # summarizeCaseSummaryStatus: one run's status, or over runs the metrics' averages
        overall = combine(statuses if num_runs <= 1 else (m["evalStatus"] for m in metrics))
        if overall == NOT_EVALUATED and any(c.get("errorMessage") for c in runs):
            overall = FAILED
        case_summaries.append(
            _go(
                {
                    "evalId": eval_id,
                    "overallStatus": overall,
                    "runStatusCounts": _counts(statuses),
                    "metricSummaries": metrics,
                    "runSummaries": [_case_run_summary(c) for c in runs],
                }
            )
        )
    return _go(
        {
            "overallStatus": combine(c["overallStatus"] for c in case_summaries),
            "numRuns": num_runs,
            "runStatusCounts": _counts(run_statuses),
            "runSummaries": run_summaries,
            "evalCaseSummaries": case_summaries,
        }
    )


def _case_run_summary(case: dict[str, Any]) -> dict[str, Any]:
    metrics = sorted(case.get("overallEvalMetricResults", []), key=lambda m: m["metricName"])
    return _go(
        {
            "runId": case["runId"],
            "finalEvalStatus": case["finalEvalStatus"],
            "errorMessage": case.get("errorMessage"),
            "metricResults": [
                _go({k: m.get(k) for k in ("metricName", "score", "evalStatus", "threshold")})
                for m in metrics
            ],
        }
    )


def _timestamp(started: str) -> float | None:
    try:
        return datetime.fromisoformat(started).timestamp()
    except ValueError:
        return None


def eval_set_result(results: RunResults, index: int, set_record: SetRecord) -> dict[str, Any]:
    """The set's ``EvalSetResult``, as trpc's local manager saves it."""
    name = result_id(results, index, set_record)
    cases = case_results(results, set_record)
    return _go(
        {
            "evalSetResultId": name,
            "evalSetResultName": name,
            "evalSetId": set_record.eval_set_id,
            "evalCaseResults": [_go(c) for c in cases],
            "summary": summary(cases, _num_runs(results, set_record)),
            "creationTimestamp": _num(_timestamp(results.started)),
        }
    )


def to_trpc_results(results: RunResults) -> dict[str, dict[str, Any]]:
    """Path in the folder (``<appName>/<id>.evalset_result.json``) → ``EvalSetResult`` JSON,
    one per trpc-agent-go eval set; empty when the run has none."""
    out = {}
    for i, s in enumerate(results.sets):
        if s.dialect != DIALECT:
            continue
        data = eval_set_result(results, i, s)
        out[f"{_portable(app_name(s))}/{data['evalSetResultId']}{SUFFIX}"] = data
    return out
