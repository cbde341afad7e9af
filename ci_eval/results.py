"""What a run produced, as plain data, and its JSON form (``--results FILE``).

The JSON carries ``schema_version``; per eval set, case and run it holds the expected and actual
invocations (ADK's snake_case Invocation), timings, retries and errors. ``report``, ``compare``,
``merge`` and ``--agent replay`` read it back.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import operator
import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pydantic_core

from ci_eval import __version__
from ci_eval.criteria import MetricConfig, MetricSpec
from ci_eval.errors import InputError
from ci_eval.io.files import write_json_atomic as write_json_atomic  # re-exported
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
        "totals": {status.lower(): results.count(status) for status in CASE_STATUSES}
        | {"cases": len(results.cases()), "flaky": sum(1 for _, c in results.cases() if c.flaky)},
        "fail_on": list(results.fail_on),
        "comparison": _comparison(results.comparison),
        "sets": [_set_json(s, cases(s.cases)) for s in results.sets],
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


def _json(value: Any) -> str:
    """Compact JSON by pydantic-core (dataclasses as their fields, statuses as their names,
    NaN and infinities as null). Lone surrogates cannot be written: replaced, as everywhere."""
    try:
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
        {
            "eval_id": c.eval_id,
            "file": c.file,
            "line": c.line,
            "status": c.status,
            "error": c.error,
            "skipped": c.skipped,
            "flaky": c.flaky,
            "metrics": c.metrics,
            "extensions": c.extensions,
            "rubrics": c.rubrics,
            "conversation_scenario": c.scenario,
        }
    )
    return head[:-1] + ',"runs":[' + ",".join(map(_run_text, c.runs)) + "]}"


def _run_text(r: RunRecord) -> str:
    head = _json(
        {
            "run": r.run,
            "error": r.error,
            "duration_s": round(r.duration_s, 4),
            "started_s": _seconds(r.started_s),
            "retries": r.retries,
            "metrics": r.metrics,
            "simulation": r.simulation,
        }
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


def read_results(path: Path) -> RunResults:
    """Read a results file ``--results`` wrote (input of report, compare, merge). InputError
    names the file and what is wrong; nothing here trusts the file's shape.

    A file as ci-eval writes it is read case by case (:func:`_read_cases`): each case is
    parsed, checked and converted before the next, so the file's data never exists whole, and
    its invocations stay JSON text until a report reads them. Anything that fast reader cannot
    vouch for (a parse or shape error, NaN, huge numbers, escaped lone surrogates, a byte-order
    mark) is read again the careful way, which finds and names the problem or scrubs it."""
    from ci_eval.io.jsonpos import max_results_bytes, read_regular_file

    raw = read_regular_file(path, str(path), max_results_bytes())
    text = None if _needs_care(raw) else _utf8(raw)
    del raw  # the file is held once: as text
    if text is not None:
        enabled = gc.isenabled()
        gc.disable()  # millions of objects, all kept: collecting while reading only costs time
        try:
            results = _read_cases(text)
        finally:
            if enabled:
                gc.enable()
        if results is not None:
            return results
    del text
    return _read_carefully(path)


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def _read_carefully(path: Path) -> RunResults:
    from ci_eval.io.jsonpos import max_results_bytes, read_json_file

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


class _Careful(Exception):
    """The fast reader cannot vouch for this file: the careful one reads it."""


def _refuse(_: str) -> Any:
    raise _Careful


# What the fast reader leaves to the careful one: a byte-order mark, and escapes that decode
# to a lone surrogate. NaN and Infinity are refused as the scanner meets them, an integer over
# the digit limit fails to parse, and a number that overflows to infinity is looked for in
# what is kept of each case (:func:`_finite_case`).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def _needs_care(raw: bytes) -> bool:
    return raw.startswith(b"\xef\xbb\xbf") or _SURROGATE_ESCAPE.search(raw) is not None


def _finite(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return value - value == 0.0  # not inf, not NaN
    if kind is dict:
        return all(map(_finite, value.values()))
    if kind is list:
        return all(map(_finite, value))
    return True


def _finite_case(case: CaseRecord) -> bool:
    """No infinity in what the results model keeps of a case beyond the checked fields (the
    schema checks those): its free-form data, and its invocations' text."""
    if not (_finite(case.extensions) and _finite(case.rubrics) and _finite(case.scenario)):
        return False
    for run in case.runs:
        if not (_finite(run.simulation) and all(_finite(m.details) for m in run.metrics)):
            return False
        for i in run.invocations:
            if "Infinity" in i.stored_expected or "Infinity" in (i.stored_actual or ""):
                return False  # or the word in a text: then the careful reader decides
    return True


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _read_cases(text: str) -> RunResults | None:
    """The results in ``text``, read case by case; None if the careful reader must read it."""
    from ci_eval import results_schema

    scan_once = json.JSONDecoder(parse_constant=_refuse).scan_once  # the C scanner

    def scan(text: str, at: int) -> tuple[Any, int]:
        try:
            return scan_once(text, at)
        except StopIteration:  # no JSON value here (walk ends on StopIteration)
            raise _Careful from None

    skip = _WHITESPACE.match
    find = text.find

    by_line = [True]  # until a case is not a line of its own

    def scan_line(at: int) -> tuple[Any, int]:
        """The value at ``at``: a case on a line of its own, as ci-eval writes it, parsed by
        pydantic-core (twice the C scanner's speed, and repeated strings made once); in any
        other layout, by the scanner."""
        if by_line[0]:
            end = find("\n", at)
            end = len(text) if end < 0 else end
            while end > at and text[end - 1] in " \t\r":
                end -= 1
            if end > at and text[end - 1] == ",":
                end -= 1
            try:
                return pydantic_core.from_json(text[at:end], allow_inf_nan=False), end
            except ValueError:
                by_line[0] = False
        return scan(text, at)

    scanstring = json.decoder.scanstring

    def members(at: int) -> Iterator[tuple[str, int]]:
        """An object's keys from ``text[at] == "{"``, each with where its value starts; the
        caller reads the value and sends back where it ended."""
        at = skip(text, at + 1).end()
        if text[at] == "}":
            return at + 1
        while True:
            if text[at] != '"':
                raise _Careful
            key, at = scanstring(text, at + 1)
            at = skip(text, at).end()
            if text[at] != ":":
                raise _Careful
            at = yield key, skip(text, at + 1).end()
            at = skip(text, at).end()
            if text[at] == "}":
                return at + 1
            if text[at] != ",":
                raise _Careful
            at = skip(text, at + 1).end()

    def items(at: int) -> Iterator[int]:
        """An array's items from ``text[at] == "["``, as :func:`members`."""
        at = skip(text, at + 1).end()
        if text[at] == "]":
            return at + 1
        while True:
            at = yield at
            at = skip(text, at).end()
            if text[at] == "]":
                return at + 1
            if text[at] != ",":
                raise _Careful
            at = skip(text, at + 1).end()

    def walk(steps: Generator[Any, int, int], read: Callable[[Any], int]) -> int:
        """Drive a :func:`members` or :func:`items` walk; ``read`` reads each value."""
        try:
            step = next(steps)
            while True:
                step = steps.send(read(step))
        except StopIteration as end:
            return end.value

    def read_set(start: int, sets: list[SetRecord]) -> int:
        data: dict[str, Any] = {}
        cases: list[CaseRecord | dict[str, Any]] = []

        def read_case(at: int) -> int:
            case, end = scan_line(at)
            if not results_schema.valid_case(case):
                raise _Careful
            if "file" in data:  # converted at once, its data dropped
                record = _case_from(case, data["file"])
                if not _finite_case(record):
                    raise _Careful
                cases.append(record)
            else:  # the set's file comes after its cases
                cases.append(case)
            return end

        def member(step: tuple[str, int]) -> int:
            key, at = step
            if key == "cases" and text[at] == "[":
                data[key] = []
                return walk(items(at), read_case)
            data[key], end = scan(text, at)
            return end

        end = walk(members(start), member)
        if not (results_schema.valid_set(data) and _finite(data)):
            raise _Careful
        record = _set_from(data)
        for index, case in enumerate(cases):
            if type(case) is not CaseRecord:
                cases[index] = case = _case_from(case, record.file)
                if not _finite_case(case):
                    raise _Careful
        record.cases = cases  # type: ignore[assignment]
        sets.append(record)
        return end

    try:
        at = skip(text, 0).end()
        if text[at] != "{":
            return None
        data: dict[str, Any] = {}
        sets: list[SetRecord] = []

        def member(step: tuple[str, int]) -> int:
            key, at = step
            if key == "sets" and text[at] == "[":
                data[key] = []
                return walk(items(at), lambda at: read_set(at, sets) if text[at] == "{" else _no())
            data[key], end = scan(text, at)
            return end

        end = walk(members(at), member)
        if skip(text, end).end() != len(text):
            return None
        if data.get("schema_version") != SCHEMA_VERSION or not results_schema.valid_document(data):
            return None
        if not _finite(data):
            return None
        return _run_results(data, sets)
    except (_Careful, StopIteration, IndexError, ValueError, KeyError, TypeError, RecursionError):
        return None


def _no() -> int:
    raise _Careful


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
    for r in c.get("runs") or []:
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
        case.runs.append(run)
    return case


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
