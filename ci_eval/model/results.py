"""What a run produced, as typed data: per eval set, case and run, the invocations, the
metrics' results, the verdicts and the comparison with the baseline. ``ci_eval.results`` reads
and writes it as the results file; the reporters render it. Pure data: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ci_eval.criteria import MetricConfig, MetricSpec
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


@dataclass
class InvocationRecord:
    expected: Invocation
    actual: Invocation | None = None
    duration_s: float | None = None
    retries: int = 0
    error: str | None = None


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


@dataclass
class CaseRecord:
    eval_id: str
    file: str
    line: int | None
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
        return next((r.error for r in self.runs if r.error), None)


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

    def count(self, status: Status) -> int:
        return sum(1 for _, c in self.cases() if c.status == status)
