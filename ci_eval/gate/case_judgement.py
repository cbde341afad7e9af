"""One case judged against its history on main (:mod:`ci_eval.gate.history`), given how main's
noise is correlated (:mod:`ci_eval.gate.noise`): its p-value, whether a break is confirmed, what it
contributes to the suite-wide test. :mod:`ci_eval.gate.compare` runs the family. Pure logic."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.gate import stats
from ci_eval.gate.history import (
    CaseHistory,
    case_metric_fails,
    clusters,
    run_fails,
    since_change,
    stored_fails,
)
from ci_eval.gate.noise import Noise
from ci_eval.model.baseline import Push, StoredCase, StoredMetric
from ci_eval.model.comparison import (
    Basis,
    CaseJudgement,
    Comparison,
    Judgement,
    MetricChange,
    runs_label,
)
from ci_eval.model.results import CaseMetric, CaseRecord
from ci_eval.model.status import Status

CONFIRM = 5  # runs, all failing, that confirm a break (reruns included)
RARELY = 0.2
# a break confirmed by fewer runs than CONFIRM (a recording held no more): the chance a case
# main passed every run fails all of them, at most this (Jeffreys' prior on its rate)
RECORDED_LEVEL = 0.01  # a history failing at most this share of runs: a failure now may be news
JUDGED = (Status.PASSED, Status.FAILED)


def gating(case: CaseRecord) -> list[CaseMetric]:
    return [
        m
        for m in case.metrics
        if not m.informational and m.threshold is not None and m.status in JUDGED
    ]


def mean_of(values: list[float | None]) -> float | None:
    scored = [v for v in values if v is not None]
    return sum(scored) / len(scored) if scored else None


def regressed(judgement: CaseJudgement, comparison: Comparison, tolerance: float) -> None:
    rows = [
        c
        for c in comparison.changes
        if (c.set_id, c.case_id) == (judgement.set_id, judgement.case_id)
        and c.metric in judgement.metrics
    ]
    drops = [(c.before or 0.0) - (c.after or 0.0) for c in rows]
    if tolerance and drops and max(drops) <= tolerance:
        # said as what it is: a regression the tolerance lets through, not noise
        judgement.judgement = Judgement.TOLERATED
        judgement.method = f"{judgement.method}; the drop is within the tolerance {tolerance:g}"
        return
    judgement.judgement = Judgement.REGRESSION
    for change in rows:
        change.regressed = True


@dataclass(slots=True)
class Pending:
    """A case with history, between the first pass (its history read) and the judgement."""

    set_id: str
    case: CaseRecord
    base: StoredCase
    history: CaseHistory
    now: list[bool | None]
    failing_now: list[str]


def _metric_change(
    set_id: str,
    case_id: str,
    m: CaseMetric,
    entry: StoredMetric,
    was: list[bool | None],
    now: list[bool | None],
    min_history: int,
) -> MetricChange:
    """One metric of the case, main's runs against now's: means, passes, its p-value."""
    h_scored = [v for v in was if v is not None]
    n_scored = [v for v in now if v is not None]
    failed = sum(n_scored)
    h_passed = h_scored.count(False)
    change = MetricChange(
        set_id,
        case_id,
        m.name,
        mean_of(list(entry.scores)),
        m.score,
        method="history" if h_scored else None,
        history_passed=h_passed if h_scored else None,
        history_runs=len(h_scored) if h_scored else None,
        failed_now=failed,
        runs_now=len(n_scored),
    )
    if h_scored and len(h_scored) >= min_history and failed:
        change.p_value = stats.surprise(len(h_scored) - h_passed, h_passed, failed, len(n_scored))
    return change


def read_case(
    set_id: str, case: CaseRecord, base: StoredCase, comparison: Comparison, min_history: int
) -> Pending | None:
    """The case's per-metric changes (into ``comparison``) and its history as the gate reads
    it; None when it has nothing to judge by (no gating metric, no history)."""
    metrics = gating(case)
    if not metrics:
        return None
    history_per_metric = []
    now_per_metric = []
    failing_now: list[str] = []
    for m in metrics:
        entry = base.metrics.get(m.name) or StoredMetric()
        was = stored_fails(entry, m.threshold)  # type: ignore[arg-type]
        now = case_metric_fails(m)
        history_per_metric.append(was)
        now_per_metric.append(now)
        change = _metric_change(set_id, case.eval_id, m, entry, was, now, min_history)
        if change.failed_now or m.status == Status.FAILED:
            failing_now.append(m.name)
        comparison.changes.append(change)
    fails = run_fails(history_per_metric)
    history = since_change(clusters(fails, base.push))
    now = run_fails(now_per_metric)
    if not history.runs or not any(f is not None for f in now):
        comparison.new_cases.append((set_id, case.eval_id))  # nothing on main to judge by
        return None
    return Pending(set_id, case, base, history, now, failing_now)


def _commit_of(seq: int | None, pushes: list[Push]) -> str | None:
    for push in pushes:
        if push.seq == seq and push.commit:
            return push.commit[:12]
    return None


@dataclass(frozen=True, slots=True)
class Rules:
    """What every case of one comparison is judged by, besides its own history."""

    tolerance: float
    min_history: int
    confirm: int  # runs, all failing, that confirm a break
    first_runs: int  # the runs each case got before reruns (0: not recorded, all of them)
    pushes: list[Push]  # main's jobs, to name the commit a case changed at
    rerunning: bool  # failing cases got confirmation reruns, as the rule gives them
    p_cut: float  # a confirmed break's p-value cut where a job's runs fail together
    # "set:case" of the cases a replay had no recorded run left to rerun
    no_run_left: frozenset[str] = frozenset()

    def confirm_of(self, key: str, runs: int) -> int:
        """The failing runs that confirm this case's break: ``confirm``, or for a case whose
        recordings ran out the runs recorded — never fewer than 2, so one flip never blocks."""
        return max(2, min(self.confirm, runs)) if key in self.no_run_left else self.confirm


@dataclass(slots=True)
class Judged:
    """One case judged against its history, and what the suite-wide test counts of it."""

    judgement: CaseJudgement
    p_value: float  # 1.0 for a short history: the history test did not judge it
    improve_p: float | None  # where it may have improved (some run passes, main failed some)
    # its predictive for the suite-wide test: (first runs, the reruns a case failing all of
    # them gets, mean, concentration)
    predictive: tuple[int, int, float, float]
    # (failed, runs) the suite-wide test counts, then the failed of its first runs and those
    first_failed: tuple[int, int, int, int]
    # its own test's predictive of one job's runs (mean, concentration): the power's model
    model: tuple[float, float] = (0.0, 0.0)
    observed: float = 0.0  # its weighted history's share of failed runs (no prior)


def _since_change(judgement: CaseJudgement, history: CaseHistory, pushes: list[Push]) -> None:
    commit = _commit_of(history.since, pushes)
    state = "failing" if history.failed * 2 >= history.runs else "passing"
    since = commit or f"push {history.since}"
    judgement.method = f"history since it changed on main ({state} since {since})"


def _weighted(history: CaseHistory, rho: float) -> tuple[float, float]:
    """The history's failed and passed runs, each push weighted by its age and by how much
    its runs are one cluster (a job of m runs counts as 1 + (m − 1)ρ independent ones')."""
    failed_w = passed_w = 0.0
    for weight, c in zip(history.weights(), history.clusters, strict=True):
        worth = weight / (1 + (c.runs - 1) * rho)
        failed_w += worth * c.failed
        passed_w += worth * (c.runs - c.failed)
    return failed_w, passed_w


def _counted(now: list[bool], history: CaseHistory, rules: Rules) -> tuple[int, int, int, int]:
    """The runs the suite-wide test counts: the first ``first_runs``, and the confirmation
    reruns a case failing all of them gets by the rule (see stats.rerun_dist). Returns
    (first runs, reruns, failed counted, runs counted)."""
    n_runs = len(now)
    first = min(rules.first_runs, n_runs) if rules.first_runs else n_runs
    rarely = history.failed <= RARELY * history.runs
    reruns = max(0, rules.confirm - first) if rules.rerunning and rarely else 0
    counted, counted_runs = sum(now[:first]), first
    if reruns and all(now[:first]):
        extra = now[first:]
        if all(extra) and len(extra) < reruns:
            reruns = 0  # its reruns were cut short (a cancelled job): the first runs alone
        else:
            counted, counted_runs = counted + sum(extra), n_runs
    return first, reruns, counted, counted_runs


def _failed_now(judgement: CaseJudgement, history: CaseHistory, short: bool) -> None:
    """A failing case not (yet) a regression: a known failure if main fails it too (half its
    runs, or with a long history its last three pushes), else noise."""
    on_main = history.failed * 2 >= history.runs  # runs ≥ 1: a case without history is new
    if not short:
        on_main = on_main or all(c.failed == c.runs for c in history.clusters[-3:])
    judgement.judgement = Judgement.KNOWN_FAILURE if on_main else Judgement.NOT_SIGNIFICANT


def _short_history(
    judgement: CaseJudgement,
    pending: Pending,
    now: list[bool],
    p: float,
    noise: Noise,
    comparison: Comparison,
    rules: Rules,
) -> None:
    """Too little history to know the case's noise: only a confirmed break blocks (every run
    failing, at least ``confirm`` of them, where main never failed it; where a job's runs
    fail together, only below the bar)."""
    history = pending.history
    judgement.basis = Basis.SHORT
    judgement.method = (
        f"short history: only {runs_label(history.runs)} on main "
        f"(the history test needs {rules.min_history})"
    )
    key = f"{pending.set_id}:{pending.case.eval_id}"
    clean = history.failed == 0 and all(now) and len(now) >= rules.confirm_of(key, len(now))
    if clean and len(now) < rules.confirm:
        # out of recordings before the full count: the runs there are confirm the break only
        # as surprising against main's clean runs as RECORDED_LEVEL — 3 failing runs after 4
        # passing ones do, after 1 they do not (a case failing a third of its runs would)
        clean = stats.surprise(0, history.runs, len(now), len(now)) <= RECORDED_LEVEL
    if clean and (noise.rho == 0 or p <= rules.p_cut):
        judgement.p_value = None
        judgement.method += f"; failed all {runs_label(len(now))}, reruns included"
        regressed(judgement, comparison, rules.tolerance)
    elif pending.case.status == Status.FAILED:
        _failed_now(judgement, history, short=True)


def judge_case(pending: Pending, noise: Noise, comparison: Comparison, rules: Rules) -> Judged:
    """The case judged against its history: its p-value, its improvement p-value, and its
    predictive and failures for the suite-wide test."""
    history, case = pending.history, pending.case
    now = [f for f in pending.now if f is not None]
    h_runs, h_failed = history.runs, history.failed
    n_runs, n_failed = len(now), sum(now)
    judgement = CaseJudgement(
        pending.set_id,
        case.eval_id,
        Judgement.UNCHANGED,
        h_runs,
        h_failed,
        n_runs,
        n_failed,
        "history",
        metrics=pending.failing_now,
        failing_since=pending.base.failing_since,
    )
    if history.cut:
        _since_change(judgement, history, rules.pushes)
    failed_w, passed_w = _weighted(history, noise.rho)
    mean, concentration = stats.predictive(failed_w, passed_w, noise.rho)
    p = stats.mixture_tail(n_failed, n_runs, mean, concentration, noise.days) if n_failed else 1.0
    first, reruns, counted, counted_runs = _counted(now, history, rules)
    # the suite-wide test, where many cases' small rates add up: with the suite's own prior
    # where main shows no swings (where it does, a bad day is the likelier account)
    prior = noise.prior if not noise.swings else (stats.JEFFREYS, stats.JEFFREYS)
    predictive = (first, reruns, *stats.predictive(failed_w, passed_w, noise.rho, prior))
    first_failed = (counted, counted_runs, sum(now[:first]), first)
    model = (mean, concentration)
    observed = failed_w / (failed_w + passed_w) if failed_w + passed_w else 0.0
    if h_runs < rules.min_history:
        _short_history(judgement, pending, now, p, noise, comparison, rules)
        return Judged(judgement, 1.0, None, predictive, first_failed, model, observed)
    improve = (
        stats.surprise(h_runs - h_failed, h_failed, n_runs - n_failed, n_runs)
        if n_failed < n_runs and h_failed
        else None
    )
    if case.status == Status.FAILED:
        _failed_now(judgement, history, short=False)
    return Judged(judgement, p, improve, predictive, first_failed, model, observed)
