"""ADK's LLM-judged metrics, registered: scored as google-adk 2.13 scores them (``adk_judges``)
through ci-eval's judge. Without a configured judge they are NOT_EVALUATED, with the reason."""

from __future__ import annotations

from typing import Any

from ci_eval.metrics import adk_judges
from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext, Scorer
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

NO_JUDGE = (
    "needs an LLM judge: set [judge] base_url and model in ci-eval.toml "
    "(or --judge-url / --judge-model)"
)


def judge_of(ctx: ScoreContext) -> Judge:
    if ctx.judge is None:
        raise NotApplicable(NO_JUDGE)
    return ctx.judge


def final_response_match_v2(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    return adk_judges.final_response_match(expected, actual, spec, ctx, judge_of(ctx))


def _rubric_metric(name: str) -> Scorer:
    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        return adk_judges.rubric_metric(name, expected, actual, spec, ctx, judge_of(ctx))

    return scorer


def rubric_based_multi_turn_trajectory_quality_v1(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    return adk_judges.trajectory(expected, actual, spec, ctx, judge_of(ctx))


def hallucinations_v1(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    return adk_judges.hallucinations(expected, actual, spec, ctx, judge_of(ctx))


for _name, _scorer, _text in (
    (
        "final_response_match_v2",
        final_response_match_v2,
        "LLM judge: is the final response a valid answer given the reference? Majority of "
        "num_samples (default 5) per invocation, mean over invocations.",
    ),
    (
        "rubric_based_final_response_quality_v1",
        _rubric_metric("rubric_based_final_response_quality_v1"),
        "LLM judge: the share of rubric verdicts the final responses pass (majority of "
        "num_samples, default 5, per rubric and invocation).",
    ),
    (
        "rubric_based_tool_use_quality_v1",
        _rubric_metric("rubric_based_tool_use_quality_v1"),
        "LLM judge: the share of rubric verdicts the tool use passes (majority of num_samples, "
        "default 5, per rubric and invocation).",
    ),
    (
        "rubric_based_multi_turn_trajectory_quality_v1",
        rubric_based_multi_turn_trajectory_quality_v1,
        "LLM judge: the share of rubrics the whole conversation passes, judged once on the last "
        "invocation (majority of num_samples, default 5, per rubric).",
    ),
    (
        "hallucinations_v1",
        hallucinations_v1,
        "LLM judge: the share of the responses' sentences supported by the context (or needing "
        "none), per invocation, mean over invocations.",
    ),
):
    register(
        Metric(
            _name,
            _text,
            _scorer,
            needs_llm=True,
            default_threshold=0.8,
            # judged on the actual conversation alone (ADK runs them on scenario cases)
            needs_expected=_name == "final_response_match_v2",
            # ADK's rubric metrics average every rubric verdict, not the invocations' means
            score_is_invocation_mean=not _name.startswith("rubric_based"),
        )
    )
