"""Compare a run with the history on main: which cases got worse, judged against their own noise.

Per case, a run *fails* when any of its gating metrics (not informational, with a threshold) is
below today's threshold. The baseline holds each case's last runs on main, push by push
(``baseline.py``); :mod:`ci_eval.gate.history` reads a case's runs since it last changed state,
recent pushes weighted above old ones, and :mod:`ci_eval.gate.noise` measures how main's noise is
correlated (whole pushes swinging together, a job's runs of a case failing together). Then:

1. **Per case** (:mod:`ci_eval.gate.case_judgement`): the probability of at least the observed
   failures under the case's history — the beta-binomial posterior predictive (Jeffreys prior)
   of one job's runs, mixed over main's days. Passed 20 of 20, failed 3 of 3 now: p = 0.00018,
   news. Passed 12 of 20, failed 3 of 3 now: p = 0.08, the usual noise.
2. **Across cases**: Benjamini–Hochberg over the per-case p-values, so a 200-case suite does not
   fail because it has 200 chances to.
3. **Across the suite**: the failed runs, each weighted by how rare a failure is for its case,
   against their exact distribution over main's days (``stats.mixture_sum_tail``) — or, with a
   same-day control (:mod:`ci_eval.run.control`), against the control's runs case by case — which
   catches a broad drop no single case shows.

The two families share the significance level (Bonferroni: half each), so when nothing changed
the chance that the gate fails stays at or below ``significance``.

4. **Confirmed by reruns**: a case that failed every one of its runs now — at least
   ``confirm`` of them, confirmation reruns included (:mod:`ci_eval.gate.confirm`) — where it never
   failed on main is a regression whatever the length of its history, unless main's jobs show
   runs failing together (then its p-value decides). A case with fewer than ``min_history``
   runs on main is judged by that rule alone (one failed run never blocks), and a case with no
   history at all — new, and not a rename of a case that left (its fingerprint) — by its
   thresholds the same way. Pure logic: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ci_eval.gate import stats
from ci_eval.gate.case_judgement import (
    CONFIRM,
    JUDGED,
    RARELY,
    Judged,
    Pending,
    Rules,
    gating,
    judge_case,
    read_case,
    regressed,
)
from ci_eval.gate.history import case_metric_fails, run_fails
from ci_eval.gate.judging import accept, case_changes, criterion_changes, thresholds
from ci_eval.gate.noise import Noise, measure
from ci_eval.gate.power import Target, power
from ci_eval.gate.usage import unreported, usage_changes
from ci_eval.model.baseline import Baseline, Provenance, StoredCase, StoredSet
from ci_eval.model.comparison import (
    Acceptance,
    Basis,
    CaseJudgement,
    Comparison,
    Judgement,
    JudgingChange,
    SuiteDrop,
    runs_label,
)
from ci_eval.model.results import CaseRecord, RunResults
from ci_eval.model.status import Status
from ci_eval.settings.gate import DEFAULT_GATE, GateSettings

__all__ = ["CONFIRM", "RARELY", "Acceptance", "Judgement", "compare"]


@dataclass(slots=True)
class _Read:
    """The first pass over the run: the cases with history to judge, and what changed."""

    pending: list[Pending] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)  # main's cases this run has
    renamed: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    # (set, its metrics' file, metric, main's, now) → cases
    moved: dict[tuple[str, str, str, float, float | None], int] = field(default_factory=dict)
    judging: list[JudgingChange] = field(default_factory=list)


@dataclass(slots=True)
class _Family:
    """The cases judged on their history: the multiplicity family, and what the suite-wide
    test counts of each."""

    judged: list[Judged] = field(default_factory=list)
    improving: list[tuple[CaseJudgement, float]] = field(default_factory=list)

    def rest(self) -> list[Judged]:
        """The cases not already named: the suite-wide test's."""
        named = (Judgement.REGRESSION, Judgement.ACCEPTED)
        return [j for j in self.judged if j.judgement.judgement not in named]


def compare(
    results: RunResults,
    baseline: Baseline,
    settings: GateSettings = DEFAULT_GATE,
    accepted: list[Acceptance] | None = None,
    confirm: int = CONFIRM,
    control: RunResults | None = None,
    target: Target | None = None,
) -> Comparison:
    """``confirm``: the runs that confirm a break when all fail (fewer when the run could not
    make that many: its runs and reruns; :func:`ci_eval.gate.confirm.target` never gives fewer
    than 2, so one flip never blocks). ``target``: the drop the power statement asks about
    (None: no power worked out, as in the rerun rounds, which only need the judgements)."""
    from ci_eval.gate.baseline import gate_view

    baseline = gate_view(baseline)  # the window: the file keeps more, for the trend pages
    provenance = baseline.provenance or Provenance()
    comparison = Comparison(
        provenance.commit,
        provenance.date,
        significance=settings.significance,
        min_history=settings.min_history,
    )
    accepted = accepted or []
    read = _read(results, baseline, comparison, confirm, settings.min_history)
    noise = measure([p.history for p in read.pending])
    comparison.rho, comparison.dispersion = round(noise.rho, 4), round(noise.dispersion, 4)
    alpha = settings.significance / 2  # half for the per-case family, half for the suite's
    rules = Rules(
        tolerance=settings.tolerance,
        min_history=settings.min_history,
        confirm=confirm,
        first_runs=results.settings.num_runs or 0,  # not recorded: every run is a first run
        pushes=baseline.pushes,
        # did failing cases get confirmation reruns (their runs then count as the rule made)
        rerunning=bool(results.settings.confirm_runs) and not results.settings.outage,
        # a break confirmed where runs of a job fail together
        p_cut=alpha / max(1, len(read.pending)),
        no_run_left=frozenset(results.settings.no_run_left),
    )
    family = _judge_family(read, noise, comparison, rules)
    _regressions(family, noise, comparison, rules, alpha)
    _improvements(family, comparison, alpha)
    today = _control_fails(control) if control is not None else None
    if today is not None:
        _judge_by_control(comparison, today)
    else:
        _carried_breaks(family, noise, comparison, rules, alpha)
    _accept_regressions(comparison, accepted)
    comparison.suite = _suite(family, today, noise)
    if target is not None:
        comparison.power = power(family.judged, family.rest(), noise, rules, alpha, target)
    if comparison.suite is not None:
        comparison.suite.regressed = comparison.suite.p_value <= alpha
        broad = next((a for a in accepted if a.case == "*"), None)
        if comparison.suite.regressed and broad is not None:
            broad.used = True
            comparison.suite.accepted = broad.reason
    comparison.judging = thresholds(read.moved) + read.judging
    accept(comparison.judging, accepted)
    _finish(comparison, results, baseline, read, accepted, settings)
    return comparison


def _read(
    results: RunResults,
    baseline: Baseline,
    comparison: Comparison,
    confirm: int,
    min_history: int,
) -> _Read:
    """Each case against main's record of it: new ones judged by their thresholds, the
    changes to how cases are judged, and the cases with history to judge."""
    present = {(s.eval_set_id, c.eval_id) for s in results.sets for c in s.cases}
    read = _Read(renamed=_renames(results, baseline.sets, present))
    for s in results.sets:
        stored = baseline.sets.get(s.eval_set_id) or StoredSet()
        # recorded since the baseline kept criteria: a set's options, its cases' rubrics
        rubrics = stored.rubrics if stored.criteria is not None else None
        if stored.criteria is not None and any(c.metrics for c in s.cases):
            read.judging += criterion_changes(s, stored.criteria)
        for case in s.cases:
            base = _base_of(s.eval_set_id, case, stored, baseline, read)
            if base is None:
                comparison.new_cases.append((s.eval_set_id, case.eval_id))
                if case.status in JUDGED:
                    _judge_new(s.eval_set_id, case, comparison, confirm)
                continue
            if case.metrics:  # a case not scored (skipped, not re-run) changed nothing
                _thresholds(s.eval_set_id, s.metrics.source, case, base, read.moved)
                read.judging += case_changes(s, case, base, rubrics)
            if case.status not in JUDGED:
                continue  # ERROR, SKIPPED, NOT_EVALUATED: said elsewhere, not compared
            pending = read_case(s.eval_set_id, case, base, comparison, min_history)
            if pending is not None:
                read.pending.append(pending)
    return read


def _base_of(
    set_id: str, case: CaseRecord, stored: StoredSet, baseline: Baseline, read: _Read
) -> StoredCase | None:
    """Main's record of the case: under its id, or the one it was renamed from."""
    key = (set_id, case.eval_id)
    read.seen.add(key)
    base = stored.cases.get(case.eval_id)
    if base is None and key in read.renamed:
        was = read.renamed[key]
        read.seen.add(was)
        base = baseline.sets[was[0]].cases[was[1]]
    return base


def _judge_family(read: _Read, noise: Noise, comparison: Comparison, rules: Rules) -> _Family:
    family = _Family()
    for item in read.pending:
        judged = judge_case(item, noise, comparison, rules)
        judgement = judged.judgement
        key = (item.set_id, item.case.eval_id)
        if key in read.renamed:
            judgement.method += f" (renamed from {read.renamed[key][1]}: its history)"
        comparison.cases.append(judgement)
        if judgement.basis is Basis.HISTORY:
            family.judged.append(judged)
            judgement.p_value = judged.p_value
            if judged.improve_p is not None:
                family.improving.append((judgement, judged.improve_p))
    return family


def _regressions(
    family: _Family, noise: Noise, comparison: Comparison, rules: Rules, alpha: float
) -> None:
    """The family's regressions, Benjamini–Hochberg over its p-values; a break confirmed by
    reruns where main never failed blocks whatever BH makes of it (unless main's jobs show
    runs failing together, which one bad job would explain)."""
    judgements = [j.judgement for j in family.judged]
    adjusted_all = stats.benjamini_hochberg([j.p_value or 1.0 for j in judgements])
    for judgement, adjusted in zip(judgements, adjusted_all, strict=True):
        judgement.adjusted = adjusted
        # where main's jobs show runs failing together a break is confirmed only by a p-value
        # at most the bar α/n, which puts its BH-adjusted value at most α·m/n ≤ α (m ≤ n):
        # the family's test names it already, and only an independent main confirms alone
        confirmed = (
            not judgement.history_failed
            and judgement.failed_now == judgement.runs_now >= rules.confirm
            and noise.rho == 0
        )
        if judgement.failed_now and (adjusted <= alpha or confirmed):
            if adjusted > alpha:
                judgement.method += f"; failed all {runs_label(judgement.runs_now)}"
            regressed(judgement, comparison, rules.tolerance)


def _carried_breaks(
    family: _Family, noise: Noise, comparison: Comparison, rules: Rules, alpha: float
) -> None:
    """Confirmed breaks — every run failing, reruns included, where main never failed —
    that the family's test left unnamed because main's jobs show runs failing together,
    named when they carry a suite-wide drop: left out, the most surprising first (ties
    together), the rest is within main's noise. The gate fails on that drop either way;
    this says which cases it is, instead of a broad drop that may be the provider's. Where
    the rest still drops without them, the drop is broad, and none is named for it."""
    rest = family.rest()
    if not rest or _suite_p(rest, noise) > alpha:
        return
    breaks = sorted(
        (
            j
            for j in rest
            if not j.judgement.history_failed
            and j.judgement.failed_now == j.judgement.runs_now >= rules.confirm
        ),
        key=lambda j: j.p_value,
    )
    left = list(rest)
    for n, j in enumerate(breaks, start=1):
        left.remove(j)
        if n < len(breaks) and breaks[n].p_value == j.p_value:
            continue  # as surprising as the next: both or neither
        if _suite_p(left, noise) > alpha:
            for carrier in breaks[:n]:
                judgement = carrier.judgement
                judgement.method += (
                    f"; failed all {runs_label(judgement.runs_now)}, and carries the "
                    "suite-wide drop"
                )
                regressed(judgement, comparison, rules.tolerance)
            return


def _suite_p(rest: list[Judged], noise: Noise) -> float:
    failed = [j.first_failed[0] for j in rest]
    if not any(failed):
        return 1.0
    return stats.mixture_sum_tail(failed, [j.predictive for j in rest], noise.days)[0]


def _improvements(family: _Family, comparison: Comparison, alpha: float) -> None:
    """The cases that improved, Benjamini–Hochberg over their own family; only an unchanged
    case can be (one still failing is what main knows)."""
    adjusted_all = stats.benjamini_hochberg([p for _, p in family.improving])
    for (judgement, _), adjusted in zip(family.improving, adjusted_all, strict=True):
        if adjusted <= alpha and judgement.judgement is Judgement.UNCHANGED:
            judgement.judgement = Judgement.IMPROVED
            for change in comparison.changes:
                if (change.set_id, change.case_id) == (judgement.set_id, judgement.case_id):
                    change.improved = (change.failed_now or 0) == 0


def _accept_regressions(comparison: Comparison, accepted: list[Acceptance]) -> None:
    for judgement in comparison.judged(Judgement.REGRESSION):
        for acceptance in accepted:
            if acceptance.matches(judgement.set_id, judgement.case_id, judgement.metrics):
                acceptance.used = True
                judgement.judgement = Judgement.ACCEPTED
                judgement.reason = acceptance.reason
                break


def _suite(
    family: _Family, today: dict[tuple[str, str], list[bool]] | None, noise: Noise
) -> SuiteDrop | None:
    """The suite-wide test over the cases not already named: a broad drop that no single case
    shows (when a case is named the gate fails anyway, so the level holds). Only each case's
    first runs count: confirmation reruns go to failing cases, which would bias the total."""
    rest = family.rest()
    if not rest:
        return None
    if today is not None:
        return _suite_against_control([(j.judgement, j.first_failed) for j in rest], today)
    failed = sum(j.first_failed[0] for j in rest)
    p_value, expected = stats.mixture_sum_tail(
        [j.first_failed[0] for j in rest], [j.predictive for j in rest], noise.days
    )
    return SuiteDrop(
        cases=len(rest),
        runs=sum(j.first_failed[1] for j in rest),
        failed=failed,
        expected=expected,
        p_value=p_value if failed else 1.0,
        swings=noise.swings,
    )


def _finish(
    comparison: Comparison,
    results: RunResults,
    baseline: Baseline,
    read: _Read,
    accepted: list[Acceptance],
    settings: GateSettings,
) -> None:
    """Removed cases, the entries that matched nothing, and tokens and latency per case
    against their history (:mod:`ci_eval.gate.usage`)."""
    # a selection ran: the cases it left out are not removed (a merged run checks them)
    if not results.settings.selected:
        _removed(comparison, baseline.sets, read.seen, accepted)
    for acceptance in accepted:
        if not acceptance.used:
            comparison.warnings.append(
                f"accept.toml: {acceptance.case} matched no regression: remove it once main's "
                "history has the new scores"
            )
    comparison.usage = usage_changes(results, baseline, settings.min_history, settings.significance)
    comparison.unreported = unreported(results, baseline)
    if results.settings.selected:
        comparison.warnings.append(
            "a case selection ran (--case or --shard): cases main has that it did not run are "
            "not counted as removed"
        )


def _removed(
    comparison: Comparison,
    base_sets: dict[str, StoredSet],
    seen: set[tuple[str, str]],
    accepted: list[Acceptance],
) -> None:
    """Main's cases this run does not have: removed, unless an ``[[accept]]`` entry names
    the case (the broad ``*`` accepts a suite-wide drop, never a removed case)."""
    for set_id, data in base_sets.items():
        for case_id in data.cases:
            if (set_id, case_id) in seen:
                continue
            entry = next(
                (a for a in accepted if a.case != "*" and a.matches(set_id, case_id, [])), None
            )
            if entry is None:
                comparison.removed_cases.append((set_id, case_id))
            else:
                entry.used = True
                comparison.removed_accepted.append(f"{set_id}:{case_id} ({entry.reason})")


def _thresholds(
    set_id: str, source: str, case: CaseRecord, base: StoredCase, moved: dict[Any, int]
) -> None:
    """Each gating metric whose threshold differs from the one main's history recorded, or
    that main gated on and this run no longer applies: the pull request may change them
    (thresholds travel with the eval sets), and the verdict says so."""
    now = {m.name: m for m in case.metrics}
    for name, entry in base.metrics.items():
        was = entry.threshold
        m = now.get(name)
        if was is None or (m is not None and (m.informational or m.threshold == was)):
            continue
        if m is not None and m.threshold is None:
            continue
        after = None if m is None else float(m.threshold)  # type: ignore[arg-type]
        key = (set_id, source, name, float(was), after)
        moved[key] = moved.get(key, 0) + 1


def _renames(
    results: RunResults, base_sets: dict[str, StoredSet], present: set[tuple[str, str]]
) -> dict[tuple[str, str], tuple[str, str]]:
    """New cases that are a case of the history under a new id: the same content (its
    fingerprint), the old id gone from this run; only where exactly one case matches."""
    from ci_eval.gate.baseline import fingerprint

    gone: dict[str, list[tuple[str, str]]] = {}
    for set_id, data in base_sets.items():
        for case_id, entry in data.cases.items():
            if (set_id, case_id) not in present and entry.fingerprint:
                gone.setdefault(entry.fingerprint, []).append((set_id, case_id))
    if not gone:
        return {}
    found = {}
    for s in results.sets:
        known = (base_sets.get(s.eval_set_id) or StoredSet()).cases
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
    metrics = gating(case)
    fails = [f for f in run_fails([case_metric_fails(m) for m in metrics]) if f is not None]
    if not fails or not any(fails):
        return
    n_runs, n_failed = len(fails), sum(fails)
    judgement = CaseJudgement(
        set_id, case.eval_id, Judgement.NOT_SIGNIFICANT, 0, 0, n_runs, n_failed,
        f"new case: no history on main; failed {n_failed} of {runs_label(n_runs)}",
        metrics=[m.name for m in metrics if m.status == Status.FAILED],
    )  # fmt: skip
    if all(fails) and n_runs >= confirm:
        judgement.method = f"new case: failed its thresholds in all {runs_label(n_runs)}"
        judgement.judgement = Judgement.REGRESSION
    comparison.cases.append(judgement)


def _control_fails(control: RunResults) -> dict[tuple[str, str], list[bool]]:
    """Each case's runs in the control: did it fail (any gating metric below its threshold)?"""
    out = {}
    for s in control.sets:
        for case in s.cases:
            if case.status not in JUDGED:
                continue
            fails = run_fails([case_metric_fails(m) for m in gating(case)])
            out[(s.eval_set_id, case.eval_id)] = [f for f in fails if f is not None]
    return out


def _judge_by_control(comparison: Comparison, today: dict[tuple[str, str], list[bool]]) -> None:
    """A regression the merge base's agent shows too, today, in at least half its runs, is not
    the PR's doing: main fails it today (a known failure, said so)."""
    for judgement in comparison.judged(Judgement.REGRESSION):
        runs = today.get((judgement.set_id, judgement.case_id)) or []
        if runs and 2 * sum(runs) >= len(runs):
            judgement.judgement = Judgement.KNOWN_FAILURE
            judgement.method += (
                f"; the merge base fails it too today (same-day control: failed {sum(runs)} "
                f"of {runs_label(len(runs))})"
            )
            for change in comparison.changes:
                if (change.set_id, change.case_id) == (judgement.set_id, judgement.case_id):
                    change.regressed = False


def _suite_against_control(
    rest: list[tuple[CaseJudgement, tuple[int, int, int, int]]],
    today: dict[tuple[str, str], list[bool]],
) -> SuiteDrop:
    """The suite-wide test against the same-day control: per case, given how many of its runs
    failed in the PR and the control together, which runs are the PR's is chance when the PR
    changed nothing (hypergeometric); the PR's failures summed over the cases, exactly. A
    provider's bad day moves both sides and cancels out. Only the PR's first runs count."""
    dists, failed, runs, control_failed, control_runs = [], 0, 0, 0, 0
    for judgement, (_, _, mine, n) in rest:
        theirs = today.get((judgement.set_id, judgement.case_id))
        if not theirs:
            continue
        dists.append(stats.hypergeom_dist(n + len(theirs), mine + sum(theirs), n))
        failed += mine
        runs += n
        control_failed += sum(theirs)
        control_runs += len(theirs)
    pmf = stats.convolve(dists) if dists else [1.0]
    return SuiteDrop(
        cases=len(dists),
        runs=runs,
        failed=failed,
        expected=stats.mean_of(pmf),
        p_value=stats.upper_tail(pmf, failed) if failed else 1.0,
        control_failed=control_failed,
        control_runs=control_runs,
    )
