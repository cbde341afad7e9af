"""pass@k and pass^k over a case's runs, as trpc-agent-go defines them (``PassAtK`` and
``PassHatK``, ``evaluation/pass.go`` of trpc-group/trpc-agent-go at 0e352fdd), for a case of any
dialect run with ``--num-runs``.

With ``n`` the case's runs and ``c`` the ones that passed: ``pass_at_k`` is
``1 - C(n-c, k) / C(n, k)``, the chance that k of the runs drawn without replacement hold a pass
(trpc refuses ``k > n``: here NOT_EVALUATED, saying to raise ``--num-runs``); ``pass_hat_k`` is
``(c / n) ** k``, the chance that k independent runs at the observed pass rate all pass (any
``k`` ≥ 1, as trpc's; NOT_EVALUATED without a run). Both are computed in log space as trpc's Go
computes them (``Lgamma``, ``Expm1``), so the numbers agree with its to the last digits.

A run passes when its status is PASSED: trpc counts the runs whose status is ``Passed``
(``ParsePassNC``: a run's status summarises its metrics, none failed and one passed). Here a
run's status is read as ci-eval reads a case's (``score.scorer.case_status``) over that run's
gating metrics: an errored run, or one whose gating metric was NOT_EVALUATED, did not pass (trpc
skips a metric not evaluated). ``n`` counts the case's runs, errored ones included (trpc's
``NumRuns``), and not the confirmation reruns the gate asks for failing cases only.

Configured as ``[metrics] pass_at_k = {k = 3}`` (a threshold beside ``k`` makes it gate:
PASSED iff the value reaches it). Without a threshold it informs and never fails the case.
Pure logic."""

from __future__ import annotations

import math
from typing import Any

from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.results import CaseMetric, MetricResult, RunRecord
from ci_eval.model.status import Status

SOURCE = "trpc-group/trpc-agent-go evaluation/pass.go at 0e352fdd"
PASS_AT_K = "pass_at_k"
PASS_HAT_K = "pass_hat_k"
OVER_RUNS = "computed over the case's runs, not one run (see the case's metric)"


def _check_counts(n: int, c: int, k: int) -> None:
    """trpc-agent-go's checks both estimators share, in its order."""
    if k <= 0:
        raise ValueError("k must be >= 1")
    if c < 0:
        raise ValueError("c must be >= 0")
    if c > n:
        raise ValueError("c cannot exceed n")


def pass_at_k(n: int, c: int, k: int) -> float:
    """trpc-agent-go's ``PassAtK``: ``1 - C(n-c, k) / C(n, k)``; ValueError where it errs."""
    if n < 0:
        raise ValueError("n must be >= 0")
    _check_counts(n, c, k)
    if k > n:
        raise ValueError("k cannot exceed n")
    if c == 0:
        return 0.0
    if n - c < k:  # fewer than k failures: any k runs hold a pass
        return 1.0
    # log(C(n-c, k) / C(n, k)) = ln((n-c)!) + ln((n-k)!) - ln((n-c-k)!) - ln(n!), as trpc
    # computes it; 1 - exp(x) as -expm1(x) for precision near 0
    log_p = (
        math.lgamma(n - c + 1) + math.lgamma(n - k + 1) - math.lgamma(n - c - k + 1)
    ) - math.lgamma(n + 1)
    return -math.expm1(log_p)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """trpc-agent-go's ``PassHatK``: ``(c / n) ** k``; ValueError where it errs."""
    if n <= 0:
        raise ValueError("n must be > 0")
    _check_counts(n, c, k)
    if c == 0:
        return 0.0
    if c == n:
        return 1.0
    return math.exp(k * math.log(c / n))


def run_passed(run: RunRecord, gating: list[bool]) -> bool:
    """Whether a run's status is PASSED, as ``case_status`` decides a case's, over the run's
    results of its gating metrics (``gating``: per spec, does that metric gate)."""
    if run.error is not None:
        return False
    # zip stops at the specs: a replayed report may add metrics of its own after them
    results = [r for r, gates in zip(run.metrics, gating, strict=False) if gates]
    statuses = [r.status for r in results]
    if Status.ERROR in statuses or Status.FAILED in statuses:
        return False
    if any(r.status == Status.NOT_EVALUATED and r.threshold is not None for r in results):
        return False
    return Status.PASSED in statuses


def _k(spec: MetricSpec) -> int | str:
    """The spec's k, or why it has none."""
    k = spec.criterion.get("k")
    if isinstance(k, float) and k.is_integer():
        k = int(k)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return (
            f"{spec.name} needs k, a whole number >= 1 (got {k!r}): in ci-eval.toml "
            f"[metrics] {spec.name} = {{k = 3}}"
        )
    return k


def aggregate(
    spec: MetricSpec, index: int, runs: list[RunRecord], gating: list[bool]
) -> CaseMetric:
    """The case's metric over its runs; each finished run's own result for it (at ``index``)
    becomes that run's pass, 1 or 0, informational (the Bernoulli outcome the metric reads)."""
    threshold = spec.threshold
    at_k = (spec.evaluator or spec.name) == PASS_AT_K
    symbol = "pass@k" if at_k else "pass^k"
    finished = [r for r in runs if r.error is None]
    passed = {id(r): run_passed(r, gating) for r in runs}
    for run in finished:
        ok = passed[id(run)]
        if index < len(run.metrics):
            run.metrics[index] = MetricResult(
                spec.name,
                Status.INFO,
                1.0 if ok else 0.0,
                reason=f"this run {'passed' if ok else 'did not pass'}; {symbol} is the case's",
            )
    scores: list[float | None] = [passed[id(r)] * 1.0 for r in finished]
    first = [r for r in runs if not r.confirmation]  # reruns go to failing cases only
    n, c = len(first), sum(passed[id(r)] for r in first)
    metric = CaseMetric(
        spec.name,
        Status.NOT_EVALUATED,
        None,
        threshold,
        informational=threshold is None,
        runs=scores,
        pass_rate=c / n if n else None,
    )
    k = _k(spec)
    if isinstance(k, str):
        metric.status, metric.reason = Status.ERROR, k
        return metric
    if at_k and k > n:
        metric.reason = (
            f"pass@{k} needs at least {k} runs and the case has {n} "
            f"(trpc-agent-go's PassAtK refuses k > n): run with --num-runs {k} or more"
        )
        return metric
    if n == 0:
        metric.reason = "the case has no run to count"
        return metric
    value = (pass_at_k if at_k else pass_hat_k)(n, c, k)
    metric.score = value
    metric.reason = f"{symbol.replace('k', str(k))} over {n} runs, {c} passed ({SOURCE})"
    if threshold is None:
        metric.status = Status.INFO
    else:
        metric.status = Status.PASSED if value >= threshold else Status.FAILED
    return metric


def _per_run(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    # a run alone has no pass@k: the scorer replaces this with the run's pass (``aggregate``)
    raise NotApplicable(OVER_RUNS)


def over_runs(metric: Metric | None) -> bool:
    """Whether a metric is computed over a case's runs (``aggregate``), not per run."""
    return metric is not None and metric.scorer is _per_run


for _name, _text in (
    (
        PASS_AT_K,
        "pass@k over the case's runs: 1 - C(n-c, k)/C(n, k), n runs, c passed; "
        "criterion k (needs --num-runs >= k)",
    ),
    (PASS_HAT_K, "pass^k over the case's runs: (c/n)^k, n runs, c passed; criterion k"),
):
    register(
        Metric(
            _name,
            _text + "; informational unless given a threshold",
            _per_run,
            origin="trpc-agent-go",
            needs_expected=False,
        )
    )
