"""ADK's LLM-judged metrics scored by the installed google-adk's own evaluators.

When google-adk is importable, ``final_response_match_v2``, the rubric-based metrics,
``hallucinations_v1`` and ``per_turn_user_simulator_quality_v1`` run ADK's evaluator classes
(from its metric registry) with one substitution: the judge model they call is ci-eval's judge
(the ``[judge]`` chat-completions endpoint). Prompts, label parsing, sampling, majority votes and
aggregation are therefore ADK's, read from the package at run time, so the same judge model gives
the same verdicts. Without google-adk, or with ``CI_EVAL_JUDGE_PROMPTS=ci-eval``, ci-eval's own
templates (``templates/judge/``) are used; the results' ``settings.adk_prompts`` says which.
"""

from __future__ import annotations

import threading
import warnings
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

from ci_eval.metrics.base import MetricFailure, NotApplicable, ScoreContext
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.simulate import adk_prompts


def available() -> bool:
    return adk_prompts._adk() is not None


def source() -> str:
    return adk_prompts.source()  # without importing google-adk when nothing needed it


class _JudgeAsAdkLlm:
    """Stands in for the ``BaseLlm`` an ADK evaluator calls: the prompt goes to ci-eval's judge.
    The n-th identical prompt is sample n modulo ``num_samples``, so that an identical
    invocation reuses the judge's answers (ci-eval asks each (prompt, sample) once per run)."""

    def __init__(self, judge: Any, samples: int) -> None:
        self.judge = judge
        self.samples = max(1, samples)
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.failure: MetricFailure | None = None

    async def generate_content_async(
        self, llm_request: Any, stream: bool = False
    ) -> AsyncGenerator[Any, None]:
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        prompt = "\n".join(
            part.text
            for content in llm_request.contents or []
            for part in content.parts or []
            if part.text
        )
        with self.lock:
            if self.failure is not None:
                # the metric is an ERROR already: ADK would go on asking for every other sample
                # and invocation, each call spending its retries and back-off on a judge that
                # just failed after all of them
                raise self.failure.with_traceback(None)
            sample = self.seen[prompt] % self.samples
            self.seen[prompt] += 1
        try:
            text = self.judge.ask(prompt, sample)
        except MetricFailure as exc:
            self.failure = exc  # ADK turns a failed sample into NOT_EVALUATED; we say ERROR
            raise
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _adk_invocations(invocations: list[Invocation]) -> list[Any]:
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation

    return [
        AdkInvocation.model_validate(i.model_dump(mode="json", exclude_none=True))
        for i in invocations
    ]


def evaluate(
    name: str,
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
    threshold: float,
) -> tuple[float, list[float | None], dict[str, Any]]:
    """Score with ADK's own evaluator for ``name``, its judge calls answered by ctx.judge."""
    from google.adk.evaluation.eval_case import Rubric
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric

    with warnings.catch_warnings():  # ADK marks its registry experimental, loudly
        warnings.simplefilter("ignore")
        from google.adk.evaluation.metric_evaluator_registry import (
            DEFAULT_METRIC_EVALUATOR_REGISTRY,
        )

    criterion = {k: v for k, v in spec.criterion.items() if k != "threshold"}
    metric = EvalMetric(
        metric_name=name,
        threshold=threshold,
        criterion=BaseCriterion(threshold=threshold, **criterion),
    )
    try:
        with warnings.catch_warnings():  # ADK marks these evaluators experimental, loudly
            warnings.simplefilter("ignore")
            evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
    except Exception as exc:  # ADK rejects the criterion (say, rubrics missing)
        raise NotApplicable(f"google-adk: {exc}") from None
    options = criterion.get("judge_model_options") or {}
    llm = _JudgeAsAdkLlm(ctx.judge, int(options.get("num_samples", 5)))
    for attr in ("_judge_model", "_llm"):
        if hasattr(evaluator, attr):
            setattr(evaluator, attr, llm)
    adk_actual = _adk_invocations(actual)
    # ADK's eval service copies the case's and each expected turn's rubrics onto the actuals
    case_rubrics = [Rubric.model_validate(r) for r in ctx.rubrics or []]
    for n, inv in enumerate(adk_actual):
        extra = list(case_rubrics)
        if ctx.scenario is None and n < len(expected) and expected[n].rubrics:
            extra += [Rubric.model_validate(r.model_dump(mode="json")) for r in expected[n].rubrics]
        if extra:
            inv.rubrics = list(inv.rubrics or []) + extra
    scenario = None
    if ctx.scenario is not None:
        from google.adk.evaluation.conversation_scenarios import ConversationScenario

        scenario = ConversationScenario.model_validate(ctx.scenario)
    import asyncio  # here, not at import: only a run that asks ADK's evaluators needs it
    import logging

    # ADK logs every failed judge sample with its traceback (on stderr, for want of a handler);
    # the failure is reported by ci-eval, once, as the metric's ERROR
    adk_log = logging.getLogger("google_adk.google.adk.evaluation.llm_as_judge")
    if not adk_log.handlers:
        adk_log.addHandler(logging.NullHandler())

    try:
        result = asyncio.run(
            evaluator.evaluate_invocations(
                actual_invocations=adk_actual,
                expected_invocations=None
                if ctx.scenario is not None
                else _adk_invocations(expected),
                conversation_scenario=scenario,
            )
        )
    except MetricFailure:
        raise
    except ValueError as exc:  # ADK's own precondition (lengths, rubrics required, …)
        if llm.failure:
            raise llm.failure from None
        raise NotApplicable(f"google-adk: {exc}") from None
    if llm.failure:
        raise llm.failure
    if result.overall_score is None:
        raise NotApplicable(
            "the judge's answers held no verdict ADK could parse "
            f"({result.overall_eval_status.name})"
        )
    details: dict[str, Any] = {"judge_prompts": adk_prompts.source()}
    if result.overall_rubric_scores:
        details["rubrics"] = {r.rubric_id: r.score for r in result.overall_rubric_scores}
    return (
        float(result.overall_score),
        [r.score for r in result.per_invocation_results],
        details,
    )
