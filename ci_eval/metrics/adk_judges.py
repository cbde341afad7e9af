"""google-adk 2.13's LLM-judged metrics, re-implemented: ADK's prompts (shipped with ci-eval,
see ``adk_judge_prompts/NOTICE.md``), its sampling, label parsing, majority votes, aggregation
and its rules for what cannot be scored, with ci-eval's judge as the model. google-adk is not
imported, installed or not, so a run scores the same in the slim image as with google-adk
(``tests/score/test_adk_judge_parity.py`` runs ADK's own evaluator classes against this, with
and without google-adk importable).

Where ci-eval differs from ADK, on purpose: a judge call that fails makes the metric an ERROR
(ADK counts the sample as not evaluated and goes on asking); identical prompts are asked once
per run and sample (``Judge.ask``), so identical turns get the same verdicts; the judge is the
``[judge]`` endpoint, not the criterion's ``judge_model``.
"""

from __future__ import annotations

import statistics
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ci_eval.metrics import adk_judge_labels as labels
from ci_eval.metrics import adk_judge_render as render
from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.model import Invocation, Rubric
from ci_eval.model.metric_spec import MetricSpec

ADK_VERSION = "2.13.0"  # whose prompts and rules adk_judge_prompts/ and this module hold
NO_VERDICT = (
    "none of the judge's answers held a verdict in the form ADK's prompt asks for "
    "(see the judge model's answers)"
)
Scored = tuple[float, list[float | None], dict[str, Any]]


def source() -> str:
    """Whose code and prompts score ADK's judged metrics (the results' settings.adk_prompts)."""
    return f"ci-eval's copy of google-adk {ADK_VERSION}"


class JudgeModelOptions(BaseModel):
    """eval_metrics.JudgeModelOptions: ci-eval reads ``num_samples``; the model is ci-eval's
    judge. Unknown keys are refused, as ADK refuses them."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
    judge_model: str = "gemini-2.5-flash"
    judge_model_config: Any = None
    num_samples: int = Field(default=5, ge=1)
    parallelism_limit: int = Field(default=1, ge=1)


class JudgeCriterion(BaseModel):
    """eval_metrics.BaseCriterion and LlmAsAJudgeCriterion: other keys are allowed."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    threshold: float
    include_intermediate_responses_in_final: bool = False
    judge_model_options: JudgeModelOptions = Field(default_factory=JudgeModelOptions)


class RubricsCriterion(JudgeCriterion):
    rubrics: list[Rubric] = Field(default_factory=list)


class HallucinationsCriterion(JudgeCriterion):
    evaluate_intermediate_nl_responses: bool = False


class UserSimulatorCriterion(JudgeCriterion):
    stop_signal: str = "</finished>"


C = TypeVar("C", bound=JudgeCriterion)


def criterion(spec: MetricSpec, threshold: float, kind: type[C]) -> C:
    """The spec's criterion as ADK's criterion class for the metric reads it; one it refuses
    makes the metric not evaluated, as in ADK."""
    values = {k: v for k, v in spec.criterion.items() if k != "threshold"}
    try:
        return kind.model_validate({**values, "threshold": threshold})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in error["loc"]) or "criterion"
        raise NotApplicable(
            f"criterion {where}: {error['msg']} (google-adk's {kind.__name__} refuses it)"
        ) from None


def mean(values: list[float | None]) -> float | None:
    """statistics.mean of the values there are, as ADK averages (exactly rounded), or None."""
    present = [v for v in values if v is not None]
    return statistics.mean(present) if present else None


def majority(votes: list[float | None]) -> float | None:
    """final_response_match_v2 and the user-simulator judge: 1.0 when more samples say valid
    than invalid, 0.0 on a tie or fewer, the first sample (None) when none could be read."""
    valid, invalid = votes.count(1.0), votes.count(0.0)
    if not valid and not invalid:
        return votes[0]
    return 1.0 if valid > invalid else 0.0


def status_passed(score: float | None, threshold: float) -> bool | None:
    """llm_as_judge_utils.get_eval_status: None (not evaluated), passed or failed."""
    return None if score is None else score >= threshold


def paired(expected: list[Invocation], actual: list[Invocation], ctx: ScoreContext) -> None:
    """evaluator._validate_invocation_lengths: ADK passes a static case's conversation to every
    metric, and refuses one that does not pair up with the actual turns."""
    if ctx.scenario is None and len(expected) != len(actual):
        raise NotApplicable(
            f"{len(actual)} actual invocations for {len(expected)} expected: they cannot be paired"
        )


def final_response_match(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
    judge: Judge,
) -> Scored:
    """final_response_match_v2.py: per turn a majority of num_samples valid/invalid labels;
    the share of the turns with a verdict that are valid."""
    crit = criterion(spec, _threshold(spec), JudgeCriterion)
    if ctx.scenario is not None:
        raise NotApplicable("expected_invocations is needed by this metric")
    paired(expected, actual, ctx)
    if not actual:
        raise NotApplicable("no invocations")
    include = crit.include_intermediate_responses_in_final
    prompts = [  # all formatted first: ADK formats every turn's prompt before asking
        render.final_response_match_prompt(a, e, include)
        for e, a in zip(expected, actual, strict=True)
    ]
    samples = crit.judge_model_options.num_samples
    per: list[float | None] = [
        majority([labels.response_match_verdict(judge.ask(p, i)) for i in range(samples)])
        for p in prompts
    ]
    judged = [s for s in per if s is not None]
    if not judged:
        raise NotApplicable(NO_VERDICT)
    valid: float = 0
    for s in judged:
        valid += s
    return valid / len(judged), per, {"num_samples": samples}


RUBRIC_TYPES = {  # the rubric type each rubric metric takes from the case and the turns
    "rubric_based_final_response_quality_v1": "FINAL_RESPONSE_QUALITY",
    "rubric_based_tool_use_quality_v1": "TOOL_USE_QUALITY",
    "rubric_based_multi_turn_trajectory_quality_v1": "TRAJECTORY_QUALITY",
}


def turn_rubrics(
    actual: Invocation, n: int, expected: list[Invocation], ctx: ScoreContext
) -> list[Rubric]:
    """The rubrics ADK's eval service gives an actual turn: its own, then the case's, then the
    expected turn's (a static case's); a rubric id twice is refused."""
    found = list(actual.rubrics or [])
    try:
        found += [Rubric.model_validate(r) for r in ctx.rubrics or []]
    except ValidationError:
        raise NotApplicable("the case's rubrics are not ADK rubrics") from None
    if ctx.scenario is None and n < len(expected):
        found += list(expected[n].rubrics or [])
    seen: set[str] = set()
    for r in found:
        if r.rubric_id in seen:
            raise NotApplicable(
                f"rubric_id {r.rubric_id!r} twice for one turn (the case's and the turn's "
                "rubrics): give each rubric its own id (google-adk refuses it too)"
            )
        seen.add(r.rubric_id)
    return found


def effective_rubrics(own: list[Rubric], turn: list[Rubric], rubric_type: str) -> list[Rubric]:
    """rubric_based_evaluator.create_effective_rubrics_list: the criterion's rubrics, then the
    turn's of the metric's type only; ids unique, at least one."""
    by_id: dict[str, Rubric] = {}
    for typed, rubrics in ((False, own), (True, turn)):
        for r in rubrics:
            if typed and r.type != rubric_type:
                continue
            if r.rubric_id in by_id:
                raise NotApplicable(
                    f"rubric_id {r.rubric_id!r} twice among the criterion's, the case's and "
                    "the turn's rubrics: give each its own id (google-adk refuses it too)"
                )
            by_id[r.rubric_id] = r
    if not by_id:
        raise NotApplicable(
            f"Rubrics are required: give them in the criterion, or on the case or a turn with "
            f'type "{rubric_type}"'
        )
    return list(by_id.values())


RubricScores = list[tuple[str, float | None]]


def rubric_sample(answer: str, rubrics: list[Rubric]) -> RubricScores:
    """RubricBasedEvaluator.convert_auto_rater_response_to_score: each answered property
    matched to a rubric by its id, else by its text (normalised); others are dropped."""
    by_id = {r.rubric_id: r for r in rubrics}
    by_text = {labels.normalize_property(r.rubric_content.text_property): r for r in rubrics}
    out = []
    for verdict in labels.rubric_verdicts(answer) if answer else []:
        rubric = by_id.get(verdict.rubric_id) if verdict.rubric_id else None
        if rubric is None:
            rubric = by_text.get(labels.normalize_property(verdict.property_text))
        if rubric is not None:
            out.append((rubric.rubric_id, verdict.score))
    return out


def rubric_majority(samples: list[RubricScores]) -> RubricScores:
    """MajorityVotePerInvocationResultsAggregator: per rubric (in order of first mention), yes
    if more samples say yes than no, no on a tie or fewer, no score when none scored it."""
    buckets: dict[str, list[float | None]] = {}
    for sample in samples:
        for rubric_id, score in sample:
            buckets.setdefault(rubric_id, []).append(score)
    return [(rubric_id, majority(votes)) for rubric_id, votes in buckets.items()]


def rubric_summary(per_turn: list[RubricScores]) -> tuple[float | None, dict[str, float | None]]:
    """MeanInvocationResultsSummarizer: the mean of every rubric verdict of every turn (not of
    the turns' means), and each rubric's mean."""
    by_id: dict[str, list[float | None]] = {}
    for scores in per_turn:
        for rubric_id, score in scores:
            by_id.setdefault(rubric_id, []).append(score)
    return mean([s for scores in per_turn for _, s in scores]), {
        rubric_id: mean(scores) for rubric_id, scores in by_id.items()
    }


def _judged_rubrics(prompt: str, rubrics: list[Rubric], judge: Judge, samples: int) -> RubricScores:
    return rubric_majority([rubric_sample(judge.ask(prompt, i), rubrics) for i in range(samples)])


def rubric_metric(
    name: str,
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
    judge: Judge,
) -> Scored:
    """rubric_based_final_response_quality_v1 and rubric_based_tool_use_quality_v1: per turn,
    num_samples answers on its rubrics, a majority per rubric; the mean of all verdicts."""
    crit = criterion(spec, _threshold(spec), RubricsCriterion)
    paired(expected, actual, ctx)
    if not actual:
        raise NotApplicable("no invocations")
    prompts = []
    for n, act in enumerate(actual):
        rubrics = effective_rubrics(
            crit.rubrics, turn_rubrics(act, n, expected, ctx), RUBRIC_TYPES[name]
        )
        if name == "rubric_based_tool_use_quality_v1":
            prompts.append((render.tool_use_quality_prompt(act, rubrics), rubrics))
        else:
            include = crit.include_intermediate_responses_in_final
            prompts.append((render.final_response_quality_prompt(act, rubrics, include), rubrics))
    samples = crit.judge_model_options.num_samples
    # ADK's evaluator formats every turn's prompt before asking, each time replacing the rubric
    # list it keeps (llm_as_judge.py, rubric_based_evaluator.py): every turn's answers are then
    # matched against the last turn's rubrics, and a property only an earlier turn has is lost
    last = prompts[-1][1]
    per_turn = [_judged_rubrics(p, last, judge, samples) for p, _ in prompts]
    return _rubric_result(per_turn, [mean([s for _, s in t]) for t in per_turn], samples)


def _rubric_result(per_turn: list[RubricScores], per: list[float | None], samples: int) -> Scored:
    overall, by_rubric = rubric_summary(per_turn)
    if overall is None:
        raise NotApplicable(NO_VERDICT)
    return overall, per, {"rubrics": by_rubric, "num_samples": samples}


def trajectory(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
    judge: Judge,
) -> Scored:
    """rubric_based_multi_turn_trajectory_evaluator.py: the whole conversation judged once,
    with the last turn's rubrics; earlier turns are not evaluated, the last carries the score."""
    crit = criterion(spec, _threshold(spec), RubricsCriterion)
    paired(expected, actual, ctx)
    if not actual:
        raise NotApplicable("no invocations")
    last = len(actual) - 1
    rubrics = effective_rubrics(
        crit.rubrics,
        turn_rubrics(actual[last], last, expected, ctx),
        RUBRIC_TYPES["rubric_based_multi_turn_trajectory_quality_v1"],
    )
    prompt = render.trajectory_prompt(actual, rubrics)
    samples = crit.judge_model_options.num_samples
    scores = _judged_rubrics(prompt, rubrics, judge, samples)
    per: list[float | None] = [None] * last + [mean([s for _, s in scores])]
    return _rubric_result([scores], per, samples)


def hallucinations(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
    judge: Judge,
) -> Scored:
    """hallucinations_v1.py: each response text split into sentences by the judge, then each
    sentence labelled against the turn's context; supported and not_applicable count 1,
    unsupported, contradictory and disputed 0, other labels not at all. Means of means."""
    crit = criterion(spec, _threshold(spec), HallucinationsCriterion)
    paired(expected, actual, ctx)
    per: list[float | None] = []
    for act in actual:
        steps = []
        for text, context in render.hallucination_steps(
            act, crit.evaluate_intermediate_nl_responses
        ):
            found = labels.sentences(judge.ask(render.segmenter_prompt(text)))
            if not found:
                continue  # ADK: "No sentences produced by segmenter", a step without a score
            verdicts = []
            answer = judge.ask(render.validator_prompt(context, found))
            for label in labels.sentence_labels(answer):
                if label.lower() in ("supported", "not_applicable"):
                    verdicts.append(1)
                elif label.lower() in ("unsupported", "contradictory", "disputed"):
                    verdicts.append(0)
            if verdicts:
                steps.append(statistics.mean(verdicts))
        # ADK's per-turn result holds its score as a float (1 → 1.0: the same value)
        per.append(float(statistics.mean(steps)) if steps else None)
    overall = mean(per)
    if overall is None:
        raise NotApplicable(NO_VERDICT if actual else "no invocations")
    return overall, per, {}


def _threshold(spec: MetricSpec) -> float:
    return spec.threshold if spec.threshold is not None else 0.8
