"""A trpc-agent-go case's metrics over its runs, as trpc-agent-go aggregates repeated runs.

trpc-group/trpc-agent-go at 0e352fdd, ``evaluation/evaluation.go`` ``aggregateCaseRuns`` (the
same rule as ``evaluation/internal/multirun/multirun.go`` ``buildMetricSummaries``): per metric,
the mean of the runs' overall scores, a run whose metric was NOT_EVALUATED left out; PASSED iff
that mean reaches the threshold; NOT_EVALUATED when no run evaluated it. With one run the case
reads that run's own verdict (``summarizeAggregateCaseRunsStatus``, via the run's
``FinalEvalStatus``). ci-eval's ADK rule instead pools every invocation of every run, which
weighs a run by its number of turns.

trpc's ``EvalCaseResultAggregator`` (``evaluation/service/aggregation.go``) folds one run's
metrics into that run's case status; its only built-in is the default (FAILED over PASSED over
NOT_EVALUATED, score 1 or 0), and any other is Go code passed with
``evaluation.WithEvalCaseResultAggregator``, which no file names and ci-eval cannot run. Pure logic.
"""

from __future__ import annotations

from dataclasses import replace

from ci_eval.model.results import CaseMetric, MetricResult
from ci_eval.model.status import Status

SOURCE = "trpc-group/trpc-agent-go 0e352fdd evaluation/evaluation.go aggregateCaseRuns"


def over_runs(metric: CaseMetric, results: list[MetricResult], min_pass: int | None) -> CaseMetric:
    """``metric`` (ci-eval's aggregate of ``results``, one per completed run) with trpc's score
    and verdict over the runs. What trpc has no rule for stays ci-eval's: an ERROR, an
    informational metric or one without a threshold, and ``--min-pass`` when asked for."""
    if metric.status == Status.ERROR or metric.informational or metric.threshold is None:
        return metric
    # evaluation.go:559: "Skip metrics that did not run to avoid diluting averaged scores."
    evaluated = [
        r.score for r in results if r.status != Status.NOT_EVALUATED and r.score is not None
    ]
    if not evaluated:  # multirun.go:306: no run evaluated it
        return replace(metric, status=Status.NOT_EVALUATED, score=None)
    mean = sum(evaluated) / len(evaluated)  # evaluation.go:573
    if min_pass is not None:  # ci-eval's own "K of N runs pass", asked for on purpose
        return replace(metric, score=mean)
    return replace(metric, score=mean, status=_verdict(results, mean, metric.threshold))


def _verdict(results: list[MetricResult], mean: float, threshold: float) -> Status:
    """One run: that run's own status (evaluation.go:599-607); more: the mean against the
    threshold, whatever each run's verdict was (evaluation.go:574-577, 609)."""
    if len(results) == 1 and results[0].status in (Status.PASSED, Status.FAILED):
        return results[0].status
    return Status.PASSED if mean >= threshold else Status.FAILED
