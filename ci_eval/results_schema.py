"""The shape a results file must have before ``report``, ``compare``, ``merge`` or
``baseline update`` trust it. The fork-safe two-phase workflow reads a results file that a
pull request's own job wrote: every value that reaches a report is checked here for its type
and range (statuses from a fixed set, finite numbers, a real timestamp), so a crafted file is
refused with its file, line and JSON path instead of landing raw in a summary or crashing it.
Unknown keys are allowed (newer ci-eval versions may add some)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, NotRequired

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic import FiniteFloat as Number
from typing_extensions import TypedDict

from ci_eval.io.jsonpos import JsonDocument

STRICT = ConfigDict(strict=True, extra="allow")

CaseStatus = Literal["PASSED", "FAILED", "ERROR", "NOT_EVALUATED", "SKIPPED", "COMPLETED"]
MetricStatus = Literal["PASSED", "FAILED", "ERROR", "NOT_EVALUATED", "INFO"]
FailOn = Literal["failure", "regression", "error", "not-evaluated"]


_STAMP = re.compile(r"[\w:+\-. ]*")


def _timestamp(value: str) -> str:
    # a date and time, or the short label a test or tool put there; never markup or mentions
    if not _STAMP.fullmatch(value):
        raise ValueError("not a date and time")
    return value


CaseKey = Annotated[list[str], Field(min_length=2, max_length=2)]  # [eval_set_id, eval_id]
Timestamp = Annotated[str, AfterValidator(_timestamp)]
# checked by pydantic-core itself (a Python validator per value costs a second at 20,000 cases)
Seconds = Annotated[Number, Field(ge=0)]
Count = Annotated[int, Field(ge=0)]


class MetricSpecJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    name: str
    threshold: NotRequired[Number | None]
    criterion: NotRequired[dict[str, Any] | None]
    evaluator: NotRequired[str | None]


class MetricsJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    source: NotRequired[str]
    dialect: NotRequired[str]
    metrics: NotRequired[list[MetricSpecJson] | None]


class RunMetricJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    name: str
    status: MetricStatus
    score: NotRequired[Number | None]
    threshold: NotRequired[Number | None]
    per_invocation: NotRequired[list[Number | None] | None]
    reason: NotRequired[str | None]
    details: NotRequired[dict[str, Any] | None]


class CaseMetricJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    name: str
    status: MetricStatus
    score: NotRequired[Number | None]
    threshold: NotRequired[Number | None]
    informational: NotRequired[bool | None]
    runs: NotRequired[list[Number | None] | None]
    std: NotRequired[Number | None]
    min: NotRequired[Number | None]
    pass_rate: NotRequired[Number | None]
    flaky: NotRequired[bool | None]
    reason: NotRequired[str | None]


class InvocationJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    expected: dict[str, Any]
    actual: NotRequired[dict[str, Any] | None]
    duration_s: NotRequired[Seconds | None]
    retries: NotRequired[Count | None]
    error: NotRequired[str | None]


class RunJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    run: Count
    error: NotRequired[str | None]
    duration_s: NotRequired[Seconds | None]
    retries: NotRequired[Count | None]
    metrics: NotRequired[list[RunMetricJson] | None]
    invocations: NotRequired[list[InvocationJson] | None]


class CaseJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    eval_id: str
    file: NotRequired[str]
    line: NotRequired[Count | None]
    status: NotRequired[CaseStatus | None]
    error: NotRequired[str | None]
    skipped: NotRequired[str | None]
    flaky: NotRequired[bool | None]
    metrics: NotRequired[list[CaseMetricJson] | None]
    extensions: NotRequired[dict[str, Any] | None]
    rubrics: NotRequired[list[dict[str, Any]] | None]
    runs: NotRequired[list[RunJson] | None]


class SetJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    eval_set_id: str
    file: str
    dialect: NotRequired[str]
    metrics: MetricsJson
    cases: list[CaseJson]


class ChangeJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    eval_set_id: str
    eval_id: str
    metric: str
    before: NotRequired[Number | None]
    after: NotRequired[Number | None]
    regressed: NotRequired[bool | None]
    improved: NotRequired[bool | None]
    method: NotRequired[str | None]
    p_value: NotRequired[Number | None]


class ComparisonJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    baseline_commit: NotRequired[str | None]
    baseline_date: NotRequired[str | None]
    warnings: NotRequired[list[str] | None]
    changes: NotRequired[list[ChangeJson] | None]
    new_cases: NotRequired[list[CaseKey] | None]
    removed_cases: NotRequired[list[CaseKey] | None]


class SettingsJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    agent: NotRequired[str | None]
    concurrency: NotRequired[Count | None]
    timeout: NotRequired[Seconds | None]
    retries: NotRequired[Count | None]
    num_runs: NotRequired[Count | None]
    min_pass: NotRequired[Count | None]
    shard: NotRequired[str | None]
    merged_from: NotRequired[Count | None]


class ResultsJson(TypedDict):
    __pydantic_config__ = STRICT  # type: ignore[misc]
    schema_version: int
    started: NotRequired[Timestamp]
    duration_s: NotRequired[Seconds | None]
    agent: NotRequired[str]
    settings: NotRequired[SettingsJson | None]
    interrupted: NotRequired[bool | None]
    fail_on: NotRequired[list[FailOn] | None]
    comparison: NotRequired[ComparisonJson | None]
    sets: list[SetJson]


_ADAPTER = TypeAdapter(ResultsJson)
_SET = TypeAdapter(SetJson)
_CASE = TypeAdapter(CaseJson)


def _valid(adapter: TypeAdapter[Any], data: Any) -> bool:
    try:
        adapter.validate_python(data)
    except ValidationError:
        return False
    return True


# A results file is read case by case: the document (its sets' cases left empty), each set
# (its cases left empty) and each case are checked apart, which together is :func:`check`.
def valid_document(data: Any) -> bool:
    return _valid(_ADAPTER, data)


def valid_set(data: Any) -> bool:
    return _valid(_SET, data)


def valid_case(data: Any) -> bool:
    return _valid(_CASE, data)


def check(doc: JsonDocument) -> None:
    """InputError at the first value a report could not trust: file, line, JSON path, why."""
    try:
        _ADAPTER.validate_python(doc.data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = [part for part in error["loc"] if not _is_union_tag(part)]
        raise doc.error(_message(error), loc) from None


def _is_union_tag(part: object) -> bool:
    # pydantic names union members in the location ("int", "constrained-float", …)
    return isinstance(part, str) and (
        part in {"int", "float", "str", "bool", "none", "list", "dict", "tuple"}
        or "[" in part
        or part.startswith(("constrained-", "function-", "literal["))
    )


def _message(error: Any) -> str:
    text = str(error["msg"])
    text = text.removeprefix("Value error, ")
    if error["type"] == "greater_than_equal":  # every bound here is >= 0
        text = "must not be negative"
    value = error.get("input")
    shown = repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__
    if len(shown) > 60:
        shown = shown[:57] + "…"
    return f"{text} (found {shown}); is this a results file ci-eval wrote?"
