"""``per_turn_user_simulator_quality_v1``: did the simulated user follow its scenario?

google-adk 2.13's ``PerTurnUserSimulatorQualityV1``, rule for rule: the first user turn passes
iff it equals the starting prompt (stripped, no LLM); every later turn is judged against the plan
and the conversation before it (``num_samples`` samples, majority vote, ties invalid); then the
judge is asked whether stopping after the last turn was right (the stop signal as a proxy turn),
and a failed stop verdict replaces the last turn's. The score is the share of turns that passed.
Prompts and label parsing are ADK's own when google-adk is installed (see
``ci_eval.simulate.adk_prompts``).
"""

from __future__ import annotations

from typing import Any

from ci_eval.metrics import adk_judges
from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.judge_metrics import judge_of, samples_of
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.status import Status
from ci_eval.simulate import adk_prompts

NAME = "per_turn_user_simulator_quality_v1"


def _text(inv: Invocation) -> str | None:
    """ADK's ``get_text_from_content``: None without parts, else the text parts joined."""
    return inv.user_content.text() if inv.user_content.parts else None


def _status(score: float | None, threshold: float) -> str:
    if score is None:
        return Status.NOT_EVALUATED
    return Status.PASSED if score >= threshold else Status.FAILED


def per_turn_user_simulator_quality(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    scenario = ctx.scenario
    if scenario is None:
        raise NotApplicable("needs a conversation_scenario (only simulated cases have one)")
    if not actual:
        raise NotApplicable("no user turns were recorded")
    judge = judge_of(ctx)
    threshold = spec.threshold if spec.threshold is not None else 1.0
    if adk_judges.available():
        return adk_judges.evaluate(NAME, expected, actual, spec, ctx, threshold)
    stop = str(spec.criterion.get("stop_signal", adk_prompts.STOP_SIGNAL))
    samples = samples_of(spec, 5)
    plan = str(scenario.get("conversation_plan", ""))
    dumped = [inv.model_dump(mode="json", exclude_none=True) for inv in actual]

    def judged(generated: str, history: list[dict[str, Any]]) -> float | None:
        prompt = adk_prompts.per_turn_prompt(
            plan, adk_prompts.history_of(history), generated, stop, scenario
        )
        votes = [adk_prompts.parse_label(judge.ask(prompt, i)) for i in range(samples)]
        yes, no = votes.count(True), votes.count(False)
        if not yes and not no:
            return None
        return 1.0 if yes > no else 0.0

    first = _text(actual[0])
    scores: list[float | None] = [
        None
        if first is None
        else float(first.strip() == str(scenario.get("starting_prompt", "")).strip())
    ]
    for i in range(1, len(actual)):
        scores.append(judged(_text(actual[i]) or "", dumped[:i]))
    stop_score = judged(stop, dumped)
    if _status(stop_score, threshold) == Status.FAILED:
        scores[-1] = stop_score
    valid = sum(s for s in scores if s is not None and _status(s, threshold) == Status.PASSED)
    return (
        valid / len(scores),
        scores,
        {
            "stop_turn": {None: "not found", 1.0: "valid", 0.0: "invalid"}[stop_score],
            "num_samples": samples,
            "prompts": adk_prompts.source(),
        },
    )


register(
    Metric(
        NAME,
        "ADK user-simulator quality: the first user turn must equal the starting prompt; every "
        "later turn and the decision to stop are judged against the conversation plan (majority "
        "of num_samples, default 5). Share of turns that passed.",
        per_turn_user_simulator_quality,
        needs_llm=True,
        default_threshold=1.0,
        needs_expected=False,
    )
)
