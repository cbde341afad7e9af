"""What a run produced, as typed data: per eval set, case and run, the invocations, the
metrics' results, the verdicts and the comparison with the baseline. These dataclasses are also
the results file's schema: :mod:`ci_eval.model.results_file` builds the file's reader, checks
and writer from their fields and annotations (:mod:`ci_eval.model.values`), so a field added
here is read, checked and written with no second edit. JSON names that differ from a field's
are its alias; a value the file holds for its readers but the model works out (a case's status
and error, a run's retries) is listed in ``DERIVED`` (JSON name: attribute), written and never
read back; a field written by hand (text spliced in, cases one by one) is marked ``APART``.
Pure data: no I/O."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, ClassVar

import pydantic_core
from pydantic import BeforeValidator, Field, ValidationError
from pydantic_core import PydanticSerializationError

from ci_eval.errors import InputError
from ci_eval.model.comparison import Comparison
from ci_eval.model.evalset import Invocation
from ci_eval.model.facts import RunFacts
from ci_eval.model.gate_words import FailOn
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status
from ci_eval.model.usage import Usage
from ci_eval.model.values import (
    APART,
    RECORD,
    Count,
    Data,
    Flag,
    Items,
    Number,
    RunSeconds,
    Seconds,
    Text,
    Timestamp,
)


@dataclass(slots=True)
class MetricResult:
    __pydantic_config__ = RECORD

    name: Text
    status: Status
    score: Number | None = None
    threshold: Number | None = None
    per_invocation: Items[Number | None] = field(default_factory=list)
    reason: Text | None = None
    details: Data = field(default_factory=dict)


@dataclass(slots=True)
class CaseMetric:
    """One metric of one case, over its runs."""

    __pydantic_config__ = RECORD

    name: Text
    status: Status
    score: Number | None
    threshold: Number | None
    informational: Flag = False
    runs: Items[Number | None] = field(default_factory=list)  # per-run scores
    std: Number | None = None
    min: Number | None = None
    pass_rate: Number | None = None
    flaky: Flag = False
    reason: Text | None = None
    # per run, did it fail the metric — kept only where some run's verdict is not its score
    # against the threshold (a metric with its own rule: adk-rs's any-invocation rule, a custom
    # metric's own status); aligned with ``runs``, None where a run has no verdict. Empty: each
    # run failed iff its score is below the threshold
    run_fails: Items[Flag | None] = field(default_factory=list)


class TrajectorySource(StrEnum):
    """Where a turn's tool calls (and intermediate responses) came from."""

    REPLY = "reply"  # the agent's reply (its tool_calls, its events)
    SPANS = "spans"  # the agent's OpenTelemetry spans, received during the run (--otlp)
    NONE = "none"  # neither the reply nor the spans hold a tool call: the turn called none


@dataclass(frozen=True, slots=True)
class Trajectory:
    """How a turn's trajectory was found when the run received its agent's spans (``--otlp``):
    the reply's, where it has tool calls (a disagreement with the spans said), else the
    spans'. None on a turn of a run without ``--otlp``: the reply's, as always."""

    __pydantic_config__ = RECORD

    source: TrajectorySource
    spans: Count = 0  # the turn's spans received by the end of its wait, kept
    dropped: Count = 0  # its spans past the ceiling per turn, not kept
    # the agent's top span of the turn (a child of the turn's traceparent) came within the wait;
    # False: the spans are what had come when the wait ended
    complete: Flag = True
    disagreement: Text | None = None  # the spans' calls where they differ from the reply's
    unread: Text | None = None  # why the turn's spans could not be read as a trajectory


def invocation_json(inv: Invocation) -> str:
    """An invocation as the results file holds it: compact JSON, snake_case, no null fields,
    NaN and infinities as null; lone surrogates replaced (they cannot be written)."""
    try:  # the model's serialiser itself: model_dump_json's wrapper adds its own cost
        return Invocation.__pydantic_serializer__.to_json(inv, exclude_none=True).decode()
    except PydanticSerializationError:
        from ci_eval.text.surrogates import scrub_json

        data = scrub_json(inv.model_dump(mode="json", exclude_none=True))
        return pydantic_core.to_json(data, inf_nan_mode="null").decode()


def _object_text(value: Any) -> Any:
    """An invocation read from a file: a JSON object, kept as its text (checked as an
    Invocation when a report first reads it)."""
    if isinstance(value, dict):
        return pydantic_core.to_json(value).decode()
    if isinstance(value, Invocation):
        return value
    raise ValueError("an invocation is a JSON object")


# an Invocation, or its JSON text (see invocation_json); in a file, a JSON object
StoredInvocation = Annotated[Invocation | str, BeforeValidator(_object_text)]


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


@dataclass(init=False, eq=False, slots=True)
class InvocationRecord:
    """One turn of a run: the expected and the actual invocation, and how the call went.

    ``expected`` and ``actual`` are :class:`Invocation` objects, or, once :meth:`compact`
    (or the results file) made them so, their JSON text as the results file holds it, a
    fraction of the memory: rebuilt on each access (nothing is cached, so read each once; the
    dialect's private ``extensions`` of an invocation are not kept, as the file does not keep
    them) and written to the results file as they are. The text is an ordinary string field,
    so redaction reaches it as it reaches any other string of a run."""

    __pydantic_config__ = RECORD

    # written by hand, as their JSON text spliced in (pydantic cannot write text as JSON)
    stored_expected: Annotated[StoredInvocation, Field(alias="expected"), APART]
    stored_actual: Annotated[StoredInvocation | None, Field(alias="actual"), APART] = None
    duration_s: Seconds | None = None
    retries: Annotated[Count, BeforeValidator(lambda v: 0 if v is None else v)] = 0
    error: Text | None = None
    # what the agent's own model calls spent in this turn, as it reported them (None: it did
    # not say); never a judge's or a simulated user's
    usage: Usage | None = None
    # where the actual tool calls came from, when the run received the agent's spans; not
    # written when None (a run without --otlp writes the file it wrote before)
    trajectory: Annotated[Trajectory | None, Field(exclude_if=lambda v: v is None)] = None

    def __init__(
        self,
        expected: Invocation | str,
        actual: Invocation | str | None = None,
        duration_s: float | None = None,
        retries: int = 0,
        error: str | None = None,
        usage: Usage | None = None,
        trajectory: Trajectory | None = None,
    ) -> None:
        self.stored_expected = expected
        self.stored_actual = actual
        self.duration_s = duration_s
        self.retries = retries
        self.error = error
        self.usage = usage
        self.trajectory = trajectory

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
        """Both invocations held as their JSON text (what :meth:`compact` leaves)."""
        actual = self.stored_actual
        return type(self.stored_expected) is str and (actual is None or type(actual) is str)

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
        return (self.duration_s, self.retries, self.error, self.usage, self.trajectory) == (
            other.duration_s,
            other.retries,
            other.error,
            other.usage,
            other.trajectory,
        ) and (self.expected, self.actual) == (other.expected, other.actual)


@dataclass(slots=True)
class RunRecord:
    __pydantic_config__ = RECORD
    DERIVED: ClassVar[dict[str, str]] = {"retries": "retries"}

    run: Count
    invocations: Annotated[Items[InvocationRecord], APART] = field(default_factory=list)
    error: Text | None = None  # why the agent could not finish this run (infrastructure)
    duration_s: Annotated[Seconds, BeforeValidator(lambda v: 0.0 if v is None else v)] = 0.0
    metrics: Items[MetricResult] = field(default_factory=list)  # per metric, once scored
    # a simulated user's run: who played the user, why the conversation ended, LLM calls
    simulation: dict[str, Any] | None = None
    started_s: Seconds | None = None  # seconds after the run began (None: replayed or not run)
    replayed: Flag = False  # durations are the recording's, not measured
    confirmation: Flag = False  # a confirmation rerun the gate asked for (not one of num_runs)
    # the metrics' scores and verdicts a source tool's report gave for this run (an adk-rs
    # report replayed: metric name → score, status, details), used instead of scoring it
    reported: Data | None = None

    @property
    def retries(self) -> int:
        return sum(i.retries for i in self.invocations)


class TextRuns:
    """A scored case's runs kept as the results file's text of them (``text``: its runs,
    comma-separated) rather than as objects, e.g. in a temporary file: a read-only sequence of
    runs whose each access reads them back, as the results file would give them
    (``ci_eval.results.spill``). Not an ABC: checking for one is slower, on every case."""

    __slots__ = ()
    # what a kind of it provides (the class only names them: it is checked for, not built)
    error: str | None  # the first run's error that has one (CaseRecord.error)
    text: Callable[[], str]  # the runs' text, comma-separated, as the results file holds it


def _scored(value: Any) -> Any:
    # a file's status COMPLETED is a case that ran and was never scored: no verdict
    return None if value == Status.COMPLETED else value


@dataclass(slots=True)
class CaseRecord:
    __pydantic_config__ = RECORD
    DERIVED: ClassVar[dict[str, str]] = {"status": "status", "error": "error"}

    eval_id: Text
    file: Text = ""  # in a file, the set's file when the case does not name one
    line: Count | None = None
    # once scored, possibly a TextRuns: read it, do not change it
    runs: Annotated[Items[RunRecord], APART] = field(default_factory=list)  # spliced in
    skipped: Text | None = None  # why the case was not run (e.g. needs a user simulator)
    extensions: Data = field(default_factory=dict)  # dialect data, for metrics
    rubrics: list[dict[str, Any]] | None = None
    metrics: Items[CaseMetric] = field(default_factory=list)  # per metric, once scored
    # PASSED, FAILED, ERROR, NOT_EVALUATED, SKIPPED once scored
    # read from the file's "status"; written as the derived status, which falls back on it
    scored_status: Annotated[
        Status | None, Field(alias="status"), BeforeValidator(_scored), APART
    ] = None
    flaky: Flag = False
    # ADK conversation_scenario (starting_prompt, conversation_plan, user_persona): the user's
    # turns are simulated; metrics that need an expected conversation do not apply
    scenario: Annotated[dict[str, Any] | None, Field(alias="conversation_scenario")] = None
    # --select changed: not re-run, main's latest result carried (its reason in ``skipped``)
    carried: Flag = False
    # an ADK case's status as ADK gives it, where it is not ``status``: ADK skips a metric that
    # was not evaluated, so it passes a case the gate leaves NOT_EVALUATED
    # (``score.adk_status``); omitted when None
    adk_status: Annotated[Status | None, Field(exclude_if=lambda v: v is None)] = None

    @property
    def status(self) -> Status:
        """The scored status; before scoring COMPLETED, ERROR or SKIPPED."""
        if self.scored_status is not None:
            return self.scored_status
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
        :class:`InvocationRecord`), a fraction of the memory of the objects; reports and
        the results file read them as before. Returns self."""
        if isinstance(self.runs, TextRuns):
            return self  # text already
        for run in self.runs:
            for invocation in run.invocations:
                invocation.compact()
        return self


@dataclass(slots=True)
class SetRecord:
    __pydantic_config__ = RECORD

    eval_set_id: Text
    file: Text
    dialect: Text
    metrics: MetricConfig
    # written and read case by case
    cases: Annotated[Items[CaseRecord], APART] = field(default_factory=list)
    applied_metrics: Items[MetricSpec] = field(default_factory=list)  # once scored


@dataclass
class RunResults:
    __pydantic_config__ = RECORD
    DERIVED: ClassVar[dict[str, str]] = {"totals": "totals"}

    sets: Annotated[Items[SetRecord], APART]  # written and read set by set
    agent: Text = ""
    started: Timestamp = ""
    duration_s: Annotated[RunSeconds, BeforeValidator(lambda v: 0.0 if v is None else v)] = 0.0
    settings: Annotated[RunFacts, BeforeValidator(lambda v: {} if v is None else v)] = field(
        default_factory=RunFacts
    )
    interrupted: Flag = False
    # when a baseline was compared; written apart, with its derived values
    comparison: Annotated[Comparison | None, APART] = None
    fail_on: Annotated[
        tuple[FailOn, ...], BeforeValidator(lambda v: ("failure", "error") if v is None else v)
    ] = ("failure", "error")
    # this run's own id, unique (empty in a file written before it had one): ``started`` is to
    # the second, and two quick runs can share it and their duration
    run_id: Text = ""
    # each set's pass rates with their intervals, as the reports show them
    # (ci_eval.gate.set_lines.pass_rates): for the file's readers, worked out when it is written
    pass_rates: Items[Data] = field(default_factory=list)

    def cases(self) -> list[tuple[SetRecord, CaseRecord]]:
        return [(s, c) for s in self.sets for c in s.cases]

    def counts(self) -> Counter[Status]:
        """How many cases have each status, in one pass (on a large run each pass costs)."""
        return Counter(c.status for s in self.sets for c in s.cases)

    def count(self, status: Status) -> int:
        return self.counts()[status]

    @property
    def totals(self) -> dict[str, int]:
        """Each case status's number of cases, all cases, and the flaky ones."""
        from ci_eval.model.status import CASE_STATUSES

        counted = self.counts()
        flaky = sum(1 for s in self.sets for c in s.cases if c.flaky)
        return {status.lower(): counted[status] for status in CASE_STATUSES} | {
            "cases": counted.total(),
            "flaky": flaky,
        }
