"""Compare a run with the history on main: which cases got worse, judged against their own noise.

Per case, a run *fails* when any of its gating metrics (not informational, with a threshold) is
below today's threshold. The baseline holds each case's last runs on main (``baseline.py``), so
every case has its own pass rate, and the question for a pull request is "how surprising are
this PR's failures for *this* case?":

1. **Per case**: the probability of at least the observed failures under the case's history —
   the beta-binomial posterior predictive with a Jeffreys prior over the history's pass/fail
   counts (``stats.surprise``). Passed 20 of 20, failed 3 of 3 now: p = 0.00018, news. Passed
   12 of 20, failed 3 of 3 now: p = 0.08, the usual noise.
2. **Across cases**: Benjamini–Hochberg over the per-case p-values, so a 200-case suite does not
   fail because it has 200 chances to.
3. **Across the suite**: the total of failed runs against the exact distribution of that total
   (the convolution of every case's predictive), which catches a broad drop no single case shows.

The two families share the significance level (Bonferroni: half each), so when nothing changed
the chance that the gate fails stays at or below ``significance``.

4. **Confirmed by reruns**: a case that failed every one of its runs now — at least
   ``confirm`` of them, confirmation reruns included (:mod:`ci_eval.confirm`) — where it never
   failed on main is a regression whatever the length of its history. A flaky case fails five
   runs in a row rarely; a broken one always does. A case with fewer than ``min_history`` runs
   on main is judged by that rule alone (one failed run never blocks), and a case with no
   history at all — new, and not a rename of a case that left (its fingerprint) — by its
   thresholds the same way. Pure logic: no I/O.
"""

from __future__ import annotations

from typing import Any

from ci_eval import stats
from ci_eval.model.comparison import (
    DEFAULT_MIN_HISTORY,
    Acceptance,
    CaseJudgement,
    Comparison,
    Judgement,
    MetricChange,
    SuiteDrop,
    runs_label,
)
from ci_eval.model.results import CaseMetric, CaseRecord, RunResults
from ci_eval.model.status import Status

CONFIRM = 5  # runs, all failing, that confirm a break (reruns included)

JUDGED = (Status.PASSED, Status.FAILED)


def _gating(case: CaseRecord) -> list[CaseMetric]:
    return [
        m
        for m in case.metrics
        if not m.informational and m.threshold is not None and m.status in JUDGED
    ]


def _run_fails(per_metric: list[tuple[list[float | None], float]]) -> list[bool]:
    """Per run (aligned from the latest), did any metric miss its threshold? Runs that no metric
    scored are left out."""
    length = max((len(scores) for scores, _ in per_metric), default=0)
    out = []
    for back in range(length, 0, -1):
        verdicts = [
            scores[-back] < threshold
            for scores, threshold in per_metric
            if len(scores) >= back and scores[-back] is not None
        ]
        if verdicts:
            out.append(any(verdicts))
    return out


def failed_every_run(case: CaseRecord) -> bool:
    """Did each of the case's scored runs miss a gating threshold (and was one scored)?"""
    fails = _run_fails([(list(m.runs), m.threshold) for m in _gating(case)])  # type: ignore[misc]
    return bool(fails) and all(fails)


def _mean(values: list[float | None]) -> float | None:
    scored = [v for v in values if v is not None]
    return sum(scored) / len(scored) if scored else None


def compare(
    results: RunResults,
    baseline: dict[str, Any],
    tolerance: float = 0.0,
    significance: float = 0.05,
    min_history: int = DEFAULT_MIN_HISTORY,
    accepted: list[Acceptance] | None = None,
    confirm: int = CONFIRM,
) -> Comparison:
    """``confirm``: the runs that confirm a break when all fail (fewer when the run could not
    make that many: its runs and reruns; never fewer than 2, so one flip never blocks)."""
    confirm = max(2, confirm)
    provenance = baseline.get("provenance") or {}
    comparison = Comparison(
        provenance.get("commit"),
        provenance.get("date"),
        significance=significance,
        min_history=min_history,
    )
    accepted = accepted or []
    base_sets = baseline.get("sets") or {}
    seen: set[tuple[str, str]] = set()
    family: list[CaseJudgement] = []  # judged on history: the multiplicity family
    predictive: list[list[float]] = []
    improving: list[tuple[CaseJudgement, float]] = []
    present = {(s.eval_set_id, c.eval_id) for s in results.sets for c in s.cases}
    renamed = _renames(results, base_sets, present)
    for s in results.sets:
        base_cases = (base_sets.get(s.eval_set_id) or {}).get("cases") or {}
        for case in s.cases:
            key = (s.eval_set_id, case.eval_id)
            seen.add(key)
            base = base_cases.get(case.eval_id)
            if base is None and key in renamed:
                was = renamed[key]
                seen.add(was)
                base = base_sets[was[0]]["cases"][was[1]]
            if base is None:
                comparison.new_cases.append(key)
                if case.status in JUDGED:
                    _judge_new(s.eval_set_id, case, comparison, confirm)
                continue
            if case.status not in JUDGED:
                continue  # ERROR, SKIPPED, NOT_EVALUATED: said elsewhere, not compared
            judged = _judge_case(
                s.eval_set_id, case, base, comparison, tolerance, min_history, confirm
            )
            if judged is None:
                continue
            judgement, history_p, improve_p, dist = judged
            if key in renamed:
                judgement.method += f" (renamed from {renamed[key][1]}: its history)"
            comparison.cases.append(judgement)
            if judgement.method.startswith("history"):
                family.append(judgement)
                judgement.p_value = history_p
                predictive.append(dist)
                if improve_p is not None:
                    improving.append((judgement, improve_p))
    alpha = significance / 2  # half for the per-case family, half for the suite-level test
    for judgement, adjusted in zip(
        family, stats.benjamini_hochberg([j.p_value or 1.0 for j in family]), strict=True
    ):
        judgement.adjusted = adjusted
        # a break confirmed by reruns where main never failed blocks whatever BH makes of it
        confirmed = judgement.history_failed == 0 and (
            judgement.failed_now == judgement.runs_now >= confirm
        )
        if judgement.failed_now and (adjusted <= alpha or confirmed):
            if adjusted > alpha:
                judgement.method = f"history; failed all {runs_label(judgement.runs_now)}"
            _regressed(judgement, comparison, tolerance)
    for judgement, adjusted in zip(
        [j for j, _ in improving],
        stats.benjamini_hochberg([p for _, p in improving]),
        strict=True,
    ):
        if adjusted <= alpha and judgement.judgement is Judgement.UNCHANGED:
            judgement.judgement = Judgement.IMPROVED
            for change in comparison.changes:
                if (change.set_id, change.case_id) == (judgement.set_id, judgement.case_id):
                    change.improved = (change.failed_now or 0) == 0
    for judgement in comparison.cases:
        if judgement.judgement is not Judgement.REGRESSION:
            continue
        for acceptance in accepted:
            if acceptance.matches(judgement.set_id, judgement.case_id, judgement.metrics):
                acceptance.used = True
                judgement.judgement = Judgement.ACCEPTED
                judgement.reason = acceptance.reason
                break
    # the suite-wide test over the cases not already named: a broad drop that no single case
    # shows (when a case is named the gate fails anyway, so the level holds)
    rest = [
        (j, d)
        for j, d in zip(family, predictive, strict=True)
        if j.judgement not in (Judgement.REGRESSION, Judgement.ACCEPTED)
    ]
    if rest:
        failed = sum(j.failed_now for j, _ in rest)
        pmf = stats.convolve([d for _, d in rest])
        comparison.suite = SuiteDrop(
            cases=len(rest),
            runs=sum(j.runs_now for j, _ in rest),
            failed=failed,
            expected=stats.mean_of(pmf),
            p_value=stats.upper_tail(pmf, failed) if failed else 1.0,
        )
        comparison.suite.regressed = comparison.suite.p_value <= alpha
        if comparison.suite.regressed:
            broad = next((a for a in accepted if a.case == "*"), None)
            if broad is not None:
                broad.used = True
                comparison.suite.accepted = broad.reason
    for acceptance in accepted:
        if not acceptance.used:
            comparison.warnings.append(
                f"accept.toml: {acceptance.case} matched no regression: remove it once main's "
                "history has the new scores"
            )
    for set_id, data in base_sets.items():
        for case_id in data.get("cases") or {}:
            if (set_id, case_id) not in seen:
                comparison.removed_cases.append((set_id, case_id))
    return comparison


def _regressed(judgement: CaseJudgement, comparison: Comparison, tolerance: float) -> None:
    rows = [
        c
        for c in comparison.changes
        if (c.set_id, c.case_id) == (judgement.set_id, judgement.case_id)
        and c.metric in judgement.metrics
    ]
    drops = [(c.before or 0.0) - (c.after or 0.0) for c in rows]
    if tolerance and drops and max(drops) <= tolerance:
        judgement.judgement = Judgement.NOT_SIGNIFICANT
        judgement.method = f"{judgement.method}; the drop is within --tolerance {tolerance:g}"
        return
    judgement.judgement = Judgement.REGRESSION
    for change in rows:
        change.regressed = True


def _renames(
    results: RunResults, base_sets: dict[str, Any], present: set[tuple[str, str]]
) -> dict[tuple[str, str], tuple[str, str]]:
    """New cases that are a case of the history under a new id: the same content (its
    fingerprint), the old id gone from this run; only where exactly one case matches."""
    from ci_eval.baseline import fingerprint

    gone: dict[str, list[tuple[str, str]]] = {}
    for set_id, data in base_sets.items():
        for case_id, entry in (data.get("cases") or {}).items():
            if (set_id, case_id) not in present and entry.get("fingerprint"):
                gone.setdefault(entry["fingerprint"], []).append((set_id, case_id))
    if not gone:
        return {}
    found = {}
    for s in results.sets:
        known = (base_sets.get(s.eval_set_id) or {}).get("cases") or {}
        for case in s.cases:
            if case.eval_id in known:
                continue
            matches = gone.get(fingerprint(case) or "", [])
            if len(matches) == 1:
                found[(s.eval_set_id, case.eval_id)] = matches[0]
    return found


def _judge_new(set_id: str, case: CaseRecord, comparison: Comparison, confirm: int) -> None:
    """A case with no history: by its thresholds, confirmed by reruns. It blocks, named, when
    it failed every one of at least ``confirm`` runs; else a failure is said, not blocking."""
    gating = _gating(case)
    fails = _run_fails([(list(m.runs), m.threshold) for m in gating])
    if not fails or not any(fails):
        return
    n_runs, n_failed = len(fails), sum(fails)
    judgement = CaseJudgement(
        set_id, case.eval_id, Judgement.NOT_SIGNIFICANT, 0, 0, n_runs, n_failed,
        f"new case: no history on main; failed {n_failed} of {runs_label(n_runs)}",
        metrics=[m.name for m in gating if m.status == Status.FAILED],
    )  # fmt: skip
    if n_failed == n_runs >= confirm:
        judgement.method = f"new case: failed its thresholds in all {runs_label(n_runs)}"
        judgement.judgement = Judgement.REGRESSION
    comparison.cases.append(judgement)


def _judge_case(
    set_id: str,
    case: CaseRecord,
    base: dict[str, Any],
    comparison: Comparison,
    tolerance: float,
    min_history: int,
    confirm: int = CONFIRM,
) -> tuple[CaseJudgement, float, float | None, list[float]] | None:
    gating = _gating(case)
    if not gating:
        return None
    stored = base.get("metrics") or {}
    history_per_metric = []
    now_per_metric = []
    failing_now: list[str] = []
    for m in gating:
        history = list((stored.get(m.name) or {}).get("scores") or [])
        now = list(m.runs)
        history_per_metric.append((history, m.threshold))
        now_per_metric.append((now, m.threshold))
        h_scored = [v for v in history if v is not None]
        n_scored = [v for v in now if v is not None]
        failed = sum(1 for v in n_scored if v < m.threshold)
        if failed or m.status == Status.FAILED:
            failing_now.append(m.name)
        h_passed = sum(1 for v in h_scored if v >= m.threshold)
        change = MetricChange(
            set_id,
            case.eval_id,
            m.name,
            _mean(history),
            m.score,
            method="history" if h_scored else None,
            history_passed=h_passed if h_scored else None,
            history_runs=len(h_scored) if h_scored else None,
            failed_now=failed,
            runs_now=len(n_scored),
        )
        if h_scored and len(h_scored) >= min_history and failed:
            change.p_value = stats.surprise(
                len(h_scored) - h_passed, h_passed, failed, len(n_scored)
            )
        comparison.changes.append(change)
    history_fails = _run_fails(history_per_metric)
    now_fails = _run_fails(now_per_metric)
    if not history_fails or not now_fails:
        comparison.new_cases.append((set_id, case.eval_id))  # nothing on main to judge by
        return None
    h_runs, h_failed = len(history_fails), sum(history_fails)
    n_runs, n_failed = len(now_fails), sum(now_fails)
    judgement = CaseJudgement(
        set_id,
        case.eval_id,
        Judgement.UNCHANGED,
        h_runs,
        h_failed,
        n_runs,
        n_failed,
        "history",
        metrics=failing_now,
        failing_since=base.get("failing_since"),
    )
    confirmed = h_failed == 0 and n_failed == n_runs >= confirm
    if h_runs < min_history:
        # too little history to know the case's noise: only a confirmed break blocks
        judgement.method = (
            f"short history: only {runs_label(h_runs)} on main "
            f"(the history test needs {min_history})"
        )
        if confirmed:
            judgement.p_value = None
            judgement.method += f"; failed all {runs_label(n_runs)}, reruns included"
            _regressed(judgement, comparison, tolerance)
        elif case.status == Status.FAILED:
            on_main = h_failed and 2 * h_failed >= h_runs
            judgement.judgement = Judgement.KNOWN_FAILURE if on_main else Judgement.NOT_SIGNIFICANT
        return judgement, 1.0, None, []
    p = stats.surprise(h_failed, h_runs - h_failed, n_failed, n_runs) if n_failed else 1.0
    improve = (
        stats.surprise(h_runs - h_failed, h_failed, n_runs - n_failed, n_runs)
        if n_failed < n_runs and h_failed
        else None
    )
    if case.status == Status.FAILED:
        # not (yet) a regression: a known failure if main fails it too, else noise
        recent = history_fails[-3:]
        on_main = h_failed * 2 >= h_runs or all(recent)
        judgement.judgement = Judgement.KNOWN_FAILURE if on_main else Judgement.NOT_SIGNIFICANT
    dist = stats.predictive_failures(h_failed, h_runs - h_failed, n_runs)
    return judgement, p, improve, dist
