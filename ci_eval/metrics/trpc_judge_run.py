"""The loop every trpc-agent-go LLM judge runs, and what its judges share.

Sources: trpc-group/trpc-agent-go at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1,
``evaluation/evaluator/llm/llm.go`` (per invocation i the prompt is built from invocations
0..i, ``numSamples`` answers are scored, a majority vote picks one, the invocations' scores
are averaged), ``evaluation/metric/criterion/llm/`` (``judgeModel.numSamples``, default 1)
and ``evaluation/service/local/local.go`` (``buildCaseRubricIndex``: a case's rubrics named
for a metric are appended to that metric's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ci_eval.metrics import trpc_judge_parse as parse
from ci_eval.metrics import trpc_judge_text as text
from ci_eval.metrics.base import MetricFailure, NotApplicable, ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.judge_metrics import judge_of
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

TRPC_COMMIT = "0e352fdd1428d30a8d978d39877f5a7b2591ccc1"


def judge_note(crit: dict[str, Any]) -> str:
    """Whose judge scored the metric: ci-eval's, whatever model the metric names (its
    provider and model are said, never its base URL or key)."""
    model = crit.get("judgeModel") or {}
    named = "/".join(str(model[k]) for k in ("providerName", "modelName") if model.get(k))
    instead = f" instead of the metric's judgeModel {named}" if named else ""
    return (
        f"judged by ci-eval's judge ([judge] in ci-eval.toml){instead}; trpc-agent-go's "
        "prompt, sampling and scoring"
    )


# a metric without a threshold: trpc's EvalMetric.Threshold zero value would pass everything;
# ci-eval holds trpc's metrics to 1.0 as it does its deterministic ones
DEFAULT_THRESHOLD = 1.0

Build = Callable[[list[Invocation], list[Invocation]], str]
Read = Callable[[Any], parse.Sample]  # a judge's answer (its tokens, for a logprobs judge)


class Setup:
    """One metric's judge settings for one case: the llmJudge criterion, its samples, the
    threshold the samples are voted by, and the rubrics with the case's own appended."""

    def __init__(self, spec: MetricSpec, ctx: ScoreContext) -> None:
        self.judge: Judge = judge_of(ctx)
        crit = spec.criterion.get("llmJudge")
        self.crit: dict[str, Any] = crit if isinstance(crit, dict) else {}
        samples = (self.crit.get("judgeModel") or {}).get("numSamples")
        self.samples = 1 if samples is None else samples  # llm.DefaultNumSamples
        if not isinstance(self.samples, int) or self.samples <= 0:
            raise MetricFailure("num samples must be greater than 0")
        self.simulated = ctx.scenario is not None
        self.threshold = spec.threshold if spec.threshold is not None else DEFAULT_THRESHOLD
        own, cases = list(self.crit.get("rubrics") or []), case_rubrics(spec.name, ctx)
        self.rubrics = [*own, *cases]
        ids = [str(r.get("id") or "").strip() for r in self.rubrics if isinstance(r, dict)]
        duplicated = next((i for n, i in enumerate(ids) if i and i in ids[:n]), None)
        if cases and duplicated is not None:  # appendCaseRubricsToMetric checks the ids
            raise MetricFailure(f"case rubric: duplicate rubric id {duplicated}")
        self.note = judge_note(self.crit)


def case_rubrics(metric: str, ctx: ScoreContext) -> list[dict[str, Any]]:
    """buildCaseRubricIndex: the case's rubrics whose metricName is this metric, in trpc's
    shape (an empty id becomes ``case_rubric_<n>``, n counting every case rubric)."""
    names = ctx.extensions.get("trpc", {}).get("rubricMetricNames") or []
    out = []
    for n, rubric in enumerate(ctx.rubrics or []):
        name = names[n] if n < len(names) else None
        if not (name or "").strip():
            if ctx.set_dialect == "trpc":
                raise MetricFailure(f"case rubric [{n}]: metricName is empty")
            continue
        if name != metric:
            continue
        content = (rubric.get("rubric_content") or {}).get("text_property") or ""
        if not content.strip():
            raise MetricFailure(f"case rubric [{n}]: content.text is empty")
        out.append(
            {
                "id": (rubric.get("rubric_id") or "").strip() or f"case_rubric_{n + 1}",
                "content": {"text": content.strip()},
                "description": rubric.get("description") or "",
                "type": (rubric.get("type") or "").strip(),
            }
        )
    return out


def evaluate(
    setup: Setup,
    expected: list[Invocation],
    actual: list[Invocation],
    build: Build,
    read: Read,
    logprobs: bool = False,
) -> tuple[float, list[float | None], dict[str, Any]]:
    """LLMBaseEvaluator.Evaluate: per invocation, its prompt asked ``numSamples`` times, the
    answers scored and majority-voted; the mean over the invocations."""
    if setup.simulated:
        # a simulated user's case has no expected conversation; these metrics read none
        expected = actual
    if not expected:
        raise NotApplicable("no invocations")
    if len(actual) != len(expected):
        raise NotApplicable(f"{len(actual)} actual invocations for {len(expected)} expected")
    chosen: list[parse.Sample] = []
    votes: list[list[float]] = []
    for i in range(len(actual)):
        try:
            prompt = build(actual[: i + 1], expected[: i + 1])
            ask = setup.judge.ask_logprobs if logprobs else setup.judge.ask
            samples = [read(ask(prompt, sample=k)) for k in range(setup.samples)]
        except (parse.AnswerError, ValueError) as exc:
            raise MetricFailure(f"invocation {i + 1}: {exc}") from None
        chosen.append(parse.majority_vote(samples, setup.threshold))
        votes.append([s.score for s in samples])
    details: dict[str, Any] = {"num_samples": setup.samples, "judge": setup.note}
    details["reasons"] = [s.reason for s in chosen]
    low = judged_low(chosen, setup.threshold)
    if low:
        details["reason"] = low
    if setup.samples > 1:
        details["sample_scores"] = votes
    if any(s.rubric_scores for s in chosen):
        details["rubric_scores"] = [s.rubric_scores for s in chosen]
    return parse.average([s.score for s in chosen]), [s.score for s in chosen], details


JUDGE_REASON_LIMIT = 160  # characters of a judge's reason a metric's reason quotes


def judged_low(chosen: list[parse.Sample], threshold: float) -> str:
    """``turn 2: judged 0 (the judge's reason)`` for each turn scored below the threshold: the
    metric's reason, said beside its score (the details keep every reason whole)."""
    said = []
    for n, sample in enumerate(chosen, 1):
        if sample.score >= threshold:
            continue
        why = " ".join(sample.reason.split())
        if len(why) > JUDGE_REASON_LIMIT:
            why = why[: JUDGE_REASON_LIMIT - 1] + "…"
        said.append(f"turn {n}: judged {sample.score:.3g}" + (f" ({why})" if why else ""))
    return "; ".join(said)


def last(invs: list[Invocation]) -> Invocation:
    return invs[-1]


def reference(invs: list[Invocation], metric: str) -> str:
    if invs[-1].final_response is None:
        raise ValueError(f"expected final response is required for {metric}")
    return text.message_text(invs[-1].final_response)


def rubrics_required(setup: Setup) -> str:
    if not any(isinstance(r, dict) and r.get("content") is not None for r in setup.rubrics):
        raise MetricFailure("llm judge rubrics are required")
    return text.rubrics_text(setup.rubrics)


def rubric_reader(setup: Setup) -> Read:
    try:
        ids = parse.expected_rubric_ids(setup.rubrics)
    except parse.AnswerError as exc:
        raise MetricFailure(str(exc)) from None
    return lambda answer: parse.rubric_scores(answer, ids)
