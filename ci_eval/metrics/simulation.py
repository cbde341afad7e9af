"""``per_turn_user_simulator_quality_v1``: did the simulated user follow its scenario?

google-adk 2.13's ``PerTurnUserSimulatorQualityV1``
(``simulation/per_turn_user_simulator_quality_v1.py``), rule for rule, with ADK's prompts (see
``adk_user_judge``): the first user turn passes iff it equals the starting prompt (stripped, no
LLM); every later turn is judged against the plan and the conversation before it
(``num_samples`` samples, majority vote, a tie invalid); then the judge is asked whether
stopping after the last turn was right (the stop signal as a proxy turn), and a failed stop
verdict replaces the last turn's. The score is the share of turns that passed: a turn whose
verdict the judge's answers do not hold counts as not passed, and a stop verdict they do not
hold replaces nothing.
"""

from __future__ import annotations

from typing import Any

from ci_eval.metrics import adk_judge_labels as labels
from ci_eval.metrics import adk_user_judge
from ci_eval.metrics.adk_judge_render import content_text
from ci_eval.metrics.adk_judges import (
    UserSimulatorCriterion,
    criterion,
    majority,
    status_passed,
)
from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.judge_metrics import judge_of
from ci_eval.metrics.registry import register
from ci_eval.model import Content, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec

NAME = "per_turn_user_simulator_quality_v1"


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
    crit = criterion(spec, threshold, UserSimulatorCriterion)
    persona = adk_user_judge.persona_of(scenario)
    plan = str(scenario.get("conversation_plan", ""))
    samples = crit.judge_model_options.num_samples

    def judged(turn: Invocation, before: list[Invocation]) -> float | None:
        prompt = adk_user_judge.user_turn_prompt(
            plan,
            adk_user_judge.history(before),
            content_text(turn.user_content) or "",
            crit.stop_signal,
            persona,
        )
        return majority([labels.user_turn_verdict(judge.ask(prompt, i)) for i in range(samples)])

    first = content_text(actual[0].user_content)
    start = str(scenario.get("starting_prompt", ""))
    scores: list[float | None] = [None if first is None else float(first.strip() == start.strip())]
    scores += [judged(actual[i], actual[:i]) for i in range(1, len(actual))]
    # ADK's proxy turn for the decision to stop: the stop signal as the user's message
    stop = Invocation(user_content=Content(parts=[Part(text=crit.stop_signal)]))
    stop_score = judged(stop, actual)
    if status_passed(stop_score, threshold) is False:
        scores[-1] = stop_score
    valid = 0.0
    for score in scores:
        if score is not None and status_passed(score, threshold):
            valid += score
    return (
        valid / len(scores),
        scores,
        {
            "stop_turn": {None: "not found", 1.0: "valid", 0.0: "invalid"}[stop_score],
            "num_samples": samples,
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
        score_is_invocation_mean=False,
    )
)
