"""A run's comparison with the baseline, as data: each metric's change, each case's judgement,
the suite-wide drop. ``ci_eval.compare`` computes it; reports render it; the results file
carries it."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from enum import StrEnum

DEFAULT_MIN_HISTORY = 5


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def runs_label(n: int) -> str:
    """ "3 runs", "1 run"."""
    return f"{n} run" + ("" if n == 1 else "s")


class Judgement(StrEnum):
    REGRESSION = "regression"  # blocks
    ACCEPTED = "accepted"  # a regression the PR accepts in .ci-eval/accept.toml
    KNOWN_FAILURE = "known failure"  # fails on main too
    NOT_SIGNIFICANT = "not significant"  # failed now, within the case's usual noise
    IMPROVED = "improved"
    UNCHANGED = "unchanged"


@dataclass
class Acceptance:
    """One ``[[accept]]`` entry: a case pattern (``SET:CASE``, fnmatch; ``*`` also accepts a
    suite-wide drop), optional metric names, and why."""

    case: str
    reason: str
    metrics: list[str] = field(default_factory=list)
    used: bool = False

    def matches(self, set_id: str, case_id: str, metrics: list[str]) -> bool:
        key = f"{set_id}:{case_id}"
        if not (fnmatch.fnmatchcase(key, self.case) or self.case == case_id):
            return False
        return not self.metrics or any(m in self.metrics for m in metrics)


@dataclass
class MetricChange:
    """One case × metric: its mean on main and now, and its pass/fail history."""

    set_id: str
    case_id: str
    metric: str
    before: float | None
    after: float | None
    regressed: bool = False
    improved: bool = False
    method: str | None = None
    p_value: float | None = None
    history_passed: int | None = None
    history_runs: int | None = None
    failed_now: int | None = None
    runs_now: int | None = None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    def history(self) -> str:
        if self.history_runs is None or self.runs_now is None:
            return ""
        return f"passed {self.history_passed} of {runs_label(self.history_runs)} on main, " + (
            f"failed {self.failed_now} of {self.runs_now} now"
            if self.failed_now
            else f"passed {self.runs_now - (self.failed_now or 0)} of {self.runs_now} now"
        )

    def describe(self) -> str:
        text = f"{self.metric} {_f(self.before)} → {_f(self.after)}"
        if self.history():
            text += f": {self.history()}"
        if self.p_value is not None:
            text += f" (p={self.p_value:.2g})"
        return text


@dataclass
class CaseJudgement:
    """One case against its history: what the gate makes of it and why."""

    set_id: str
    case_id: str
    judgement: Judgement
    history_runs: int
    history_failed: int
    runs_now: int
    failed_now: int
    method: str  # "history" or "simple rule (…)"
    p_value: float | None = None
    adjusted: float | None = None  # Benjamini–Hochberg
    metrics: list[str] = field(default_factory=list)  # the metrics that failed now
    failing_since: str | None = None
    reason: str | None = None  # the acceptance's reason

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}"

    def history(self) -> str:
        passed = self.history_runs - self.history_failed
        now = (
            f"failed {self.failed_now} of {self.runs_now} now"
            if self.failed_now
            else f"passed {self.runs_now} of {self.runs_now} now"
        )
        return f"passed {passed} of {runs_label(self.history_runs)} on main, {now}"

    def describe(self) -> str:
        text = f"{self.key}"
        if self.metrics:
            text += f" ({', '.join(self.metrics)})"
        text += f": {self.history()}"
        if self.p_value is not None and self.judgement is not Judgement.KNOWN_FAILURE:
            text += f", p={self.p_value:.2g}"
            if self.adjusted is not None and self.adjusted != self.p_value:
                text += f" ({self.adjusted:.2g} after Benjamini–Hochberg)"
        if self.method != "history":
            text += f" — {self.method}"
        if self.judgement is Judgement.KNOWN_FAILURE and self.failing_since:
            text += f" — failing on main since {self.failing_since}"
        if self.reason:
            text += f" — accepted: {self.reason}"
        return text


@dataclass
class SuiteDrop:
    """The suite-level test: failed runs now against what the histories predict."""

    cases: int
    runs: int
    failed: int
    expected: float
    p_value: float
    regressed: bool = False
    accepted: str | None = None

    def describe(self) -> str:
        return (
            f"{self.failed} failed runs of {self.runs} over {self.cases} cases where main's "
            f"history expects {self.expected:.1f} (p={self.p_value:.2g})"
        )


@dataclass
class Comparison:
    baseline_commit: str | None
    baseline_date: str | None
    changes: list[MetricChange] = field(default_factory=list)
    new_cases: list[tuple[str, str]] = field(default_factory=list)
    removed_cases: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cases: list[CaseJudgement] = field(default_factory=list)
    suite: SuiteDrop | None = None
    significance: float = 0.05
    min_history: int = DEFAULT_MIN_HISTORY
    baseline_source: str | None = None  # where it was read: a file, or file at a ref

    @property
    def regressions(self) -> list[MetricChange]:
        return [c for c in self.changes if c.regressed]

    @property
    def improvements(self) -> list[MetricChange]:
        return [c for c in self.changes if c.improved]

    def judged(self, kind: Judgement) -> list[CaseJudgement]:
        return [c for c in self.cases if c.judgement is kind]

    def regressed_cases(self) -> set[tuple[str, str]]:
        return {(c.set_id, c.case_id) for c in self.judged(Judgement.REGRESSION)}

    def known_failures(self) -> dict[tuple[str, str], CaseJudgement]:
        return {(c.set_id, c.case_id): c for c in self.judged(Judgement.KNOWN_FAILURE)}

    def by_case(self) -> dict[tuple[str, str], CaseJudgement]:
        """Each case's judgement by (set id, case id), looked up rather than searched for
        (thousands of failing cases times thousands of judged ones took seconds); the first
        one if a case is judged twice."""
        found: dict[tuple[str, str], CaseJudgement] = {}
        for c in self.cases:
            found.setdefault((c.set_id, c.case_id), c)
        return found

    @property
    def suite_regressed(self) -> bool:
        return self.suite is not None and self.suite.regressed and not self.suite.accepted

    @property
    def short_history(self) -> list[CaseJudgement]:
        return [c for c in self.cases if c.method != "history"]
