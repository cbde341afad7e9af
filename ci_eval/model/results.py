"""What a run produced, as typed data: per eval set, case and run, the invocations, the
metrics' results, the verdicts and the comparison with the baseline. ``ci_eval.results`` reads
and writes it as the results file; the reporters render it. Pure data: no I/O."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pydantic_core
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from ci_eval.criteria import MetricConfig, MetricSpec
from ci_eval.errors import InputError
from ci_eval.model.comparison import Comparison
from ci_eval.model.evalset import Invocation
from ci_eval.model.status import Status


@dataclass
class MetricResult:
    name: str
    status: Status
    score: float | None = None
    threshold: float | None = None
    per_invocation: list[float | None] = field(default_factory=list)
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class CaseMetric:
    """One metric of one case, over its runs."""

    name: str
    status: Status
    score: float | None
    threshold: float | None
    informational: bool = False
    runs: list[float | None] = field(default_factory=list)  # per-run scores
    std: float | None = None
    min: float | None = None
    pass_rate: float | None = None
    flaky: bool = False
    reason: str | None = None


def invocation_json(inv: Invocation) -> str:
    """An invocation as the results file holds it: compact JSON, snake_case, no null fields,
    NaN and infinities as null; lone surrogates replaced (they cannot be written)."""
    try:  # the model's serialiser itself: model_dump_json's wrapper costs a fifth more
        return Invocation.__pydantic_serializer__.to_json(inv, exclude_none=True).decode()
    except PydanticSerializationError:
        from ci_eval.text import scrub_json

        data = scrub_json(inv.model_dump(mode="json", exclude_none=True))
        return pydantic_core.to_json(data, inf_nan_mode="null").decode()


def _thaw(value: Invocation | str) -> Invocation:
    if type(value) is not str:
        return value
    try:
        return Invocation.model_validate_json(value)
    except ValidationError as exc:
        # text read from a results file is checked here, when a report first reads it
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "the invocation"
        raise InputError(
            f"an invocation is not an ADK Invocation ({where}: {error['msg']}); "
            "is this a results file ci-eval wrote?"
        ) from None


@dataclass(init=False, eq=False)
class InvocationRecord:
    """One turn of a run: the expected and the actual invocation, and how the call went.

    ``expected`` and ``actual`` are :class:`Invocation` objects, or, once :meth:`compact`
    (or the results file) made them so, their JSON text as the results file holds it, a
    fraction of the memory: rebuilt on each access (nothing is cached, so read each once; the
    dialect's private ``extensions`` of an invocation are not kept, as the file does not keep
    them) and written to the results file as they are. The text is an ordinary string field,
    so redaction reaches it as it reaches any other string of a run."""

    # an Invocation, or its JSON text (see invocation_json)
    stored_expected: Invocation | str
    stored_actual: Invocation | str | None
    duration_s: float | None
    retries: int
    error: str | None

    def __init__(
        self,
        expected: Invocation | str,
        actual: Invocation | str | None = None,
        duration_s: float | None = None,
        retries: int = 0,
        error: str | None = None,
    ) -> None:
        self.stored_expected = expected
        self.stored_actual = actual
        self.duration_s = duration_s
        self.retries = retries
        self.error = error

    @property
    def expected(self) -> Invocation:
        return _thaw(self.stored_expected)

    @expected.setter
    def expected(self, value: Invocation | str) -> None:
        self.stored_expected = value

    @property
    def actual(self) -> Invocation | None:
        value = self.stored_actual
        return None if value is None else _thaw(value)

    @actual.setter
    def actual(self, value: Invocation | str | None) -> None:
        self.stored_actual = value

    @property
    def compacted(self) -> bool:
        return type(self.stored_expected) is str

    def expected_json(self) -> str:
        value = self.stored_expected
        return value if type(value) is str else invocation_json(value)

    def actual_json(self) -> str | None:
        value = self.stored_actual
        if value is None or type(value) is str:
            return value
        return invocation_json(value)

    def compact(self) -> InvocationRecord:
        """Keep the invocations as their JSON text from now on (see the class); returns self."""
        self.stored_expected = self.expected_json()
        self.stored_actual = self.actual_json()
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InvocationRecord):
            return NotImplemented
        return (self.duration_s, self.retries, self.error) == (
            other.duration_s,
            other.retries,
            other.error,
        ) and (self.expected, self.actual) == (other.expected, other.actual)


@dataclass
class RunRecord:
    run: int
    invocations: list[InvocationRecord] = field(default_factory=list)
    error: str | None = None  # why the agent could not finish this run (infrastructure)
    duration_s: float = 0.0
    metrics: list[MetricResult] = field(default_factory=list)  # per metric, once scored
    # a simulated user's run: who played the user, why the conversation ended, LLM calls
    simulation: dict[str, Any] | None = None
    started_s: float | None = None  # seconds after the run began (None: replayed or not run)
    replayed: bool = False  # durations are the recording's, not measured

    @property
    def retries(self) -> int:
        return sum(i.retries for i in self.invocations)


class TextRuns:
    """A scored case's runs kept as the results file's text of them (``text``: its runs,
    comma-separated) rather than as objects, e.g. in a temporary file: a read-only sequence of
    runs whose each access reads them back, as the results file would give them
    (``ci_eval.io.spill``). Not an ABC: checking for one is slower, on every case."""

    __slots__ = ()
    # what a kind of it provides (the class only names them: it is checked for, not built)
    error: str | None  # the first run's error that has one (CaseRecord.error)
    text: Callable[[], str]  # the runs' text, comma-separated, as the results file holds it


@dataclass
class CaseRecord:
    eval_id: str
    file: str
    line: int | None
    # once scored, possibly a TextRuns: read it, do not change it
    runs: list[RunRecord] = field(default_factory=list)
    skipped: str | None = None  # why the case was not run (e.g. needs a user simulator)
    extensions: dict[str, Any] = field(default_factory=dict)  # dialect data, for metrics
    rubrics: list[dict[str, Any]] | None = None
    metrics: list[CaseMetric] = field(default_factory=list)  # per metric, once scored
    verdict: Status | None = None  # PASSED, FAILED, ERROR, NOT_EVALUATED, SKIPPED once scored
    flaky: bool = False
    # ADK conversation_scenario (starting_prompt, conversation_plan, user_persona): the user's
    # turns are simulated; metrics that need an expected conversation do not apply
    scenario: dict[str, Any] | None = None

    @property
    def status(self) -> Status:
        """The verdict once scored; before that COMPLETED, ERROR or SKIPPED."""
        if self.verdict is not None:
            return self.verdict
        if self.skipped is not None:
            return Status.SKIPPED
        if any(r.error for r in self.runs) or not self.runs:
            return Status.ERROR
        return Status.COMPLETED

    @property
    def error(self) -> str | None:
        """Why the agent could not finish its first such run (None: it finished them all)."""
        runs = self.runs
        if isinstance(runs, TextRuns):
            return runs.error
        return next((r.error for r in runs if r.error), None)

    def compact(self) -> CaseRecord:
        """Once scored: every run's invocations kept as their JSON text (see
        :class:`InvocationRecord`), about a fifth of the memory of the objects; reports and
        the results file read them as before. Returns self."""
        if isinstance(self.runs, TextRuns):
            return self  # text already
        for run in self.runs:
            for invocation in run.invocations:
                invocation.compact()
        return self


@dataclass
class SetRecord:
    eval_set_id: str
    file: str
    dialect: str
    metrics: MetricConfig
    cases: list[CaseRecord] = field(default_factory=list)
    applied_metrics: list[MetricSpec] = field(default_factory=list)  # once scored


@dataclass
class RunResults:
    sets: list[SetRecord]
    agent: str
    started: str
    duration_s: float
    settings: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False
    comparison: Comparison | None = None  # when a baseline was compared
    fail_on: tuple[str, ...] = ("failure", "error")

    def cases(self) -> list[tuple[SetRecord, CaseRecord]]:
        return [(s, c) for s in self.sets for c in s.cases]

    def counts(self) -> Counter[Status]:
        """How many cases have each status, in one pass (at 20,000 cases each pass costs)."""
        return Counter(c.status for s in self.sets for c in s.cases)

    def count(self, status: Status) -> int:
        return self.counts()[status]
