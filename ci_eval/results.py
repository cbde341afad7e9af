"""What a run produced, as plain data, and its JSON form (``--results FILE``).

The JSON carries ``schema_version``; per eval set, case and run it holds the expected and actual
invocations (ADK's snake_case Invocation), timings, retries and errors. ``report``, ``compare``,
``merge`` and ``--agent replay`` read it back.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic_core
from typing_extensions import TypedDict

from ci_eval import __version__
from ci_eval.io.files import write_json_atomic as write_json_atomic  # re-exported
from ci_eval.io.jsonfast import serializer_for
from ci_eval.model.comparison import (
    Comparison,
)
from ci_eval.model.results import (
    CaseMetric,
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
    TextRuns,
)
from ci_eval.model.status import CASE_STATUSES, Status

SCHEMA_VERSION = 1
# the results model, re-exported: most readers of a results file want both
__all__ = [
    "SCHEMA_VERSION",
    "CaseMetric",
    "CaseRecord",
    "InvocationRecord",
    "MetricResult",
    "RunRecord",
    "RunResults",
    "SetRecord",
    "from_json",
    "read_results",
    "to_json",
    "write_json_atomic",
    "write_results",
]


def _comparison(c: Comparison | None) -> dict[str, Any] | None:
    if c is None:
        return None
    from dataclasses import asdict

    return {
        "baseline_commit": c.baseline_commit,
        "baseline_date": c.baseline_date,
        "baseline_source": c.baseline_source,
        "significance": c.significance,
        "min_history": c.min_history,
        "warnings": list(c.warnings),
        "regressions": len(c.regressed_cases()),
        "changes": [
            {
                "eval_set_id": x.set_id,
                "eval_id": x.case_id,
                "metric": x.metric,
                "before": x.before,
                "after": x.after,
                "regressed": x.regressed,
                "improved": x.improved,
                "method": x.method,
                "p_value": x.p_value,
                "history_passed": x.history_passed,
                "history_runs": x.history_runs,
                "failed_now": x.failed_now,
                "runs_now": x.runs_now,
            }
            for x in c.changes
        ],
        "cases": [{**asdict(j), "judgement": str(j.judgement)} for j in c.cases],
        "suite": None if c.suite is None else asdict(c.suite),
        "new_cases": [list(k) for k in c.new_cases],
        "removed_cases": [list(k) for k in c.removed_cases],
    }


def to_json(results: RunResults) -> dict[str, Any]:
    """The results file's data."""
    return _document(results, lambda cases: [json.loads(_case_line(c)) for c in cases])


def write_results(path: Path, results: RunResults) -> None:
    """The results file, written case by case: at 20,000 cases its data (hundreds of MB as
    Python objects) never exists whole."""
    from ci_eval.io import jsonwrite

    def cases(records: list[CaseRecord]) -> jsonwrite.Lazy:
        return jsonwrite.Lazy(jsonwrite.Raw(_case_line(c)) for c in records)

    write_json_atomic(path, _document(results, cases))


def _document(results: RunResults, cases: Callable[[list[CaseRecord]], Any]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ci-eval", "version": __version__},
        "started": results.started,
        "duration_s": round(results.duration_s, 3),
        "agent": results.agent,
        "settings": results.settings,
        "interrupted": results.interrupted,
        "totals": _totals(results),
        "fail_on": list(results.fail_on),
        "comparison": _comparison(results.comparison),
        "sets": [_set_json(s, cases(s.cases)) for s in results.sets],
    }


def _totals(results: RunResults) -> dict[str, int]:
    counted = results.counts()
    flaky = sum(1 for s in results.sets for c in s.cases if c.flaky)
    return {status.lower(): counted[status] for status in CASE_STATUSES} | {
        "cases": counted.total(),
        "flaky": flaky,
    }


def _set_json(s: SetRecord, cases: Any) -> dict[str, Any]:
    return {
        "eval_set_id": s.eval_set_id,
        "file": s.file,
        "dialect": s.dialect,
        "metrics": {
            "source": s.metrics.source,
            "dialect": s.metrics.dialect,
            "metrics": [
                {
                    "name": m.name,
                    "threshold": m.threshold,
                    "criterion": m.criterion,
                    "evaluator": m.evaluator,
                }
                for m in (s.applied_metrics or s.metrics.metrics)
            ],
        },
        "cases": cases,
    }


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _as_written(kind: type) -> Any:
    """A metric dataclass's fields as a TypedDict for pydantic-core's serialiser: the status an
    enum (found by its hint, not by trying each type), every other value written as what it is
    (an integer threshold stays an integer)."""
    fields = {f.name: Status if f.name == "status" else Any for f in dataclasses.fields(kind)}
    return TypedDict(f"{kind.__name__}Json", fields)  # type: ignore[operator]


class _CaseHead(TypedDict):
    """A case's line before its runs (built with these keys: a type checker holds them)."""

    eval_id: Any
    file: Any
    line: Any
    status: Status
    error: Any
    skipped: Any
    flaky: Any
    metrics: list[_as_written(CaseMetric)]  # type: ignore[valid-type]
    extensions: Any
    rubrics: Any
    conversation_scenario: Any


class _RunHead(TypedDict):
    """A run before its invocations."""

    run: Any
    error: Any
    duration_s: Any
    started_s: Any
    retries: Any
    metrics: list[_as_written(MetricResult)]  # type: ignore[valid-type]
    simulation: Any


def _json(value: Any, kind: type | None = None) -> str:
    """Compact JSON by pydantic-core (dataclasses as their fields, statuses as their names,
    NaN and infinities as null). Lone surrogates cannot be written: replaced, as everywhere."""
    try:
        if kind is not None:
            return serializer_for(kind).to_json(value, warnings=False).decode()
        return pydantic_core.to_json(value, inf_nan_mode="null").decode()
    except pydantic_core.PydanticSerializationError as exc:
        if "surrogates not allowed" not in str(exc):
            raise TypeError(f"not JSON serializable: {exc}") from None
        from ci_eval.text import scrub_json

        plain = json.loads(json.dumps(value, default=_plain, ensure_ascii=False))
        return pydantic_core.to_json(scrub_json(plain), inf_nan_mode="null").decode()


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dict(value.__dict__)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _case_line(c: CaseRecord) -> str:
    """A case as the results file holds it: one line of compact JSON. Invocations kept
    compact (:meth:`CaseRecord.compact`) are spliced in as they are."""
    head = _json(
        _CaseHead(
            eval_id=c.eval_id,
            file=c.file,
            line=c.line,
            status=c.status,
            error=c.error,
            skipped=c.skipped,
            flaky=c.flaky,
            metrics=[m.__dict__ for m in c.metrics],
            extensions=c.extensions,
            rubrics=c.rubrics,
            conversation_scenario=c.scenario,
        ),
        _CaseHead,
    )
    runs = c.runs
    text = runs.text() if isinstance(runs, TextRuns) else ",".join(map(run_text, runs))
    return head[:-1] + ',"runs":[' + text + "]}"


def run_text(r: RunRecord) -> str:
    """A run as the results file holds it: compact JSON (see :func:`_case_line`)."""
    head = _json(
        _RunHead(
            run=r.run,
            error=r.error,
            duration_s=round(r.duration_s, 4),
            started_s=_seconds(r.started_s),
            retries=r.retries,
            metrics=[m.__dict__ for m in r.metrics],
            simulation=r.simulation,
        ),
        _RunHead,
    )
    invocations = ",".join(
        '{"expected":'
        + i.expected_json()
        + ',"actual":'
        + (i.actual_json() or "null")
        + ","
        + _json({"duration_s": _seconds(i.duration_s), "retries": i.retries, "error": i.error})[1:]
        for i in r.invocations
    )
    return head[:-1] + ',"invocations":[' + invocations + "]}"


def read_results(path: Path, keep: Callable[[CaseRecord], CaseRecord] | None = None) -> RunResults:
    """Read a results file ``--results`` wrote (input of report, compare, merge): see
    :mod:`ci_eval.results_read`."""
    from ci_eval.results_read import read_results as read

    return read(path, keep)


def from_json(data: dict[str, Any], consume: bool = False) -> RunResults:
    """The results model from a results file's data: see :mod:`ci_eval.results_read`."""
    from ci_eval.results_read import from_json as convert

    return convert(data, consume)
