"""A run's comparison with the baseline, as data: each metric's change, each case's judgement,
the suite-wide drop. ``ci_eval.gate.compare`` computes it; reports render it; the results file
carries it, with these dataclasses as its schema (see :mod:`ci_eval.model.results`)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, ClassVar

from pydantic import BeforeValidator, Field

from ci_eval.model.gate_words import DEFAULT_MIN_HISTORY, DEFAULT_SIGNIFICANCE
from ci_eval.model.values import RECORD, Count, Flag, Items, Number, Text, Timestamp
from ci_eval.text.plural import plural

# [eval set id, case id]
CaseKey = tuple[Text, Text]


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def runs_label(n: int) -> str:
    """ "3 runs", "1 run"."""
    return plural(n, "run")


class Basis(StrEnum):
    """What a case was judged by: the branch the gate took (its ``method`` says it in words)."""

    HISTORY = "history"  # main's history, by the per-case test
    SHORT = "short history"  # too little history: only a confirmed break blocks
    NEW = "new case"  # no history: by its thresholds, confirmed by reruns
    OTHER = "other"  # an earlier ci-eval's rule (a results file it wrote)

    @classmethod
    def of(cls, method: str) -> Basis:
        """An earlier results file's, which said it only in words."""
        if method.startswith("history"):
            return cls.HISTORY
        if method.startswith(("short history", "judged by the simple")):
            return cls.SHORT
        return cls.NEW if method.startswith("new case") else cls.OTHER


class Judgement(StrEnum):
    REGRESSION = "regression"  # blocks
    ACCEPTED = "accepted"  # a regression the PR accepts in .ci-eval/accept.toml
    KNOWN_FAILURE = "known failure"  # fails on main too
    NOT_SIGNIFICANT = "not significant"  # failed now, within the case's usual noise
    TOLERATED = "tolerated"  # a regression whose scores fell no more than --tolerance
    IMPROVED = "improved"
    UNCHANGED = "unchanged"


@dataclass(slots=True)
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


class ChangeKind(StrEnum):
    """What a pull request changed of how a case is judged."""

    THRESHOLD = "threshold"  # a gating metric's threshold, or a metric no longer applied
    CRITERION = "criterion"  # a metric's options (match type, ignore_args, judge, rubrics…)
    EXPECTED = "expected"  # a case's expected conversation (its fingerprint)
    CODE = "code"  # a custom metric's code


@dataclass(slots=True)
class JudgingChange:
    """One change this run makes to how cases are judged, against what main's history
    recorded: applied (the eval sets carry them), said in the verdict, and with
    ``--fail-on judging-changed`` blocking until an ``[[accept]]`` entry accepts it."""

    __pydantic_config__ = RECORD

    kind: ChangeKind
    set_id: Text = "*"  # "*": every set (a custom metric's code)
    case_id: Text = "*"  # "*": every case of the set
    metric: Text = ""
    where: Text = ""  # the file that says it
    before: Text = ""
    after: Text = ""
    cases: Count = 0  # the cases it applies to, when counted
    accepted: Text | None = None  # the [[accept]] entry's reason

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}"

    def text(self) -> str:
        """One line: ``threshold: weather_basic (samples/evals/test_config.json):
        response_match_score 0.8 → 0 (3 cases)``."""
        if self.kind is ChangeKind.CODE:
            return (
                f"custom metric {self.metric}: its code ({self.where}) changed by this pull "
                "request, and scored this run"
            )
        place = self.set_id if self.case_id == "*" else self.key
        head = f"{self.kind.value}: {place}" + (f" ({self.where})" if self.where else "")
        return f"{head}: {self.what()}"

    def what(self) -> str:
        """What changed, before → after, without where: ``response_match_score 0.8 → 0``."""
        if self.kind is ChangeKind.CODE:
            return f"custom metric {self.metric}'s code ({self.where}), run this time"
        what = f"{self.metric} " if self.metric else ""
        tail = f" ({plural(self.cases, 'case')})" if self.cases else ""
        return f"{what}{self.before} → {self.after}{tail}"


@dataclass(slots=True)
class MetricChange:
    """One case × metric: its mean on main and now, and its pass/fail history."""

    __pydantic_config__ = RECORD

    set_id: Annotated[Text, Field(alias="eval_set_id")]
    case_id: Annotated[Text, Field(alias="eval_id")]
    metric: Text
    before: Number | None = None
    after: Number | None = None
    regressed: Flag = False
    improved: Flag = False
    method: Text | None = None
    p_value: Number | None = None
    history_passed: Count | None = None
    history_runs: Count | None = None
    failed_now: Count | None = None
    runs_now: Count | None = None

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


@dataclass(slots=True)
class CaseJudgement:
    """One case against its history: what the gate makes of it and why."""

    __pydantic_config__ = RECORD

    set_id: Text
    case_id: Text
    judgement: Judgement
    history_runs: Count
    history_failed: Count
    runs_now: Count
    failed_now: Count
    method: Text  # "history", "short history: …", "new case: …" (how it was judged, in words)
    p_value: Number | None = None
    adjusted: Number | None = None  # Benjamini–Hochberg
    metrics: Items[Text] = field(default_factory=list)  # the metrics that failed now
    failing_since: Text | None = None
    reason: Text | None = None  # the acceptance's reason
    basis: Basis | None = None  # what it was judged by; None: from ``method`` (older files)

    def __post_init__(self) -> None:
        if self.basis is None:
            self.basis = Basis.of(self.method)

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

    def not_blocking(self) -> str:
        """Why a failing case that is neither a regression nor a known failure does not block,
        in words true of its history: "usual noise" only where main has failed it too."""
        if self.history_runs == 0:
            return "a new case whose failures reruns did not confirm"
        if self.history_failed:
            return "within the case's usual noise"
        if self.failed_now < self.runs_now:
            return "flaky: it failed, then passed when run again (it never failed on main)"
        return "not enough history to judge (it never failed on main)"

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
        if self.judgement is Judgement.NOT_SIGNIFICANT:
            text += f" — {self.not_blocking()}"
        if self.judgement is Judgement.KNOWN_FAILURE and self.failing_since:
            text += f" — failing on main since {self.failing_since}"
        if self.reason:
            text += f" — accepted: {self.reason}"
        return text


@dataclass(slots=True)
class SuiteDrop:
    """The suite-level test: failed runs now against what the histories predict."""

    __pydantic_config__ = RECORD

    cases: Count
    runs: Count
    failed: Count
    expected: Number
    p_value: Number
    regressed: Flag = False
    accepted: Text | None = None
    # main's pushes swing together (a provider's bad days): the expectation allowed for them
    swings: Flag = False
    # judged against a same-day control instead: its failed runs and runs of these cases
    control_failed: Count | None = None
    control_runs: Count | None = None

    def caveat(self) -> str:
        """What else a drop could be, where main's history cannot tell (empty where it can)."""
        if self.swings or self.control_runs is not None:
            return ""
        return (
            "broad drop: the provider or this pull request — cannot tell without a control "
            "(main's history shows no such swings to compare with): run the merge base's agent "
            "in the same job with --control base (input control: base), or run the job again "
            "later"
        )

    def describe(self) -> str:
        if self.control_runs is not None:
            return (
                f"{plural(self.failed, 'failed run')} of {self.runs} over "
                f"{plural(self.cases, 'case')} where the "
                f"merge base's agent, run in this job, failed {self.control_failed} of "
                f"{self.control_runs} (p={self.p_value:.2g})"
            )
        allowing = ", allowing for its day-to-day swings" if self.swings else ""
        return (
            f"{plural(self.failed, 'failed run')} of {self.runs} over "
            f"{plural(self.cases, 'case')} where main's "
            f"history expects {self.expected:.1f}{allowing} (p={self.p_value:.2g})"
        )


@dataclass(slots=True)
class Power:
    """What this run could have detected, by the gate's own model (:mod:`ci_eval.gate.power`):
    a case that passes at least ``case_from`` of its runs on main falling to ``case_to``, named
    a regression with ``probability`` on average over those ``cases`` (``lowest`` the least
    of them); and the uniform drop of every case's pass rate, in points, the suite-wide test
    catches with ``suite_power`` (None: none up to ``SUITE_MAX`` points)."""

    __pydantic_config__ = RECORD
    SUITE_MAX: ClassVar[int] = 50

    case_from: Number
    case_to: Number
    cases: Count  # judged on their history, passing at least case_from on main
    probability: Number | None = None  # None: no such case
    lowest: Number | None = None
    suite_power: Number = 0.9
    suite_drop: Count | None = None  # points
    suite_cases: Count = 0
    reruns_expected: Number = 0.0  # confirmation reruns expected when nothing changed

    def sentence(self) -> str:
        """One line: ``could detect: a case passing ≥ 95 % on main falling to 60 %, caught
        with 91 % probability (12 cases, the least 84 %); the suite, a 10-point drop with
        90 %``."""
        parts = []
        if self.probability is not None:
            least = (
                f", the least {self.lowest:.0%}"
                if self.lowest is not None
                and round(100 * self.lowest) < round(100 * self.probability)
                else ""
            )
            parts.append(
                f"a case passing ≥ {self.case_from:.0%} on main that fell to "
                f"{self.case_to:.0%} would have been caught with {self.probability:.0%} "
                f"probability ({plural(self.cases, 'such case')}{least})"
            )
        else:
            parts.append(f"no case passes ≥ {self.case_from:.0%} on main with history to judge")
        if self.suite_cases:
            if self.suite_drop is None:
                parts.append(
                    f"the suite-wide test would catch no drop of up to {self.SUITE_MAX} points "
                    f"with {self.suite_power:.0%} probability"
                )
            else:
                parts.append(
                    f"the suite-wide test would catch a {self.suite_drop}-point drop of every "
                    f"case with {self.suite_power:.0%} probability"
                )
        return "what this run could detect: " + "; ".join(parts)


@dataclass(slots=True)
class UnreportedUsage:
    """A case whose runs on main reported tokens and whose runs now report none: its usage
    is not measured (a budget cannot be checked, a token regression cannot be seen)."""

    __pydantic_config__ = RECORD

    set_id: Text
    case_id: Text
    before: Number  # main's median tokens per run
    history_runs: Count

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}"


@dataclass(slots=True)
class UsageChange:
    """One case's tokens or latency per run against main's history of them
    (:mod:`ci_eval.gate.usage`): the medians, their ratio (latency's: after allowing for how much
    slower or faster this job's runner is than main's), the test's p-value and whether it is a
    regression (risen by the margin, and beyond the history's noise)."""

    __pydantic_config__ = RECORD

    set_id: Text
    case_id: Text
    kind: Text  # "tokens" or "latency"
    before: Number  # main's median per run
    after: Number  # this job's median per run
    ratio: Number  # after / before (latency: over the job's runner factor)
    p_value: Number
    history_runs: Count
    runs_now: Count
    adjusted: Number | None = None  # Benjamini–Hochberg over the cases
    regressed: Flag = False
    runner: Number | None = None  # latency: this job's runner against main's (1.5: 50% slower)

    @property
    def key(self) -> str:
        return f"{self.set_id}:{self.case_id}"

    def describe(self) -> str:
        unit = (lambda v: f"{v:,.0f} tokens") if self.kind == "tokens" else (lambda v: f"{v:.2f} s")
        text = f"{unit(self.before)} → {unit(self.after)} per run (×{self.ratio:.2f}"
        if self.runner is not None and abs(self.runner - 1) >= 0.005:
            text += f" after this runner's ×{self.runner:.2f}"
        return text + f"; {runs_label(self.history_runs)} on main, p={self.p_value:.2g})"


@dataclass
class Comparison:
    __pydantic_config__ = RECORD
    DERIVED: ClassVar[dict[str, str]] = {"regressions": "regressed_case_count"}

    baseline_commit: Text | None = None
    baseline_date: Timestamp | None = None
    changes: Items[MetricChange] = field(default_factory=list)
    new_cases: Items[CaseKey] = field(default_factory=list)
    removed_cases: Items[CaseKey] = field(default_factory=list)
    warnings: Items[Text] = field(default_factory=list)
    cases: Items[CaseJudgement] = field(default_factory=list)
    suite: SuiteDrop | None = None
    significance: Annotated[
        Number, BeforeValidator(lambda v: DEFAULT_SIGNIFICANCE if v is None else v)
    ] = DEFAULT_SIGNIFICANCE
    min_history: Annotated[
        Count, BeforeValidator(lambda v: DEFAULT_MIN_HISTORY if v is None else v)
    ] = DEFAULT_MIN_HISTORY
    baseline_source: Text | None = None  # where it was read: a file, or file at a ref
    # why no confirmation rerun was made: so many cases failed every run at once that it may be
    # an outage, or a break of them all; the gate will not pass what it could not confirm
    outage: Text | None = None
    # how much main's runs of a case in one job fail together (0: independent), and how much
    # its pushes swing together (1: no more than chance): see ci_eval.gate.noise
    rho: Number = 0.0
    dispersion: Number = 1.0
    # removed cases an [[accept]] entry of .ci-eval/accept.toml accepts (with its reason)
    removed_accepted: Items[Text] = field(default_factory=list)
    # what this pull request changed of its acceptances, one line each: applied, and said (the
    # verdict's applied_changes); what it changed of the bar is not applied (bar_changes)
    changed: Items[Text] = field(default_factory=list)
    # what this run changed of how cases are judged against what main's history recorded
    judging: Items[JudgingChange] = field(default_factory=list)
    # each case's tokens and latency per run against main's history (ci_eval.gate.usage)
    usage: Items[UsageChange] = field(default_factory=list)
    # the cases whose tokens main's history has and this run's agent did not report
    unreported: Items[UnreportedUsage] = field(default_factory=list)
    # what this run could have detected (ci_eval.gate.power); None: nothing judged on history
    power: Power | None = None

    @property
    def regressed_case_count(self) -> int:
        """Cases that regressed (the file says it for its readers)."""
        return len(self.regressed_cases())

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
        (a search per failing case through all the judged ones is quadratic); the first
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
        return [c for c in self.cases if c.basis is Basis.SHORT]
