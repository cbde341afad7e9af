"""What the trend pages say, computed from the baseline: per push, each eval set's pass rate with
its 95 % interval (clustered by case, as every report draws it: :mod:`ci_eval.model.rates`),
its errors, tokens, cost and p95 run latency; per case, its runs and how often its outcome flips.
Pure: the baseline in, plain data out (the writer, :mod:`.site`, draws and writes it).

A run *passes* when no gating metric failed it, by the threshold each metric was last recorded
under (as the gate's history reads it: :func:`ci_eval.gate.history.stored_fails`); an errored or
unscored run neither passes nor fails. A *flip* is a scored run whose outcome differs from the
case's scored run before it; the *flake rate* is flips over the pairs of consecutive scored
runs (0 with fewer than two runs)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_eval.gate.history import run_fails, stored_fails
from ci_eval.model.baseline import Baseline, Push, StoredCase
from ci_eval.model.rates import Rate, case_rate, clustered_rate
from ci_eval.results.usage_totals import percentile


@dataclass(frozen=True, slots=True)
class Run:
    """One stored run of a case: its push, what it was, and what it spent."""

    seq: int
    passed: bool | None  # None: errored or not scored
    error: str | None
    latency_s: float | None
    tokens: int | float | None
    scores: dict[str, float | None]


@dataclass(frozen=True, slots=True)
class PushPoint:
    """One push of a set (or of the suite, all sets pooled), as the pages show it."""

    seq: int
    commit: str | None
    date: str | None
    rate: Rate  # its scored runs' pass rate and 95 % interval
    errors: int
    tokens: int | float | None  # the runs' total tokens; None: none reported
    p95_latency_s: float | None  # over the runs' wall times; None: none measured
    cost_usd: float | None = None  # the job's (the suite's points only)


@dataclass(frozen=True, slots=True)
class CaseFlips:
    """How a case's outcome moved over its stored runs: the quarantine candidates first."""

    set_id: str
    case_id: str
    flips: int
    runs: int  # scored runs
    failed: int
    flake_rate: float
    last_failure: int | None  # the seq of the push of its latest failing run
    last_failure_commit: str | None
    since: str | None  # the commit since which it fails (or passes), as the baseline says it
    failing: bool | None  # its latest scored run failed; None: none scored


@dataclass(frozen=True, slots=True)
class CaseHistory:
    """A case's page: its runs, and each push's pass rate (Wilson) of its runs."""

    set_id: str
    case_id: str
    runs: list[Run]
    points: list[PushPoint]
    flips: CaseFlips
    metrics: list[str]


@dataclass(frozen=True, slots=True)
class SetTrend:
    set_id: str
    file: str | None
    points: list[PushPoint]
    cases: list[str]


@dataclass(frozen=True, slots=True)
class Suite:
    """The suite page: each set's trend, the suite's per-push totals, the flipping cases."""

    pushes: list[Push]
    sets: list[SetTrend]
    totals: list[PushPoint]
    flips: list[CaseFlips]
    cases: list[CaseHistory] = field(default_factory=list)


def _outcomes(case: StoredCase) -> list[bool | None]:
    """Per run, did it pass (None: errored or not scored)."""
    per_metric = [
        stored_fails(m, m.threshold) for m in case.metrics.values() if m.threshold is not None
    ]
    fails = run_fails(per_metric)
    length = len(case.push)
    fails = [None] * (length - len(fails)) + fails[-length:] if length else fails
    return [None if f is None else not f for f in fails]


def _at(values: list[object] | None, i: int, length: int) -> object:
    """Entry ``i`` of a per-run list aligned from the latest (a shorter one holds no more)."""
    values = values or []
    j = i - (length - len(values))
    return values[j] if 0 <= j < len(values) else None


def case_runs(case: StoredCase) -> list[Run]:
    """The case's stored runs, oldest first."""
    length = len(case.push)
    passed = _outcomes(case)
    runs = []
    for i, seq in enumerate(case.push):
        error = _at(case.error, i, length)
        latency = _at(case.latency_s, i, length)
        tokens = _at(case.usage, i, length)
        scores = {name: _at(m.scores, i, length) for name, m in case.metrics.items()}
        runs.append(
            Run(seq, passed[i], error, latency, tokens, scores)  # type: ignore[arg-type]
        )
    return runs


def _point(push: Push, runs_by_case: Iterable[list[Run]], pooled: bool = True) -> PushPoint:
    per_case = []
    errors = 0
    tokens: list[int | float] = []
    latency: list[float] = []
    for runs in runs_by_case:
        scored = [r for r in runs if r.passed is not None]
        per_case.append((sum(1 for r in scored if r.passed), len(scored)))
        errors += sum(1 for r in runs if r.error is not None)
        tokens += [r.tokens for r in runs if r.tokens is not None]
        latency += [r.latency_s for r in runs if r.latency_s is not None]
    if pooled:
        rate = clustered_rate(per_case)
    else:
        rate = case_rate(sum(k for k, _ in per_case), sum(n for _, n in per_case))
    p95 = percentile(sorted(latency), 0.95)
    return PushPoint(
        push.seq,
        push.commit,
        push.date,
        rate,
        errors,
        sum(tokens) if tokens else None,
        None if p95 is None else round(p95, 4),
    )


def flips_of(set_id: str, case_id: str, case: StoredCase, pushes: dict[int, Push]) -> CaseFlips:
    """One case's flips over its stored runs (see the module)."""
    runs = case_runs(case)
    scored = [r for r in runs if r.passed is not None]
    flips = sum(1 for a, b in itertools.pairwise(scored) if a.passed != b.passed)
    failures = [r for r in scored if not r.passed]
    last = failures[-1].seq if failures else None
    failing = None if not scored else not scored[-1].passed
    since = case.failing_since if failing else case.passing_since
    return CaseFlips(
        set_id,
        case_id,
        flips,
        len(scored),
        len(failures),
        round(flips / (len(scored) - 1), 4) if len(scored) > 1 else 0.0,
        last,
        pushes[last].commit if last in pushes else None,
        since,
        failing,
    )


def flip_rates(baseline: Baseline) -> list[CaseFlips]:
    """Every case's flips, flakiest first (flake rate, then flips, then its ids): the cases a
    quarantine would consider."""
    pushes = {p.seq: p for p in baseline.pushes}
    found = [
        flips_of(set_id, case_id, case, pushes)
        for set_id, stored in baseline.sets.items()
        for case_id, case in stored.cases.items()
    ]
    return sorted(found, key=lambda f: (-f.flake_rate, -f.flips, f.set_id, f.case_id))


def suite(baseline: Baseline) -> Suite:
    """Everything the pages show (see the module)."""
    pushes = sorted(baseline.pushes, key=lambda p: p.seq)
    by_seq = {p.seq: p for p in pushes}
    runs = {
        (set_id, case_id): case_runs(case)
        for set_id, stored in sorted(baseline.sets.items())
        for case_id, case in sorted(stored.cases.items())
    }

    def of_push(keys: Iterable[tuple[str, str]], seq: int) -> list[list[Run]]:
        return [[r for r in runs[k] if r.seq == seq] for k in keys]

    sets = []
    for set_id, stored in sorted(baseline.sets.items()):
        keys = [(set_id, c) for c in sorted(stored.cases)]
        held = {r.seq for k in keys for r in runs[k]}
        points = [_point(p, of_push(keys, p.seq)) for p in pushes if p.seq in held]
        sets.append(SetTrend(set_id, stored.file, points, sorted(stored.cases)))
    totals = []
    for p in pushes:
        point = _point(p, of_push(runs, p.seq))
        totals.append(
            PushPoint(
                point.seq,
                point.commit,
                point.date,
                point.rate,
                point.errors,
                point.tokens,
                point.p95_latency_s,
                p.cost_usd,
            )
        )
    flips = flip_rates(baseline)
    flips_by = {(f.set_id, f.case_id): f for f in flips}
    cases = []
    for (set_id, case_id), case_list in runs.items():
        seqs = sorted({r.seq for r in case_list})
        points = [
            _point(by_seq.get(s) or Push(s), [[r for r in case_list if r.seq == s]], pooled=False)
            for s in seqs
        ]
        names = sorted(baseline.sets[set_id].cases[case_id].metrics)
        cases.append(
            CaseHistory(set_id, case_id, case_list, points, flips_by[(set_id, case_id)], names)
        )
    return Suite(pushes, sets, totals, flips, cases)
