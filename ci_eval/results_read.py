"""Reading a results file back into the results model (``report``, ``compare``, ``merge``,
``baseline update``).

A file as ci-eval writes it is read case by case (:mod:`ci_eval.results_scan`): each case is
parsed, checked and converted before the next, so the file's data never exists whole, and its
invocations stay JSON text until a report reads them (checked as Invocations then). Anything
that fast reader cannot vouch for is read the careful way: the whole file parsed and checked
as before, which names the problem (file, JSON path) or scrubs it.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pydantic_core

from ci_eval.criteria import MetricConfig, MetricSpec
from ci_eval.errors import InputError
from ci_eval.model.comparison import (
    CaseJudgement,
    Comparison,
    Judgement,
    MetricChange,
    SuiteDrop,
)
from ci_eval.model.results import (
    CaseMetric,
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
)
from ci_eval.model.status import Status
from ci_eval.results import SCHEMA_VERSION


def read_results(path: Path, keep: Callable[[CaseRecord], CaseRecord] | None = None) -> RunResults:
    """Read a results file ``--results`` wrote (input of report, compare, merge). InputError
    names the file and what is wrong; nothing here trusts the file's shape. ``keep`` sees each
    case as it is read by the fast reader (to spill its runs: ``ci_eval.io.spill``).

    What the fast reader cannot vouch for (a parse or shape error, NaN, huge numbers, escaped
    lone surrogates, a byte-order mark) is read again the careful way."""
    from ci_eval.io.jsonfast import paused_gc
    from ci_eval.io.readfile import max_results_bytes, read_regular_file
    from ci_eval.results_scan import needs_care, read_cases

    raw = read_regular_file(path, str(path), max_results_bytes())
    text = None if needs_care(raw) else _utf8(raw)
    del raw  # the file is held once: as text
    if text is not None:
        with paused_gc():  # millions of objects, all kept: collecting would only cost time
            results = read_cases(text, keep)
        if results is not None:
            return results
    del text
    return read_carefully(path)


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def read_carefully(path: Path) -> RunResults:
    from ci_eval.io.jsonpos import read_json_file
    from ci_eval.io.readfile import max_results_bytes

    # errors name no line: the C scanner parses
    doc = read_json_file(path, str(path), positions_wanted=False, limit=max_results_bytes())
    data = doc.data
    if not isinstance(data, dict) or "schema_version" not in data or "sets" not in data:
        raise InputError(
            "not a ci-eval results file (no schema_version and sets); write one "
            "with `ci-eval run --results FILE`",
            path=str(path),
        )
    if data["schema_version"] != SCHEMA_VERSION:
        raise InputError(
            f"results schema_version {data['schema_version']!r} is not "
            f"{SCHEMA_VERSION}; rerun with this ci-eval",
            path=str(path),
        )
    from ci_eval import results_schema

    results_schema.check(doc)  # a crafted file is refused with its place, not rendered raw
    del doc  # and its text (the whole file) with it
    try:
        return from_json(data, consume=True)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(
            f"not a valid ci-eval results file ({type(exc).__name__}: {exc})", path=str(path)
        ) from None


_M = TypeVar("_M", MetricResult, CaseMetric)


def _metric_from(kind: type[_M], data: dict[str, Any]) -> _M:
    """A metric's result from the results file (the file was checked by ``results_schema``; missing
    optional fields take their defaults, null lists and flags become empty and false)."""
    names, defaulted, of_defaulted = _FIELDS[kind]
    if data.keys() == names and None not in of_defaulted(data):
        values = data  # as ci-eval writes it: every field (the reader's own copy)
    else:
        values = {
            k: v for k, v in data.items() if k in names and (v is not None or k not in defaulted)
        }
    values["status"] = _STATUSES[data["status"]]
    return kind(**values)


_STATUSES = {status.value: status for status in Status}


def _fields(kind: type) -> tuple[frozenset[str], frozenset[str], Callable[[Any], tuple[Any, ...]]]:
    """A dataclass's field names, those whose null in a file means their default (lists,
    dicts and flags), and a getter of their values as a tuple."""
    fields = dataclasses.fields(kind)
    defaulted = [
        f.name
        for f in fields
        if f.default_factory is not dataclasses.MISSING or isinstance(f.default, bool)
    ]
    getter = operator.itemgetter(*defaulted, defaulted[0])  # a tuple even of one
    return frozenset(f.name for f in fields), frozenset(defaulted), getter


_FIELDS = {kind: _fields(kind) for kind in (MetricResult, CaseMetric)}


def from_json(data: dict[str, Any], consume: bool = False) -> RunResults:
    """The results model from a results file's data. With ``consume`` each case's data is
    dropped from ``data`` once converted, so the two never both exist whole (a 20,000-case
    file is hundreds of MB either way)."""
    sets = []
    for s in data["sets"]:
        record = _set_from(s)
        cases = s["cases"]
        for index, c in enumerate(cases):
            if consume:
                cases[index] = None
            record.cases.append(_case_from(c, record.file))
        sets.append(record)
    return _run_results(data, sets)


def _set_from(s: dict[str, Any]) -> SetRecord:
    m = s["metrics"]
    specs = [
        MetricSpec(x["name"], x.get("threshold"), x.get("criterion") or {}, x.get("evaluator"))
        for x in m.get("metrics") or []
    ]
    return SetRecord(
        s["eval_set_id"],
        s["file"],
        s.get("dialect", "adk"),
        MetricConfig(specs, m.get("source", "default"), m.get("dialect", "default")),
        applied_metrics=list(specs),
    )


def _invocation_text(data: dict[str, Any]) -> str:
    # kept as JSON text, checked as an Invocation when a report reads it
    return pydantic_core.to_json(data).decode()


def _case_from(c: dict[str, Any], file: str) -> CaseRecord:
    status = c.get("status")
    case = CaseRecord(
        c["eval_id"],
        c.get("file", file),
        c.get("line"),
        skipped=c.get("skipped"),
        extensions=c.get("extensions") or {},
        rubrics=c.get("rubrics"),
        scenario=c.get("conversation_scenario"),
        verdict=_STATUSES[status] if status not in (None, Status.COMPLETED) else None,
        flaky=bool(c.get("flaky")),
        metrics=[_metric_from(CaseMetric, x) for x in c.get("metrics") or []],
    )
    case.runs = [run_from(r) for r in c.get("runs") or []]
    return case


def run_from(r: dict[str, Any]) -> RunRecord:
    """A run from its results-file data (:func:`ci_eval.results.run_text`)."""
    run = RunRecord(
        r["run"],
        error=r.get("error"),
        duration_s=float(r.get("duration_s") or 0.0),
        simulation=r.get("simulation"),
    )
    if isinstance(r.get("started_s"), int | float):
        run.started_s = float(r["started_s"])
    run.metrics = [_metric_from(MetricResult, x) for x in r.get("metrics") or []]
    run.invocations = [
        InvocationRecord(
            _invocation_text(i["expected"]),
            _invocation_text(i["actual"]) if i.get("actual") else None,
            i.get("duration_s"),
            int(i.get("retries") or 0),
            i.get("error"),
        )
        for i in r.get("invocations") or []
    ]
    return run


def _run_results(data: dict[str, Any], sets: list[SetRecord]) -> RunResults:
    comparison = None
    if data.get("comparison"):
        c = data["comparison"]
        comparison = Comparison(
            c.get("baseline_commit"),
            c.get("baseline_date"),
            [
                MetricChange(
                    x["eval_set_id"],
                    x["eval_id"],
                    x["metric"],
                    x.get("before"),
                    x.get("after"),
                    bool(x.get("regressed")),
                    bool(x.get("improved")),
                    x.get("method"),
                    x.get("p_value"),
                    x.get("history_passed"),
                    x.get("history_runs"),
                    x.get("failed_now"),
                    x.get("runs_now"),
                )
                for x in c.get("changes") or []
            ],
            [tuple(k) for k in c.get("new_cases") or []],
            [tuple(k) for k in c.get("removed_cases") or []],
            list(c.get("warnings") or []),
            [
                CaseJudgement(**{**j, "judgement": Judgement(j["judgement"])})
                for j in c.get("cases") or []
            ],
            SuiteDrop(**c["suite"]) if c.get("suite") else None,
            float(c.get("significance") or 0.05),
            int(c.get("min_history") or 5),
            c.get("baseline_source"),
        )
        if "cases" not in c:  # written before the history gate: its regressions still count
            for x in comparison.regressions:
                if (x.set_id, x.case_id) not in comparison.regressed_cases():
                    comparison.cases.append(
                        CaseJudgement(
                            x.set_id, x.case_id, Judgement.REGRESSION, 0, 0, 0, 0,
                            x.method or "an earlier ci-eval's rule", metrics=[x.metric],
                        )
                    )  # fmt: skip
    return RunResults(
        comparison=comparison,
        fail_on=tuple(data.get("fail_on") or ("failure", "error")),
        sets=sets,
        agent=data.get("agent", ""),
        started=data.get("started", ""),
        duration_s=float(data.get("duration_s") or 0.0),
        settings=data.get("settings") or {},
        interrupted=bool(data.get("interrupted")),
    )
