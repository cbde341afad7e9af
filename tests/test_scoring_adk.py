"""ADK parity: ci-eval's trajectory and ROUGE scores equal google-adk 2.13's own evaluators.

Two checks: ADK's recorded answers for hand-made edge cases (../shared/adk-reference), and a
differential test against ADK's TrajectoryEvaluator and ResponseEvaluator on 2,400 generated
(expected, actual) pairs per configuration — Unicode and CJK text, nested and reordered args,
int/float, None vs {}, empty lists, duplicates, every match type, with and without ignore_args.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ci_eval.criteria import MetricSpec
from ci_eval.metrics.adk import response_match, tool_trajectory
from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from tests.conftest import SHARED

pytest.importorskip("google.adk.evaluation")
from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import (
    EvalMetric,
    ToolTrajectoryCriterion,
)
from google.adk.evaluation.response_evaluator import ResponseEvaluator
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

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

WORDS = [
    "the",
    "weather",
    "in",
    "Paris",
    "is",
    "sunny",
    "raining",
    "heavily",
    "London",
    "degrees",
    "22",
    "3.5",
    "don't",
    "Café",
    "naïve",
    "Straße",
    "ＡＢＣ",
    "ﬁle",
    "东京",
    "東京は晴れです",
    "서울",
    "สวัสดีครับ",
    "ກິນເຂົ້າ",
    "မင်္ဂလာပါ",
    "ខ្ញុំ",
    "Ünïcödé",
    "emoji😀",
    "—",
    "e\u0301",
    "running",
    "runs",
    "ran",
    "RUNNING",
    "it's",
    "U.S.A.",
    "λόγος",
    "Москва",
    "١٢٣",
    "x²",
    "hello-world",
    "",
    "!!!",
    "\n",
    "\t",
]
KEYS = ["city", "units", "days", "q", "filter", "id"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.randrange(-3, 30)
    if kind == 1:
        return float(rng.randrange(-3, 30))  # 1 == 1.0 for ADK
    if kind == 2:
        return rng.choice(["Paris", "paris", "PARIS", "東京", "", "metric"])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return rng.random()
    if kind == 5:
        return rng.choice(["a", "b"])
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _args(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.08:
        return None
    return {rng.choice(KEYS): _value(rng) for _ in range(rng.randrange(4))}


def _reordered(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _reordered(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_reordered(v, rng) for v in value]
    return value


def _calls(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {"name": rng.choice(["A", "B", "get_weather", "Get_Weather"]), "args": _args(rng)}
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4]))
    ]


def _mutate_calls(calls: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    out = [{"name": c["name"], "args": _reordered(c["args"], rng)} for c in calls]
    for _ in range(rng.randrange(3)):
        op = rng.randrange(8)
        if op == 0 and out:
            out.pop(rng.randrange(len(out)))
        elif op == 1:
            extra = {"name": rng.choice(["A", "B", "get_weather"]), "args": _args(rng)}
            out.insert(rng.randrange(len(out) + 1), extra)
        elif op == 2 and len(out) > 1:
            rng.shuffle(out)
        elif op == 3 and out:
            out.append(dict(rng.choice(out)))  # a duplicate
        elif op == 4 and out:
            target = rng.choice(out)
            target["args"] = _args(rng)
        elif op == 5 and out:
            target = rng.choice(out)
            target["name"] = target["name"].lower()
        elif op == 6 and out:
            target = rng.choice(out)
            if target["args"] is None:
                target["args"] = {}
            elif target["args"] == {}:
                target["args"] = None
    return out


def _text(rng: random.Random) -> str | None:
    if rng.random() < 0.05:
        return None
    words = [rng.choice(WORDS) for _ in range(rng.randrange(12))]
    return rng.choice([" ", " ", "", ", "]).join(words)


def _mutate_text(text: str | None, rng: random.Random) -> str | None:
    if text is None or rng.random() < 0.1:
        return _text(rng)
    words = text.split(" ")
    for _ in range(rng.randrange(4)):
        op = rng.randrange(5)
        if op == 0 and words:
            words.pop(rng.randrange(len(words)))
        elif op == 1:
            words.insert(rng.randrange(len(words) + 1), rng.choice(WORDS))
        elif op == 2:
            rng.shuffle(words)
        elif op == 3 and words:
            i = rng.randrange(len(words))
            words[i] = words[i].upper()
    return " ".join(words)


def _invocation(
    calls: list[dict[str, Any]],
    text: str | None,
    rng: random.Random,
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts = [{"text": text}]
        if rng.random() < 0.1:  # more parts, and thoughts count as text for ADK
            parts.append({"text": _text(rng) or "x", "thought": rng.random() < 0.5})
    inv: dict[str, Any] = {"user_content": {"role": "user", "parts": [{"text": "q"}]}}
    if text is not None or rng.random() < 0.5:
        inv["final_response"] = {"role": "model", "parts": parts}
    if calls or rng.random() < 0.7:
        if rng.random() < 0.2:  # the form real runs record
            inv["intermediate_data"] = {
                "invocation_events": [
                    {
                        "author": "agent",
                        "content": {
                            "role": "model",
                            "parts": [{"function_call": c} for c in calls],
                        },
                    }
                ]
                if calls
                else []
            }
        else:
            inv["intermediate_data"] = {"tool_uses": calls}
    return inv


def _pairs(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    expected, actual = [], []
    for _ in range(PAIRS):
        calls, text = _calls(rng), _text(rng)
        expected.append(_invocation(calls, text, rng))
        actual.append(
            _invocation(
                _mutate_calls(calls, rng) if rng.random() < 0.85 else _calls(rng),
                _mutate_text(text, rng),
                rng,
            )
        )
    return expected, actual


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    expected, actual = _pairs(20261122)
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
