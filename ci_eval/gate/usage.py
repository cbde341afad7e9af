"""Tokens and latency per case against main's history of them: a regression is a rise by a
margin that is also beyond the case's own noise — judged with the care of the pass/fail gate.

Per case, main's history is its runs' total agent tokens (the baseline's ``usage`` list) and
wall time (``latency_s``), grouped by the job (push) that ran them; errored runs are left out.
On the log scale (token counts and durations are multiplicative), with ``P`` pushes:

- the history's centre is the mean of its pushes' means; ``var_w`` is the pooled variance of
  runs within a push and ``var_b`` what the push means vary beyond that (a provider's or model's
  drift from one job to the next: a job's runs move together);
- this job's mean of ``n`` runs is predicted with variance ``var_b + var_w / n`` plus the
  centre's own uncertainty (one push alone: ``var_b`` is taken as ``var_w``, to be safe), and
  never less than a floor (tokens 5 %, latency 10 %);
- its one-sided p-value is Student's t with ``P - 1`` degrees of freedom (the pushes are the
  independent units), Benjamini–Hochberg across the cases of each kind; a case is a regression
  when its adjusted p ≤ ``significance`` **and** its median per run rose by the margin
  (tokens ×1.4, latency ×1.5). A case needs ``min_history`` such runs on main.

**Latency and a noisy runner.** Hosted runners differ: a whole job can be 1.5× slower than
main's, and main's own jobs differ the same way. Latency is therefore judged relative to the
same job's other cases: each of main's pushes, and this job, get a *runner factor* — the median,
over the cases with latency in both, of a case's log latency against its own centre — which is
taken off before the test. A slow runner moves every case and cancels out; one case slowing
down does not move the median. The price: a change that slows *every* case alike is read as a
slow runner, not a regression (a ``[budget] p95_latency_s`` limit catches absolute slowness).
With fewer than :data:`RUNNER_CASES` cases to compare, no factor is taken and the margin is
doubled. Tokens do not depend on the runner: no factor. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from ci_eval.gate import stats
from ci_eval.model.baseline import Baseline, StoredCase, StoredSet
from ci_eval.model.comparison import UnreportedUsage, UsageChange
from ci_eval.model.gate_words import DEFAULT_SIGNIFICANCE
from ci_eval.model.results import CaseRecord, RunResults
from ci_eval.model.status import Status
from ci_eval.results.usage_totals import Tally

TOKEN_RISE = 1.4  # the 40 %: a rise smaller than this is never a regression
LATENCY_RISE = 1.5
FLOOR = {"tokens": math.log(1.05), "latency": math.log(1.10)}
RUNNER_CASES = 5  # cases with latency history needed to tell a slow runner apart
PRIOR_DF = 8  # pushes' worth of evidence the suite's typical variance adds to a case's
MEDIAN_COST = 1.5  # the variance of a median of a few runs against their mean's (π/2 at many)
JUDGED = (Status.PASSED, Status.FAILED)


@dataclass
class Series:
    """One case's values of one kind: main's (push, log value) and this job's log values."""

    set_id: str
    case_id: str
    history: list[tuple[Any, float]]
    now: list[float]


def _logs(values: Sequence[Any], pushes: Sequence[Any], errors: Sequence[Any]) -> list[tuple]:
    out = []
    for i, value in enumerate(values):
        error = errors[i] if i < len(errors) else None
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and 0 < value < math.inf and error is None:
            push = pushes[i] if i < len(pushes) else None
            out.append((push if isinstance(push, int | str) else None, math.log(value)))
    return out


def _with_history(
    results: RunResults, baseline: Baseline
) -> Iterator[tuple[str, CaseRecord, StoredCase]]:
    """Each judged case of the run that main's history has: its set id, it, its entry."""
    for s in results.sets:
        cases = (baseline.sets.get(s.eval_set_id) or StoredSet()).cases
        for case in s.cases:
            entry = cases.get(case.eval_id)
            if entry is not None and case.status in JUDGED:
                yield s.eval_set_id, case, entry


def _series(results: RunResults, baseline: Baseline) -> dict[str, list[Series]]:
    out: dict[str, list[Series]] = {"tokens": [], "latency": []}
    for set_id, case, entry in _with_history(results, baseline):
        pushes, errors = entry.push, entry.error
        tokens, latency = _now(case)
        for kind, stored, now in (
            ("tokens", entry.usage or [], tokens),
            ("latency", entry.latency_s, latency),
        ):
            history = _logs(stored, pushes, errors)
            if history and now:
                out[kind].append(Series(set_id, case.eval_id, history, now))
    return out


def _now(case: CaseRecord) -> tuple[list[float], list[float]]:
    """This job's first runs that finished: log total tokens, log wall seconds (measured)."""
    tokens, latency = [], []
    for run in case.runs:
        if run.confirmation or run.error is not None:
            continue
        total = Tally().add_run(run)
        if total:
            tokens.append(math.log(total))
        wall = round(run.duration_s, 4)  # as the results file keeps it: the same verdict
        if not run.replayed and wall > 0:
            latency.append(math.log(wall))
    return tokens, latency


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _centre(history: list[tuple[Any, float]]) -> float:
    by_push: dict[Any, list[float]] = {}
    for push, value in history:
        by_push.setdefault(push, []).append(value)
    return _mean([_mean(v) for v in by_push.values()])


def _runner_factors(series: list[Series]) -> tuple[dict[Any, float], float] | None:
    """Each of main's pushes' runner factor, and this job's (see the module); None with too
    few cases to tell."""
    if len(series) < RUNNER_CASES:
        return None
    per_push: dict[Any, list[float]] = {}
    now = []
    for one in series:
        centre = median(v for _, v in one.history)
        by_push: dict[Any, list[float]] = {}
        for push, value in one.history:
            by_push.setdefault(push, []).append(value - centre)
        for push, deviations in by_push.items():
            per_push.setdefault(push, []).append(_mean(deviations))
        now.append(_mean(one.now) - centre)
    pushes = {p: median(v) for p, v in per_push.items() if len(v) >= RUNNER_CASES}
    job = median(now)
    return pushes, job


def t_sf(t: float, df: float) -> float:
    """P(T ≥ t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        return 0.5
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return tail if t > 0 else 1 - tail


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b) (continued fraction, Numerical Recipes)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
            c = 1.0 + numerator / c
            c = c if abs(c) > 1e-300 else 1e-300
            h *= d * c
        if abs(d * c - 1.0) < 1e-12:
            break
    return front * h / a


def _spread(history: list[tuple[Any, float]], runs_now: int, kind: str) -> tuple[float, float, int]:
    """(the history's centre, the predicted variance of this job's value — the mean of its
    ``runs_now`` runs; for latency their median — about it, its degrees of freedom), on the
    log scale (see the module)."""
    by_push: dict[Any, list[float]] = {}
    for push, value in history:
        by_push.setdefault(push, []).append(value)
    means = [_mean(v) for v in by_push.values()]
    pushes = len(means)
    within = sum((x - _mean(v)) ** 2 for v in by_push.values() for x in v)
    df_w = sum(len(v) - 1 for v in by_push.values())
    var_w = within / df_w if df_w else 0.0
    per_push = len(history) / pushes
    if pushes >= 2:
        centre = _mean(means)
        var_means = sum((m - centre) ** 2 for m in means) / (pushes - 1)
        var_b = max(0.0, var_means - var_w / per_push)
        df = pushes - 1
    else:
        centre, var_b, df = means[0], var_w, max(1, df_w)
    now = var_w / runs_now * (MEDIAN_COST if kind == "latency" and runs_now > 2 else 1.0)
    return centre, var_b + now + (var_b + var_w / per_push) / pushes, df


def _prior(estimates: list[tuple[float, int]]) -> tuple[float, bool]:
    """The suite's typical variance (the cases' median), and whether the cases' variances
    differ no more than their estimates from a few pushes would by chance (their logs' spread
    within 1.5× a chi-square's: then every case is moderated towards it, as limma does for
    genes; else a case is only pulled up towards it, never down)."""
    positive = [(v, df) for v, df in estimates if v > 0]
    if len(positive) < RUNNER_CASES:
        return (median(v for v, _ in estimates) if estimates else 0.0), False
    logs = [math.log(v) for v, _ in positive]
    centre = _mean(logs)
    spread = sum((x - centre) ** 2 for x in logs) / (len(logs) - 1)
    df = median(d for _, d in positive)
    chance = 2 / df + 2 / df**2  # about the variance of a log chi-square over df
    return median(v for v, _ in positive), spread <= 1.5 * chance


def usage_changes(
    results: RunResults,
    baseline: Baseline,
    min_history: int,
    significance: float = DEFAULT_SIGNIFICANCE,
    token_rise: float = TOKEN_RISE,
    latency_rise: float = LATENCY_RISE,
) -> list[UsageChange]:
    """Every case with enough history, per kind, judged (see the module)."""
    out: list[UsageChange] = []
    for kind, series in _series(results, baseline).items():
        rise = token_rise if kind == "tokens" else latency_rise
        factors = _runner_factors(series) if kind == "latency" else None
        if kind == "latency" and factors is None:
            rise = 1 + 2 * (rise - 1)
        tested = _tested(series, kind, factors, min_history)
        prior, alike = _prior([(t[4], t[5]) for t in tested])
        judged = [
            _judged(one, now, runner, centre, variance, df, kind, factors, prior if alike else None)
            for one, now, runner, centre, variance, df in tested
        ]
        adjusted = stats.benjamini_hochberg([c.p_value for c in judged])
        for change, p in zip(judged, adjusted, strict=True):
            change.adjusted = p
            change.regressed = p <= significance / 2 and change.ratio >= rise
        out += judged
    return out


def _tested(
    series: list[Series],
    kind: str,
    factors: tuple[dict[Any, float], float] | None,
    min_history: int,
) -> list[tuple[Series, list[float], float, float, float, int]]:
    """The cases with enough history: their runs now and their history's centre, variance and
    degrees of freedom, the runner's speed taken out of latency where it is measured."""
    tested = []
    for one in series:
        if len(one.history) < max(1, min_history):
            continue
        history, now, runner = one.history, one.now, 0.0
        if factors is not None:
            pushes, runner = factors
            history = [(p, v - pushes.get(p, 0.0)) for p, v in history]
            now = [v - runner for v in now]
        tested.append((one, now, runner, *_spread(history, len(now), kind)))
    return tested


def _judged(
    one: Series,
    now: list[float],
    runner: float,
    centre: float,
    variance: float,
    df: float,
    kind: str,
    factors: object,
    prior: float | None,
) -> UsageChange:
    """One case's change, its variance moderated by the suite's prior where the cases'
    variances are alike (``prior`` not None)."""
    if prior is not None:  # moderated, with the prior's freedom
        variance = (df * variance + PRIOR_DF * prior) / (df + PRIOR_DF)
        df += PRIOR_DF
    spread = max(math.sqrt(variance), FLOOR[kind])
    value = median(now) if kind == "latency" else _mean(now)
    shift = value - centre
    p_value = t_sf(shift / spread, df)
    before = math.exp(median(v for _, v in one.history))
    after = math.exp(median(one.now))
    return UsageChange(
        one.set_id,
        one.case_id,
        kind,
        round(before, 4),
        round(after, 4),
        round(math.exp(shift), 4),
        p_value,
        len(one.history),
        len(one.now),
        runner=round(math.exp(runner), 4) if factors is not None else None,
    )


def unreported(results: RunResults, baseline: Baseline) -> list[UnreportedUsage]:
    """The judged cases whose runs on main reported tokens and whose finished runs now report
    none: an agent that stops reporting usage is not measured, never under budget."""
    out = []
    for set_id, case, entry in _with_history(results, baseline):
        history = _logs(entry.usage or [], entry.push, entry.error)
        finished = [r for r in case.runs if not r.confirmation and r.error is None]
        if history and finished and all(Tally().add_run(r) is None for r in finished):
            before = math.exp(median(v for _, v in history))
            out.append(UnreportedUsage(set_id, case.eval_id, round(before, 1), len(history)))
    return out
