"""The results file, built from the results model itself: the model's dataclasses
(:mod:`ci_eval.model.results`, :mod:`ci_eval.model.comparison`) are its schema, and pydantic
makes their reader, their checks and their writer from the fields and annotations. Nothing here
lists a field: a field added to a record is read, checked and written as it stands.

What is written by hand is what pydantic cannot do for a file of this size: a case is one line
of compact JSON whose runs, and whose runs' invocations (kept as their JSON text once scored),
are spliced in as text; the sets' cases are written and read one at a time
(:mod:`ci_eval.results.stream`). Those fields are marked ``APART`` in the record, and its
``DERIVED`` names the values the file holds for its readers and the model works out.

Reading refuses every value its annotation does not allow, with its JSON path
(:class:`Invalid`); a file that passes renders. ``schema_version`` 1 (ci-eval before the
model was the schema) and 2 (before the run's settings were a typed record) are read too; a
newer one is refused with the version that wrote it. Pure: text and data in, the model out.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pydantic_core
from pydantic import TypeAdapter, ValidationError

from ci_eval import __version__
from ci_eval.model.comparison import CaseJudgement, Comparison, Judgement
from ci_eval.model.results import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    TextRuns,
)
from ci_eval.model.values import Invalid

SCHEMA_VERSION = 3
# read as they are: 2 wrote ``settings`` as an open object, 3 as the typed record
# (:class:`ci_eval.model.facts.RunFacts`) of the same keys
AS_IS = (2, 3)
NAMES = "is this a results file ci-eval wrote?"


@functools.cache
def adapter(kind: type) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def warm() -> None:
    """Build the writer of each record the results file holds (tens of milliseconds of schema
    building), so that it is done while a run waits on its agent rather than after."""
    for kind in (RunResults, Comparison, SetRecord, CaseRecord, RunRecord, InvocationRecord):
        adapter(kind).serializer  # noqa: B018 - built on first use


# --- writing -----------------------------------------------------------------------------------


def record_json(record: Any, tail: str = "") -> str:
    """A record as compact JSON: its fields under their JSON names, less those written apart,
    then its derived values, then ``tail`` (the text of what is written apart, e.g.
    ``,"runs":[…]``). NaN and infinities become null; lone surrogates are replaced."""
    kind = type(record)
    derived = getattr(kind, "DERIVED", {})
    try:
        head = adapter(kind).serializer.to_json(record, warnings=False)
        more = (
            pydantic_core.to_json(
                {name: getattr(record, attr) for name, attr in derived.items()},
                inf_nan_mode="null",
            )
            if derived
            else b"{}"
        )
        text = head.decode()
        extra = more.decode()
    except pydantic_core.PydanticSerializationError as exc:
        if "surrogates not allowed" not in str(exc):
            raise
        return _scrubbed(record, tail)
    if extra != "{}":
        text = _with(text, extra[1:-1])
    return _with(text, tail)


def _with(text: str, members: str) -> str:
    """A JSON object's text with more members (``"a":1,"b":2``) before its closing brace."""
    members = members.lstrip(",")
    if not members:
        return text
    return text[:-1] + ("," if text != "{}" else "") + members + "}"


def _scrubbed(record: Any, tail: str) -> str:
    """:func:`record_json` for text with lone surrogates: they cannot be written; replaced."""
    from ci_eval.text.surrogates import scrub_json

    kind = type(record)
    data = adapter(kind).dump_python(record, mode="python", warnings=False)
    data |= {name: getattr(record, attr) for name, attr in getattr(kind, "DERIVED", {}).items()}
    plain = json.loads(json.dumps(data, default=_plain, ensure_ascii=False))
    return _with(pydantic_core.to_json(scrub_json(plain), inf_nan_mode="null").decode(), tail)


def _plain(value: Any) -> Any:
    if hasattr(value, "value"):  # an enum
        return value.value
    if hasattr(value, "__dataclass_fields__"):
        return adapter(type(value)).dump_python(value, mode="python")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def invocation_text(i: InvocationRecord) -> str:
    return record_json(
        i, '"expected":' + i.expected_json() + ',"actual":' + (i.actual_json() or "null")
    )


def run_text(r: RunRecord) -> str:
    """A run as the results file holds it: compact JSON, its invocations spliced in."""
    return record_json(r, '"invocations":[' + ",".join(map(invocation_text, r.invocations)) + "]")


def case_line(c: CaseRecord) -> str:
    """A case as the results file holds it: one line of compact JSON (runs already held as
    text, :class:`TextRuns`, are spliced in as they are)."""
    runs = c.runs
    text = runs.text() if isinstance(runs, TextRuns) else ",".join(map(run_text, runs))
    return record_json(c, '"runs":[' + text + "]")


def document(results: RunResults, cases: Callable[[list[CaseRecord]], Any]) -> dict[str, Any]:
    """The results file's data, its sets' cases as ``cases(records)`` gives them (parsed data,
    or text written one at a time)."""
    head = json.loads(record_json(results))
    comparison = None
    if results.comparison is not None:
        comparison = json.loads(record_json(results.comparison))
    sets = []
    for s in results.sets:
        one = json.loads(record_json(s))
        sets.append({**one, "cases": cases(s.cases)})
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ci-eval", "version": __version__},
        **head,
        "comparison": comparison,
        "sets": sets,
    }


# --- reading -----------------------------------------------------------------------------------


def check_version(data: dict[str, Any]) -> None:
    """Refuse what this ci-eval cannot read; upgrade what an earlier one wrote, in place."""
    version = data.get("schema_version")
    if type(version) is not int or version < 1:
        raise Invalid(["schema_version"], f"not a results schema version (found {version!r})")
    if version > SCHEMA_VERSION:
        tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
        by = tool.get("version") if isinstance(tool.get("version"), str) else "a newer ci-eval"
        raise Invalid(
            ["schema_version"],
            f"written by ci-eval {by} (results schema {version}); this is ci-eval "
            f"{__version__} (schema {SCHEMA_VERSION}): upgrade ci-eval to read it",
        )
    if version == 1:  # each set's "metrics.metrics" were the metrics applied
        for s in data.get("sets") or []:
            if isinstance(s, dict) and "applied_metrics" not in s:
                metrics = s.get("metrics")
                s["applied_metrics"] = metrics.get("metrics") if isinstance(metrics, dict) else []


def _validated(kind: type, data: Any, where: list[str | int]) -> Any:
    try:
        return adapter(kind).validate_python(data)
    except ValidationError as exc:
        loc, message = first_problem(exc)
        raise Invalid([*where, *loc], message) from None


def results_head(data: dict[str, Any]) -> RunResults:
    """The document without its sets (filled in as they are read)."""
    head = _validated(RunResults, {**data, "sets": []}, [])
    if isinstance(data.get("comparison"), dict) and "cases" not in data["comparison"]:
        _judged_from_changes(head.comparison)
    return head


def set_head(data: Any, at: int) -> SetRecord:
    """A set without its cases."""
    if not isinstance(data, dict):
        raise Invalid(["sets", at], f"a set is a JSON object; {NAMES}")
    return _validated(SetRecord, {**data, "cases": []}, ["sets", at])


def case_from(data: Any, set_file: str, at: tuple[int, int]) -> CaseRecord:
    case = _validated(CaseRecord, data, ["sets", at[0], "cases", at[1]])
    if "file" not in data:
        case.file = set_file
    return case


def from_data(data: Any, consume: bool = False) -> RunResults:
    """The results model from a results file's data (parsed whole). With ``consume`` each
    case's data is dropped once converted, so the two never both exist whole."""
    if not isinstance(data, dict) or "schema_version" not in data or "sets" not in data:
        raise Invalid([], "not a ci-eval results file (no schema_version and sets)")
    check_version(data)
    results = results_head(data)
    sets = data["sets"]
    if not isinstance(sets, list):
        raise Invalid(["sets"], f"the sets are a JSON array; {NAMES}")
    for i, s in enumerate(sets):
        record = set_head(s, i)
        cases = s.get("cases")
        if not isinstance(cases, list):
            raise Invalid(["sets", i, "cases"], f"a set's cases are a JSON array; {NAMES}")
        for j, c in enumerate(cases):
            if consume:
                cases[j] = None
            record.cases.append(case_from(c, record.file, (i, j)))
        results.sets.append(record)
    return results


def run_from(data: Any) -> RunRecord:
    """A run from its results-file data (:func:`run_text`)."""
    return adapter(RunRecord).validate_python(data)


def _judged_from_changes(comparison: Comparison | None) -> None:
    """A comparison written before the history gate judged cases: its regressed metrics still
    count, each as its case's regression."""
    if comparison is None:
        return
    for x in comparison.changes:
        if x.regressed and (x.set_id, x.case_id) not in comparison.regressed_cases():
            comparison.cases.append(
                CaseJudgement(
                    x.set_id, x.case_id, Judgement.REGRESSION, 0, 0, 0, 0,
                    x.method or "an earlier ci-eval's rule", metrics=[x.metric],
                )
            )  # fmt: skip


# pydantic names union members and validators in an error's place; a JSON path has none
_TAGS = {"int", "float", "str", "bool", "none", "list", "dict", "tuple", "enum"}


def _is_tag(part: object) -> bool:
    return isinstance(part, str) and (
        part in _TAGS
        or "[" in part
        or part.startswith(("constrained-", "function-", "literal[", "nullable["))
    )


def first_problem(exc: ValidationError, hint: str = NAMES) -> tuple[list[str | int], str]:
    """The first problem's place and a one-line message ending in ``hint``. Of a number's two
    readings (an integer, or else a float) the float's complaint is the one that says what is
    wrong."""
    errors = exc.errors(include_url=False)
    error = errors[0]
    loc = [p for p in error["loc"] if not _is_tag(p)]
    for other in errors[1:]:
        if [p for p in other["loc"] if not _is_tag(p)] == loc and "float" in other["loc"]:
            error = other
    text = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "greater_than_equal":  # every bound here is >= 0
        text = "must not be negative"
    if error["type"] == "missing":
        text = "is missing"
    value = error.get("input")
    if error["type"] != "missing":
        shown = repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__
        if len(shown) > 60:
            shown = shown[:57] + "…"
        text += f" (found {shown})"
    return loc, f"{text}; {hint}"
