"""Custom metrics as google-adk calls them: ``(eval_metric, actual_invocations,
expected_invocations, conversation_scenario)`` in ADK's own types, an ``EvaluationResult`` out,
the verdict the function's own."""

from __future__ import annotations

from google.adk.evaluation.eval_case import ConversationScenario, Invocation, get_all_tool_calls
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.evaluator import EvaluationResult, PerInvocationResult


def _text(invocation: Invocation) -> str:
    parts = invocation.final_response.parts if invocation.final_response else None
    return "\n".join(p.text for p in parts or [] if p.text)


def _result(
    scores: list[float],
    actual: list[Invocation],
    expected: list[Invocation] | None,
    passed: bool,
) -> EvaluationResult:
    status = EvalStatus.PASSED if passed else EvalStatus.FAILED
    return EvaluationResult(
        overall_score=sum(scores) / len(scores),
        overall_eval_status=status,
        per_invocation_results=[
            PerInvocationResult(
                actual_invocation=a,
                expected_invocation=expected[n] if expected else None,
                score=s,
                eval_status=status,
            )
            for n, (a, s) in enumerate(zip(actual, scores, strict=True))
        ],
    )


def answered(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: ConversationScenario | None = None,
) -> EvaluationResult:
    """1.0 for each turn with a final response; ADK hands the threshold in the criterion."""
    scores = [1.0 if _text(a) else 0.0 for a in actual_invocations]
    threshold = eval_metric.criterion.threshold
    return _result(scores, actual_invocations, expected_invocations, min(scores) >= threshold)


async def tool_calls(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: ConversationScenario | None = None,
) -> EvaluationResult:
    """A cost: tool calls per turn, passing at or below the threshold (a coroutine, which
    google-adk awaits)."""
    scores = [float(len(get_all_tool_calls(a.intermediate_data))) for a in actual_invocations]
    mean = sum(scores) / len(scores)
    return _result(
        scores, actual_invocations, expected_invocations, mean <= eval_metric.criterion.threshold
    )


def expected_tools(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: ConversationScenario | None = None,
) -> EvaluationResult:
    """The share of each turn's expected tools that the agent called."""
    scores = []
    for actual, expected in zip(actual_invocations, expected_invocations or [], strict=True):
        want = {c.name for c in get_all_tool_calls(expected.intermediate_data)}
        got = {c.name for c in get_all_tool_calls(actual.intermediate_data)}
        scores.append(len(want & got) / len(want) if want else 1.0)
    mean = sum(scores) / len(scores)
    return _result(
        scores, actual_invocations, expected_invocations, mean >= eval_metric.criterion.threshold
    )


def mentions(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: ConversationScenario | None = None,
) -> EvaluationResult:
    """Whether the last answer mentions the criterion's ``mustMention`` word (a key of the
    criterion as the config writes it); google-adk takes the metric's threshold out."""
    if eval_metric.threshold is not None:
        raise ValueError("google-adk hands custom metrics no threshold")
    word = eval_metric.criterion.model_extra["mustMention"]
    scores = [1.0 if word.lower() in _text(a).lower() else 0.0 for a in actual_invocations]
    return _result(
        scores,
        actual_invocations,
        expected_invocations,
        scores[-1] >= eval_metric.criterion.threshold,
    )
