"""trpc-agent-go's LLM-judged metrics, scored as trpc-agent-go scores them, through ci-eval's
judge.

Sources: trpc-group/trpc-agent-go at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1
(Apache-2.0): ``evaluation/evaluator/llm/llm.go`` (the loop: per invocation i the prompt is
built from invocations 0..i, ``numSamples`` judge answers are scored, a majority vote picks
one, the invocations' scores are averaged), one evaluator per metric under
``evaluation/evaluator/llm/`` with its operators under ``.../llm/operator/``, and
``evaluation/metric/criterion/llm/`` (``llmJudge``: ``judgeModel``, ``rubrics``,
``template``). The prompts are trpc's, shipped in ``trpc_judge_prompts/`` (see its NOTICE.md);
the loop is ``trpc_judge_run``, filling prompts ``trpc_judge_text``, reading answers
``trpc_judge_parse``, the template judge ``trpc_judge_template``.

Where ci-eval differs, on purpose: the judge is ci-eval's ([judge] in ci-eval.toml), not the
metric's ``judgeModel`` (provider, model, generationConfig): a trpc metric needs no model of
its own here, and one without ``llmJudge`` is judged as one with an empty ``llmJudge``. trpc
asks rubric judges for a JSON schema (structured output); ci-eval sends the same prompt
without it. Where trpc's evaluator returns an error (a prompt it cannot build, an answer it
cannot read) the metric is ERROR here, as trpc fails the metric.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ci_eval.metrics import trpc_judge_parse as parse
from ci_eval.metrics import trpc_judge_text as text
from ci_eval.metrics.base import Metric, MetricFailure, ScoreContext, Scorer
from ci_eval.metrics.registry import register
from ci_eval.metrics.trpc import trpc_tools
from ci_eval.metrics.trpc_judge_run import (
    DEFAULT_THRESHOLD,
    Read,
    Setup,
    evaluate,
    last,
    reference,
    rubric_reader,
    rubrics_required,
)
from ci_eval.metrics.trpc_judge_template import RESPONSE_SCORERS, bound_values, render_template
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec


def llm_final_response(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    setup = Setup(spec, ctx)

    def build(acts: list[Invocation], exps: list[Invocation]) -> str:
        return text.render(
            "llm_final_response.txt",
            UserPrompt=text.message_text(last(acts).user_content),
            ActualResponse=text.message_text(last(acts).final_response),
            ExpectedResponse=text.message_text(last(exps).final_response),
        )

    return evaluate(setup, expected, actual, build, parse.final_response)


Fill = Callable[[list[Invocation], list[Invocation]], dict[str, str]]


def _rubric(prompt: str, fill: Fill) -> Scorer:
    """A rubric judge: trpc-agent-go's ``prompt`` filled with the user's input, ``fill``'s
    values and the rubrics; the answer's rubric scores read as trpc reads them."""

    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        setup = Setup(spec, ctx)
        rubrics = rubrics_required(setup)

        def build(acts: list[Invocation], exps: list[Invocation]) -> str:
            return text.render(
                prompt,
                UserInput=text.message_text(last(acts).user_content),
                **fill(acts, exps),
                Rubrics=rubrics,
            )

        return evaluate(setup, expected, actual, build, rubric_reader(setup))

    return scorer


def _answer(acts: list[Invocation]) -> str:
    return text.message_text(last(acts).final_response)


llm_rubric_response = _rubric(
    "llm_rubric_response.txt", lambda acts, exps: {"FinalResponse": _answer(acts)}
)
llm_rubric_critic = _rubric(
    "llm_rubric_critic.txt",
    lambda acts, exps: {
        "FinalResponse": _answer(acts),
        "ExpectedResponse": reference(exps, "llm_rubric_critic"),
    },
)
llm_rubric_reference_critic = _rubric(
    "llm_rubric_reference_critic.txt",
    lambda acts, exps: {
        "ActualFinalResponse": _answer(acts),
        "ExpectedFinalResponse": reference(exps, "llm_rubric_reference_critic"),
    },
)
llm_rubric_knowledge_recall = _rubric(
    "llm_rubric_knowledge_recall.txt",
    lambda acts, exps: {
        "RetrievedKnowledge": text.knowledge_recall(trpc_tools(last(acts))) or text.NO_KNOWLEDGE
    },
)


def _context_messages(inv: Invocation, ctx: ScoreContext) -> list[dict[str, Any]]:
    """An invocation's context messages, else the case's (attachContextMessages)."""
    own = inv.extensions.get("trpc", {}).get("contextMessages")
    return list(own or ctx.extensions.get("trpc", {}).get("contextMessages") or [])


def llm_hallucinations(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    setup = Setup(spec, ctx)

    def build(acts: list[Invocation], exps: list[Invocation]) -> str:
        contexts = [
            text.grounding_context(a.user_content, _context_messages(a, ctx), trpc_tools(a))
            for a in acts
        ]
        contexts = [c for c in contexts if c != text.NO_VALIDATION_CONTEXT]
        segmenter = text.render(
            "llm_hallucinations_segmenter.txt",
            FinalResponse=text.message_text(last(acts).final_response),
        )
        # trpc asks for the segmentation once per invocation, before the validator's samples
        found = parse.SENTENCE.findall(setup.judge.ask(segmenter))
        if not found:
            raise ValueError("build segmented sentences: no segmented sentences found in response")
        sentences = [
            f'<sentence id="{n}">\n{s.strip()}\n</sentence>'
            for n, s in enumerate(found, 1)
            if s.strip()
        ]
        if not sentences:
            raise ValueError("build segmented sentences: no non-empty segmented sentences found")
        return text.render(
            "llm_hallucinations_validator.txt",
            ValidationContext="\n\n".join(contexts) or text.NO_VALIDATION_CONTEXT,
            SegmentedSentences="\n".join(sentences),
        )

    return evaluate(setup, expected, actual, build, parse.hallucination)


def llm_judge_template(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    setup = Setup(spec, ctx)
    options = setup.crit.get("template")
    if not isinstance(options, dict):
        raise MetricFailure("template is nil")
    if not options.get("prompt"):
        raise MetricFailure("template prompt is empty")
    scorer = options.get("responseScorerName") or ""
    if not scorer:
        raise MetricFailure("template responseScorerName is empty")
    if scorer not in RESPONSE_SCORERS:
        raise MetricFailure(f"unsupported response scorer {scorer!r}")
    if options.get("structuredOutputName") not in (None, "", *RESPONSE_SCORERS):
        # trpc would ask for that JSON schema; ci-eval sends no schema, but the name is checked
        raise MetricFailure(f"unsupported structured output {options['structuredOutputName']!r}")
    for kind, name, known in (
        ("samples aggregator", options.get("sampleAggregatorName"), "majority_vote"),
        ("invocations aggregator", options.get("invocationAggregatorName"), "average"),
    ):
        if name not in (None, "", known):
            raise MetricFailure(f"unsupported {kind} {name!r}")
    read: Read
    if scorer == "rubric_scores":
        read = rubric_reader(setup)
    elif scorer == "categorical":
        try:
            categories = parse.category_scores(options.get("responseScorerOptions"))
        except parse.AnswerError as exc:
            raise MetricFailure(str(exc)) from None
        read = lambda answer: parse.categorical(answer, categories)  # noqa: E731
    else:
        read = parse.single_score if scorer == "single_score" else parse.boolean

    def build(acts: list[Invocation], exps: list[Invocation]) -> str:
        values = bound_values(options.get("variableBindings") or [], acts, exps, setup.rubrics)
        return render_template(options["prompt"], values)

    return evaluate(setup, expected, actual, build, read)


def llm_verifier_pairwise(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    setup = Setup(spec, ctx)
    criteria = text.rubrics_text(setup.rubrics).strip()

    def build(acts: list[Invocation], exps: list[Invocation]) -> str:
        answer = reference(exps, "llm_verifier_pairwise")
        if last(acts).final_response is None:
            raise ValueError("actual final response is required for llm_verifier_pairwise")
        if not criteria:
            raise ValueError("llm judge rubrics are required")
        return text.render(
            "llm_verifier_pairwise.txt",
            Criteria=criteria,
            UserInput=text.message_text(last(acts).user_content),
            ActualResponse=text.message_text(last(acts).final_response),
            ExpectedResponse=answer,
        )

    # trpc scores the letters' token log probabilities, not the answer's text
    return evaluate(setup, expected, actual, build, parse.pairwise_score, logprobs=True)


_METRICS: tuple[tuple[str, Callable[..., Any], str], ...] = (
    (
        "llm_final_response",
        llm_final_response,
        "LLM judge (trpc-agent-go's prompt): is the final response valid against the reference "
        "answer; 1 or 0 per invocation, majority of numSamples (default 1), mean over "
        "invocations.",
    ),
    (
        "llm_rubric_response",
        llm_rubric_response,
        "LLM judge (trpc-agent-go's prompt): the mean of the rubrics' 0/1 scores for the final "
        "answer (metric and case rubrics), majority of numSamples, mean over invocations.",
    ),
    (
        "llm_rubric_critic",
        llm_rubric_critic,
        "LLM judge (trpc-agent-go's prompt): rubric scores of the final answer against the "
        "golden answer as the source of truth; mean per invocation, then over invocations.",
    ),
    (
        "llm_rubric_reference_critic",
        llm_rubric_reference_critic,
        "LLM judge (trpc-agent-go's prompt): rubric scores of the final answer with the "
        "reference answer as a quality anchor; mean per invocation, then over invocations.",
    ),
    (
        "llm_rubric_knowledge_recall",
        llm_rubric_knowledge_recall,
        "LLM judge (trpc-agent-go's prompt): rubric scores of the knowledge_search results "
        "(relevant and sufficient); mean per invocation, then over invocations.",
    ),
    (
        "llm_hallucinations",
        llm_hallucinations,
        "LLM judge (trpc-agent-go's prompts): the final answer segmented into sentences, each "
        "labelled against the user prompt, context messages and tool calls; the share "
        "supported (or needing no grounding), mean over invocations.",
    ),
    (
        "llm_judge_template",
        llm_judge_template,
        "LLM judge with the metric's own template prompt and bound variables; the answer read "
        "by its responseScorerName (single_score, rubric_scores, boolean, categorical).",
    ),
    (
        "llm_verifier_pairwise",
        llm_verifier_pairwise,
        "LLM judge (trpc-agent-go's prompt): actual vs reference answer scored A..T from the "
        "judge's token log probabilities (the judge must return logprobs).",
    ),
)

for _name, _scorer, _text in _METRICS:
    register(
        Metric(
            _name,
            _text,
            _scorer,
            needs_llm=True,
            default_threshold=DEFAULT_THRESHOLD,
            origin="trpc-agent-go",
            # judged on the actual conversation alone where trpc's prompt has no reference
            needs_expected=_name
            not in ("llm_rubric_response", "llm_rubric_knowledge_recall", "llm_hallucinations"),
        )
    )
