"""Score what a run recorded: every metric per run, then per case over runs.

Pure logic over plain data (no I/O besides what a judge or custom metric does). Per run each
metric gets a score and a status (PASSED iff score ≥ threshold); per case the runs aggregate as
ADK aggregates repeats — the mean of every per-invocation score across runs, then the threshold
(a trpc-agent-go set: as trpc-agent-go does, ``trpc_aggregation``) —
unless ``min_pass`` asks for "at least K of N runs pass". A case's verdict is the AND over its
metrics with ERROR dominating; informational metrics never fail it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ci_eval.connectors.base import NOT_CAPTURED
from ci_eval.metrics import INFORMATIONAL_DEFAULTS, lookup, not_computed_reason, pass_k
from ci_eval.metrics.base import Metric, MetricFailure, NotApplicable, ScoreContext
from ci_eval.model import Invocation
from ci_eval.model.describe import fmt
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.results import (
    CaseMetric,
    CaseRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
)
from ci_eval.model.status import Status
from ci_eval.net import llm
from ci_eval.score import as_recorded, reported, trpc_aggregation
from ci_eval.score.adk_status import adk_status_beside

NO_EXPECTED = (
    "needs an expected conversation; this case's user turns were simulated "
    "(conversation_scenario or Orchestrate story), so there is none"
)


@dataclass
class ScoreOptions:
    overrides: list[MetricSpec] = field(default_factory=list)  # --metric: replace the set's
    repo_defaults: list[MetricSpec] = field(default_factory=list)  # ci-eval.toml [metrics]
    min_pass: int | None = None
    judge: Any = None


def metrics_for(set_record: SetRecord, options: ScoreOptions) -> tuple[list[MetricSpec], str]:
    """The metrics that apply to a set and whose semantics they follow ("trpc" or "adk").

    Command line over the set's own sidecar over the repository's ci-eval.toml over defaults;
    a --metric that names a sidecar metric keeps that metric's criterion.
    """
    config: MetricConfig = set_record.metrics
    own = (
        config.metrics if config.source != "default" else (options.repo_defaults or config.metrics)
    )
    dialect = config.dialect if config.source != "default" else "adk"
    if set_record.dialect == "adk-rs" and dialect != "trpc":
        # adk-rs reads no sidecar: whatever names the metrics, an adk-rs set is scored as the
        # adk-rs runner scores it (its own metrics, its any-invocation rule)
        dialect = "adk-rs"
    if options.overrides:
        by_name = {m.name: m for m in own}
        own = [
            MetricSpec(
                o.name,
                o.threshold
                if o.threshold is not None
                else (by_name[o.name].threshold if o.name in by_name else None),
                o.criterion or (by_name[o.name].criterion if o.name in by_name else {}),
                by_name[o.name].evaluator if o.name in by_name else None,
            )
            for o in options.overrides
        ]
    names = {m.name for m in own}
    extra = [MetricSpec(n) for n in INFORMATIONAL_DEFAULTS if n not in names]
    return [*own, *extra], dialect


def _not_captured(actual: list[Invocation]) -> str | None:
    """Why the actual invocations' content was not recorded, when one says so (a trace's)."""
    return next((str(w) for inv in actual if (w := inv.extensions.get(NOT_CAPTURED))), None)


def score_run(
    specs: list[MetricSpec],
    dialect: str,
    expected: list[Invocation],
    actual: list[Invocation],
    ctx: ScoreContext,
    found: list[Metric | None] | None = None,
) -> list[MetricResult]:
    """Each of ``specs`` on one run; ``found``: their metrics, looked up once for the set
    (a large run scores thousands of runs by the same few metrics)."""
    out = []
    if found is None:
        found = [lookup(spec.evaluator or spec.name, dialect) for spec in specs]
    uncaptured_once: list[str | None] = []  # why the content is missing, read once a run
    for spec, metric in zip(specs, found, strict=True):
        threshold = spec.threshold
        # no judge: a replayed recording's judge score beats none
        kept = as_recorded.of(spec, metric, dialect, actual) if ctx.judge is None else None
        if kept is not None:
            out.append(kept)
            continue
        if metric is None:
            out.append(
                MetricResult(
                    spec.name,
                    Status.NOT_EVALUATED,
                    threshold=threshold,
                    reason=not_computed_reason(spec.evaluator or spec.name)
                    or f"unknown metric {spec.evaluator or spec.name!r} (see `ci-eval metrics`)",
                )
            )
            continue
        if threshold is None and not metric.informational:
            threshold = metric.default_threshold
        if ctx.scenario is not None and metric.needs_expected and not _answered(expected):
            out.append(
                MetricResult(
                    spec.name, Status.NOT_EVALUATED, threshold=threshold, reason=NO_EXPECTED
                )
            )
            continue
        if not metric.informational and not uncaptured_once:
            uncaptured_once.append(_not_captured(actual))
        uncaptured = None if metric.informational else uncaptured_once[0]
        if uncaptured is not None:  # a trace without its content: nothing to score it on
            out.append(
                MetricResult(
                    spec.name, Status.NOT_EVALUATED, threshold=threshold, reason=uncaptured
                )
            )
            continue
        try:
            score, per_invocation, details = metric.scorer(expected, actual, spec, ctx)
        except NotApplicable as exc:
            out.append(
                MetricResult(spec.name, Status.NOT_EVALUATED, threshold=threshold, reason=str(exc))
            )
            continue
        except MetricFailure as exc:
            out.append(MetricResult(spec.name, Status.ERROR, threshold=threshold, reason=str(exc)))
            continue
        except Exception as exc:  # a custom metric's bug is that metric's ERROR, not ours
            out.append(
                MetricResult(
                    spec.name,
                    Status.ERROR,
                    threshold=threshold,
                    reason=f"{type(exc).__name__}: {exc}",
                )
            )
            continue
        own = details.pop("status", None)  # the metric's own verdict: an ADK custom metric's
        if metric.informational or threshold is None:
            status = Status.INFO
        elif own is not None:
            status = own
        elif metric.invocation_passes is not None:
            status = _every_invocation(metric.invocation_passes, per_invocation, threshold)
            if status == Status.FAILED and score >= threshold:
                details.setdefault("reason", _short_turn(metric, per_invocation, threshold))
        else:
            status = Status.PASSED if score >= threshold else Status.FAILED
        out.append(
            MetricResult(
                spec.name,
                status,
                score,
                threshold,
                per_invocation,
                details.pop("reason", None),
                details,
            )
        )
    return out


def _aggregate(
    name: str,
    results: list[MetricResult],
    min_pass: int | None,
    informational: bool,
    by_runs: bool = False,
    invocation_passes: Callable[[float, float], bool] | None = None,
) -> CaseMetric:
    threshold = results[0].threshold
    if informational and len(results) == 1 and results[0].status is Status.INFO:
        return _one_informational(name, results[0], by_runs)  # a large run's usual case
    scored = [r for r in results if r.score is not None]
    statuses = [r.status for r in results]
    runs = [r.score for r in results]
    reason = next((r.reason for r in results if r.reason), None)
    if Status.ERROR in statuses:
        return CaseMetric(name, Status.ERROR, None, threshold, informational, runs, reason=reason)
    if not scored:
        return CaseMetric(
            name, Status.NOT_EVALUATED, None, threshold, informational, runs, reason=reason
        )
    # ADK: the mean of every per-invocation score across the runs, then the threshold (the
    # mean of the runs' scores for a metric whose score is no mean of its invocations')
    per_invocation = [s for r in scored for s in r.per_invocation if s is not None]
    values = [r.score for r in scored if r.score is not None]
    mean = (
        sum(per_invocation) / len(per_invocation)
        if per_invocation and not by_runs
        else sum(r.score or 0.0 for r in scored) / len(scored)
    )
    passes = sum(1 for s in statuses if s == Status.PASSED)
    fails = sum(1 for s in statuses if s == Status.FAILED)
    metric = CaseMetric(
        name,
        Status.INFO,
        mean,
        threshold,
        informational,
        runs,
        std=statistics.stdev(values) if len(values) > 1 else 0.0,
        min=min(values),
        reason=reason,
        pass_rate=passes / (passes + fails) if passes + fails else None,
        flaky=passes > 0 and fails > 0,
    )
    if not informational and threshold is not None:
        metric.run_fails = own_verdicts(results, threshold)
    if informational or threshold is None:
        metric.status = Status.INFO
    elif min_pass is not None:
        metric.status = Status.PASSED if passes >= min_pass else Status.FAILED
    elif all(r.details.get("reported") for r in scored):  # the source tool's verdicts
        metric.status = Status.FAILED if fails else Status.PASSED
    elif invocation_passes is not None:  # every invocation of every run must pass
        metric.status = _every_invocation(invocation_passes, per_invocation, threshold)
    else:
        metric.status = _verdict(scored, mean, threshold)
    return metric


def _one_informational(name: str, result: MetricResult, by_runs: bool) -> CaseMetric:
    """:func:`_aggregate` of an informational metric's one run that it scored (INFO), said
    directly: its mean as _aggregate takes it, no pass rate, nothing flaky."""
    if result.score is None:
        return CaseMetric(
            name,
            Status.NOT_EVALUATED,
            None,
            result.threshold,
            True,
            [None],
            reason=result.reason or None,
        )
    known = [s for s in result.per_invocation if s is not None]
    mean = sum(known) / len(known) if known and not by_runs else result.score
    return CaseMetric(
        name,
        Status.INFO,
        mean,
        result.threshold,
        True,
        [result.score],
        std=0.0,
        min=result.score,
        reason=result.reason or None,
        pass_rate=None,
        flaky=False,
    )


def own_verdicts(results: list[MetricResult], threshold: float) -> list[bool | None]:
    """Per run, did it fail — where some run's verdict is not its score against the threshold
    (the metric has its own rule), so the gate and the baseline read the verdicts as the
    metric gave them; empty where every run's verdict is its score's."""
    verdicts = [
        None
        if r.score is None or r.status not in (Status.PASSED, Status.FAILED)
        else r.status == Status.FAILED
        for r in results
    ]
    inferred = [None if r.score is None else r.score < threshold for r in results]
    return (
        verdicts
        if any(v is not None and v != i for v, i in zip(verdicts, inferred, strict=True))
        else []
    )


def _answered(expected: list[Invocation]) -> bool:
    """Whether a simulated case's run has expected answers all the same: a recording of
    trpc-agent-go's expected runner gave each turn one."""
    return bool(expected) and all(e.final_response is not None for e in expected)


def _short_turn(metric: Metric, scores: list[float | None], threshold: float) -> str:
    """Why a metric whose mean reaches its threshold failed: its first turn below it."""
    passes = metric.invocation_passes or (lambda score, bar: score >= bar)
    turn, score = next(
        (i, s) for i, s in enumerate(scores, 1) if s is not None and not passes(s, threshold)
    )
    return (
        f"turn {turn} scored {fmt(score)} < {fmt(threshold)}; {metric.origin} fails the metric "
        "when any turn does"
    )


def _every_invocation(
    passes: Callable[[float, float], bool], scores: list[float | None], threshold: float
) -> Status:
    """PASSED iff each scored invocation passes (adk-rs's rule: one failing turn fails the
    metric even when the mean reaches the threshold)."""
    known = [s for s in scores if s is not None]
    return Status.PASSED if known and all(passes(s, threshold) for s in known) else Status.FAILED


def _verdict(scored: list[MetricResult], mean: float, threshold: float) -> Status:
    """PASSED iff the mean reaches the threshold, in the direction the runs' verdicts show.

    A metric's verdict is score ≥ threshold, which this then is — unless the metric gives its
    own (an ADK custom metric: a cost may pass below its threshold). Those read as google-adk
    reads them: one run keeps its verdict, as ``adk eval`` does; over several, the direction
    their verdicts agree on (else higher is better), as ADK's AgentEvaluator infers it."""
    decided = (Status.PASSED, Status.FAILED)
    if len(scored) == 1 and scored[0].score == mean and scored[0].status in decided:
        return scored[0].status
    if all(r.status == Status.INFO for r in scored):  # the metric said it only informs
        return Status.INFO
    directions = {
        (r.score > threshold) == (r.status == Status.PASSED)
        for r in scored
        if r.score is not None and r.score != threshold and r.status in decided
    }
    higher = directions.pop() if len(directions) == 1 else True
    return Status.PASSED if (mean >= threshold if higher else mean <= threshold) else Status.FAILED


def case_status(metrics: list[CaseMetric], case: CaseRecord) -> Status:
    if case.skipped is not None:
        return Status.SKIPPED
    if case.error is not None:
        return Status.ERROR
    statuses = [m.status for m in metrics if not m.informational]
    if Status.ERROR in statuses:
        return Status.ERROR
    if Status.FAILED in statuses:
        return Status.FAILED
    # a gating metric (one with a threshold) that could not be computed: the case is not
    # known to pass, and the gate says so instead of passing it silently
    if any(
        m.status == Status.NOT_EVALUATED and not m.informational and m.threshold is not None
        for m in metrics
    ):
        return Status.NOT_EVALUATED
    if Status.PASSED in statuses:
        return Status.PASSED
    return Status.NOT_EVALUATED


def score_case(
    case: CaseRecord, specs: list[MetricSpec], dialect: str, set_dialect: str, options: ScoreOptions
) -> None:
    found = [lookup(spec.evaluator or spec.name, dialect) for spec in specs]
    completed: list[RunRecord] = [r for r in case.runs if r.error is None]
    for run in completed:
        if run.metrics:  # scored already: a case rescored after its confirmation reruns
            continue
        expected = [i.expected for i in run.invocations]
        actual = [i.actual for i in run.invocations if i.actual is not None]
        usage = [i.usage for i in run.invocations if i.stored_actual is not None]
        if run.reported is not None:  # the source tool's own scores, as it reported them
            run.metrics = reported.from_report(specs, run.reported)
            continue
        ctx = ScoreContext(
            extensions=case.extensions,
            rubrics=case.rubrics,
            set_dialect=set_dialect,
            judge=options.judge,
            scenario=case.scenario,
            usage=usage,
        )
        with llm.one_case(run.run):
            run.metrics = score_run(specs, dialect, expected, actual, ctx, found)
    case.metrics = []
    if completed:
        # the metrics a run's own pass is read from, for those over the case's runs (pass@k)
        gating = [not (pass_k.over_runs(m) or (m is not None and m.informational)) for m in found]
        for i, (spec, metric) in enumerate(zip(specs, found, strict=True)):
            if pass_k.over_runs(metric):
                case.metrics.append(pass_k.aggregate(spec, i, case.runs, gating))
                continue
            informational = metric is not None and metric.informational
            results = [r.metrics[i] for r in completed]
            aggregated = _aggregate(
                spec.name,
                results,
                options.min_pass,
                informational,
                by_runs=metric is not None and not metric.score_is_invocation_mean,
                invocation_passes=metric.invocation_passes if metric is not None else None,
            )
            if dialect == "trpc":  # trpc-agent-go's mean of the runs' scores, not ADK's
                aggregated = trpc_aggregation.over_runs(aggregated, results, options.min_pass)
            case.metrics.append(aggregated)
    case.scored_status = case_status(case.metrics, case)
    case.adk_status = adk_status_beside(case.scored_status, case.metrics, dialect, set_dialect)
    case.flaky = any(m.flaky for m in case.metrics if not m.informational)


class Scorer:
    """Scores cases one by one as they are handed in (while a run goes on), then the rest.

    ``then`` sees each case right after it is scored: the pipeline compacts it there, so a
    run holds its scored cases' invocations as the results file will, not as objects."""

    def __init__(
        self, options: ScoreOptions, then: Callable[[CaseRecord], object] | None = None
    ) -> None:
        self.options, self.then = options, then
        self._metrics: dict[int, tuple[list[MetricSpec], str]] = {}

    def _metrics_of(self, set_record: SetRecord) -> tuple[list[MetricSpec], str]:
        """The set's metrics, worked out (and recorded as applied) once per set."""
        found = self._metrics.get(id(set_record))
        if found is None:
            found = self._metrics[id(set_record)] = metrics_for(set_record, self.options)
            set_record.applied_metrics = found[0]
        return found

    def case(self, set_record: SetRecord, case: CaseRecord) -> None:
        specs, dialect = self._metrics_of(set_record)
        score_case(case, specs, dialect, set_record.dialect, self.options)
        if self.then is not None:
            self.then(case)

    def rest(self, results: RunResults) -> None:
        """Every case not scored yet, i.e. with no verdict (skipped, trace-mode, abandoned, or
        all of them); every set's applied metrics, even a set with no case."""
        for set_record in results.sets:
            self._metrics_of(set_record)
            for case in set_record.cases:
                if case.scored_status is None:
                    self.case(set_record, case)
