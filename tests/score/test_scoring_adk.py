"""ADK parity: ci-eval's trajectory and ROUGE scores equal google-adk 2.13's own evaluators.

Two checks: ADK's recorded answers for hand-made edge cases (../shared/adk-reference), and a
differential test against ADK's TrajectoryEvaluator and ResponseEvaluator on 2,400 generated
(expected, actual) pairs per configuration — Unicode and CJK text, nested and reordered args,
int/float, None vs {}, empty lists, duplicates, every match type, with and without ignore_args.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.adk import response_match, tool_trajectory
from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec
from tests.conftest import SHARED
from tests.pairs import pairs

# google-adk is imported by the differential tests (on one worker), not at collection

REFERENCE = SHARED / "adk-reference"
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
PAIRS = 2400
TOLERANCE = 1e-12


def _actual(item: dict[str, Any]) -> Invocation:
    if "response" in item or set(item) == {"tool_uses"}:
        return Invocation(
            user_content=Content(role="user", parts=[Part(text="q")]),
            final_response=Content(role="model", parts=[Part(text=item["response"])])
            if "response" in item
            else None,
            intermediate_data=IntermediateData(
                tool_uses=[FunctionCall.model_validate(c) for c in item["tool_uses"]]
            ),
        )
    return Invocation.model_validate(item)


def _reference_cases() -> list[tuple[str, list[Invocation], list[Invocation], dict[str, Any]]]:
    if not REFERENCE.is_dir():
        return []
    expected = {
        c["eval_id"]: [Invocation.model_validate(i) for i in c["conversation"]]
        for c in json.loads((REFERENCE / "edge_cases.evalset.json").read_text())["eval_cases"]
    }
    actual = json.loads((REFERENCE / "edge_cases.actual.json").read_text())
    scores = json.loads((REFERENCE / "edge_cases.scores.json").read_text())["cases"]
    return [
        (k, expected[k], [_actual(a) for a in actual[k]], scores[k]["metrics"])
        for k in sorted(scores)
    ]


CASES = _reference_cases()


@pytest.mark.parametrize(("case", "expected", "actual", "adk"), CASES, ids=[c[0] for c in CASES])
def test_adk_reference_edge_cases(
    case: str, expected: list[Invocation], actual: list[Invocation], adk: dict[str, Any]
) -> None:
    for variant, answer in adk.items():
        if variant == "response_match_score":
            spec, scorer = MetricSpec(variant, 0.8), response_match
        else:
            options = variant[variant.index("[") + 1 : -1].split(",")
            spec = MetricSpec(
                "tool_trajectory_avg_score",
                1.0,
                {"match_type": options[0], "ignore_args": "ignore_args" in options},
            )
            scorer = tool_trajectory
        try:
            score, per, _ = scorer(expected, actual, spec, ScoreContext())
        except NotApplicable:
            assert answer["status"] == "NOT_EVALUATED", variant
            continue
        assert abs(score - answer["score"]) <= TOLERANCE, variant
        assert per == pytest.approx(answer["per_invocation"], abs=TOLERANCE), variant
        assert ("PASSED" if score >= spec.threshold else "FAILED") == answer["status"], variant


# --- the differential test ----------------------------------------------------------------


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    AdkInvocation = pytest.importorskip("google.adk.evaluation.eval_case").Invocation
    expected, actual = pairs(20261122, PAIRS)
    return {
        "ours": (
            [Invocation.model_validate(e) for e in expected],
            [Invocation.model_validate(a) for a in actual],
        ),
        "adk": (
            [AdkInvocation.model_validate(e) for e in expected],
            [AdkInvocation.model_validate(a) for a in actual],
        ),
    }


@pytest.mark.parametrize("match_type", MATCH_TYPES)
@pytest.mark.parametrize("ignore_args", [False, True])
def test_trajectory_equals_adk_on_generated_pairs(
    generated: dict[str, Any], match_type: str, ignore_args: bool
) -> None:
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    criterion = ToolTrajectoryCriterion(
        threshold=1.0, match_type=match_type, ignore_args=ignore_args
    )
    adk = TrajectoryEvaluator(
        eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", criterion=criterion)
    ).evaluate_invocations(generated["adk"][1], generated["adk"][0])
    expected, actual = generated["ours"]
    score, per, _ = tool_trajectory(
        expected,
        actual,
        MetricSpec(
            "tool_trajectory_avg_score", 1.0, {"match_type": match_type, "ignore_args": ignore_args}
        ),
        ScoreContext(),
    )
    theirs = [r.score for r in adk.per_invocation_results]
    assert len(per) == len(theirs) == PAIRS
    assert all(abs(a - b) <= TOLERANCE for a, b in zip(per, theirs, strict=True))
    assert abs(score - adk.overall_score) <= TOLERANCE
    assert 0.05 < score < 0.95  # the generator makes both matches and mismatches


def test_rouge_equals_adk_on_generated_pairs(generated: dict[str, Any]) -> None:
    from google.adk.evaluation.response_evaluator import ResponseEvaluator

    adk = ResponseEvaluator(threshold=0.8, metric_name="response_match_score").evaluate_invocations(
        generated["adk"][1], generated["adk"][0]
    )
    expected, actual = generated["ours"]
    score, per, _ = response_match(
        expected, actual, MetricSpec("response_match_score", 0.8), ScoreContext()
    )
    theirs = [r.score for r in adk.per_invocation_results]
    assert len(per) == len(theirs) == PAIRS
    mismatches = [
        (i, a, b)
        for i, (a, b) in enumerate(zip(per, theirs, strict=True))
        if abs(a - b) > TOLERANCE
    ]
    assert not mismatches, mismatches[:5]
    assert abs(score - adk.overall_score) <= TOLERANCE
    assert len({round(s, 6) for s in per}) > 50  # real spread of partial scores


def test_match_type_strings_are_read_as_adk_reads_them() -> None:
    inv = Invocation(
        user_content=Content(role="user", parts=[Part(text="q")]),
        intermediate_data=IntermediateData(tool_uses=[FunctionCall(name="A")]),
    )
    for value in ("in-order", "In Order", "IN_ORDER", 1):
        score, _, details = tool_trajectory(
            [inv],
            [inv],
            MetricSpec("tool_trajectory_avg_score", 1.0, {"match_type": value}),
            ScoreContext(),
        )
        assert details["match_type"] == "IN_ORDER" and score == 1.0


def test_the_adk_rouge_examples_from_adk_md() -> None:
    from ci_eval.metrics.rouge import unicode_tokens

    assert " ".join(unicode_tokens("It is raining heavily in London!")) == (
        "it is rain heavili in london"
    )
    assert unicode_tokens("東京は") == ("東", "京", "は")
    assert unicode_tokens("ＡＢＣ") == ("abc",)


def test_reference_is_here_when_shared_is(tmp_path: Path) -> None:
    if SHARED.is_dir():
        assert len(CASES) == 26
