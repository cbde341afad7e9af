"""ADK's LLM-judged metrics through ci-eval's judge, with ``num_samples`` majority voting as ADK
does. Without a configured judge they are NOT_EVALUATED, with the reason."""

from __future__ import annotations

import json
from typing import Any

from ci_eval.metrics import adk_judges
from ci_eval.metrics.adk import require_paired, text_of
from ci_eval.metrics.base import Metric, MetricFailure, NotApplicable, ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.registry import register
from ci_eval.model import IntermediateData, Invocation
from ci_eval.model.metric_spec import MetricSpec

NO_JUDGE = (
    "needs an LLM judge: set [judge] base_url and model in ci-eval.toml "
    "(or --judge-url / --judge-model)"
)


def judge_of(ctx: ScoreContext) -> Judge:
    if ctx.judge is None:
        raise NotApplicable(NO_JUDGE)
    return ctx.judge


def samples_of(spec: MetricSpec, default: int) -> int:
    options = spec.criterion.get("judge_model_options") or {}
    return max(1, int(options.get("num_samples", default)))


def _threshold(spec: MetricSpec) -> float:
    return spec.threshold if spec.threshold is not None else 0.8


def _majority(votes: list[bool]) -> bool:
    return sum(votes) > len(votes) / 2


def _calls(inv: Invocation) -> list[dict[str, Any]]:
    data = inv.intermediate_data
    responses = list(data.tool_responses) if isinstance(data, IntermediateData) else []
    out = []
    for n, call in enumerate(inv.tool_calls()):
        result = next((r.response for r in responses if r.id and r.id == call.id), None)
        if result is None and n < len(responses) and call.id is None:
            result = responses[n].response
        out.append(
            {
                "name": call.name,
                "args": json.dumps(call.args, ensure_ascii=False),
                "result": json.dumps(result, ensure_ascii=False),
            }
        )
    return out


def final_response_match_v2(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    judge = judge_of(ctx)
    require_paired(expected, actual)
    if adk_judges.available():
        return adk_judges.evaluate(
            "final_response_match_v2", expected, actual, spec, ctx, _threshold(spec)
        )
    samples = samples_of(spec, 5)
    scores: list[float | None] = []
    for exp, act in zip(expected, actual, strict=True):
        prompt = judge.render(
            "final_response_match_v2.j2",
            prompt=text_of(exp.user_content),
            reference=text_of(exp.final_response),
            response=text_of(act.final_response),
        )
        votes = []
        for i in range(samples):
            label = str(judge.ask_json(prompt, i).get("is_the_agent_response_valid", ""))
            votes.append(label.strip().lower() == "valid")
        scores.append(1.0 if _majority(votes) else 0.0)
    return sum(s or 0 for s in scores) / len(scores), scores, {"num_samples": samples}


def _rubrics(spec: MetricSpec, ctx: ScoreContext, inv: Invocation) -> list[dict[str, str]]:
    found = list(spec.criterion.get("rubrics") or []) + list(ctx.rubrics or [])
    found += [r.model_dump(mode="json") for r in inv.rubrics or []]
    out = []
    for r in found:
        content = r.get("rubric_content") or r.get("rubricContent") or {}
        text = content.get("text_property") or content.get("textProperty")
        out.append({"id": str(r.get("rubric_id") or r.get("rubricId")), "text": str(text)})
    if not out:
        raise NotApplicable("no rubrics: give them in the criterion or on the case")
    return out


def _rubric_metric(name: str, use_tools: bool) -> Any:
    template = f"{name}.j2"

    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        judge = judge_of(ctx)
        require_paired(expected, actual)
        if adk_judges.available():
            return adk_judges.evaluate(name, expected, actual, spec, ctx, _threshold(spec))
        samples = samples_of(spec, 1)
        scores: list[float | None] = []
        per_rubric: dict[str, list[bool]] = {}
        for exp, act in zip(expected, actual, strict=True):
            rubrics = _rubrics(spec, ctx, exp)
            prompt = judge.render(
                template,
                prompt=text_of(exp.user_content),
                response=text_of(act.final_response),
                tool_calls=_calls(act) if use_tools else [],
                rubrics=rubrics,
            )
            votes: dict[str, list[bool]] = {r["id"]: [] for r in rubrics}
            for i in range(samples):
                for item in judge.ask_json(prompt, i).get("rubrics") or []:
                    if isinstance(item, dict) and str(item.get("id")) in votes:
                        votes[str(item["id"])].append(
                            str(item.get("verdict", "")).strip().lower() == "yes"
                        )
            if any(not v for v in votes.values()):
                missing = [k for k, v in votes.items() if not v]
                raise MetricFailure(f"judge: no verdict for rubric(s) {missing}")
            passed = {k: _majority(v) for k, v in votes.items()}
            for k, v in passed.items():
                per_rubric.setdefault(k, []).append(v)
            scores.append(sum(passed.values()) / len(passed))
        return (
            sum(s or 0 for s in scores) / len(scores),
            scores,
            {"rubrics": {k: sum(v) / len(v) for k, v in per_rubric.items()}},
        )

    return scorer


def hallucinations_v1(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    judge = judge_of(ctx)
    if adk_judges.available():
        return adk_judges.evaluate(
            "hallucinations_v1", expected, actual, spec, ctx, _threshold(spec)
        )
    scores: list[float | None] = []
    for exp, act in zip(expected, actual, strict=False):
        prompt = judge.render(
            "hallucinations_v1.j2",
            prompt=text_of(exp.user_content),
            response=text_of(act.final_response),
            tool_calls=_calls(act),
        )
        labels = [
            str(s.get("label", "")).lower()
            for s in judge.ask_json(prompt).get("sentences") or []
            if isinstance(s, dict)
        ]
        counted = [label for label in labels if label != "not_applicable"]
        scores.append(
            sum(1 for x in counted if x == "supported") / len(counted) if counted else 1.0
        )
    if not scores:
        raise NotApplicable("no invocations")
    return sum(s or 0 for s in scores) / len(scores), scores, {}


for _name, _scorer, _text in (
    (
        "final_response_match_v2",
        final_response_match_v2,
        "LLM judge: is the final response a valid answer given the reference? Majority of "
        "num_samples (default 5) per invocation, mean over invocations.",
    ),
    (
        "rubric_based_final_response_quality_v1",
        _rubric_metric("rubric_based_final_response_quality_v1", use_tools=False),
        "LLM judge: fraction of rubrics the final response satisfies.",
    ),
    (
        "rubric_based_tool_use_quality_v1",
        _rubric_metric("rubric_based_tool_use_quality_v1", use_tools=True),
        "LLM judge: fraction of rubrics the tool use satisfies.",
    ),
    (
        "hallucinations_v1",
        hallucinations_v1,
        "LLM judge: fraction of the response's sentences supported by the prompt and tool results.",
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
        )
    )
