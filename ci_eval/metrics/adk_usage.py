"""ADK's usage metrics, number for number with google-adk 2.13's ``_efficiency_evaluators``:
``token_usage_v1`` (tokens per invocation) and ``inference_call_count_v1`` (model calls per
invocation), from the usage the agent reported for each turn (``ci_eval.model.usage``; how each
connector reads it: ``ci_eval.connectors.usage``).

Both are informational, as in ADK: a value to track, never a pass or a fail. ADK refuses a
threshold for them (its evaluator raises, and the metric is not evaluated); here a threshold is
ignored and the result says so, the value is still reported. A turn whose usage is unknown is
n/a (None), never zero; a run where no turn's is known is NOT_EVALUATED, with what to send.

Per run, the score is ADK's overall value: for ``inference_call_count_v1`` the mean over the
invocations that have one; for ``token_usage_v1`` the sum of the known totals over *all* the
invocations (a turn with no model call that reported tokens spent none), as ADK's
``_TokenUsageV1Evaluator._average`` does. Over several runs a case reads, as for every metric,
the mean of the known per-invocation values across runs (ADK's ``AgentEvaluator``)."""

from __future__ import annotations

from typing import Any

from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.usage import Usage

NO_TOKENS = (
    "the agent reported no token usage: ADK events carry it in usageMetadata; an http or "
    "command agent sends it as the reply's usage (input_tokens, output_tokens)"
)
NO_CALLS = (
    "the agent reported no model calls: ADK events say so (usageMetadata, modelVersion); an "
    "http or command agent sends it as the reply's usage.model_calls"
)


def _usage(actual: list[Invocation], ctx: ScoreContext) -> list[Usage | None]:
    if not actual:
        raise NotApplicable("no invocations")
    return [ctx.usage[n] if n < len(ctx.usage) else None for n in range(len(actual))]


def _no_threshold(spec: MetricSpec, details: dict[str, Any]) -> dict[str, Any]:
    if spec.threshold is not None:
        details["reason"] = (
            f"{spec.name} reports a value and never passes or fails: the threshold is ignored "
            "(google-adk refuses one, and does not evaluate the metric)"
        )
    return details


def _average(values: list[int | None]) -> float | None:
    """ADK's ``_average`` of one count: over every invocation, a missing count as zero, None
    when no invocation reported it."""
    present = [v for v in values if v is not None]
    return sum(present) / len(values) if present else None


def token_usage(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    """ADK's token_usage_v1: input + output tokens per invocation; the breakdown beside it."""
    usage = _usage(actual, ctx)
    totals = [u.total_tokens if u is not None else None for u in usage]
    overall = _average(totals)
    if overall is None:
        raise NotApplicable(NO_TOKENS)
    details: dict[str, Any] = {
        "total_tokens": overall,
        "input_tokens": _average([u.input_tokens if u else None for u in usage]),
        "cached_tokens": _average([u.cached_tokens if u else None for u in usage]),
        "output_tokens": _average([u.output_tokens if u else None for u in usage]),
    }
    per_invocation: list[float | None] = [None if t is None else float(t) for t in totals]
    return overall, per_invocation, _no_threshold(spec, details)


def inference_call_count(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    """ADK's inference_call_count_v1: model calls per invocation, the mean of the known ones."""
    usage = _usage(actual, ctx)
    calls: list[float | None] = [
        float(u.model_calls) if u is not None and u.model_calls is not None else None for u in usage
    ]
    known = [c for c in calls if c is not None]
    if not known:
        raise NotApplicable(NO_CALLS)
    return sum(known) / len(known), calls, _no_threshold(spec, {})


register(
    Metric(
        "inference_call_count_v1",
        "Model calls per invocation, averaged over the invocations whose count the agent "
        "reported (informational).",
        inference_call_count,
        value_range="[0, ∞)",
        informational=True,
        needs_expected=False,
    )
)
register(
    Metric(
        "token_usage_v1",
        "Input + output tokens per invocation, as the agent reported them, averaged over the "
        "invocations; the input, cached and output averages beside it (informational).",
        token_usage,
        value_range="[0, ∞) tokens",
        informational=True,
        needs_expected=False,
        # a run's value counts a turn that reported no tokens as none spent (ADK's _average),
        # so it is not the mean of the per-invocation values: one run's case score is the run's
        score_is_invocation_mean=False,
    )
)
