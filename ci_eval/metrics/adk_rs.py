"""adk-rs's metrics as its eval runner scores them, so adk-rs users reproduce their numbers.

Read from skundu42/adk-rs ``src/eval/metrics.rs`` and ``src/eval/runner.rs`` (the single-crate
layout; ``adk-rs-eval/src/{metrics,runner}.rs`` at 433b5668 before it) and the Evaluation page
``docs/content/eval.ts`` (f2a9f2fb):

- each evaluator scores one invocation pair; an invocation passes when
  ``score + 1e-9 >= threshold``;
- a metric's reported score is the mean over the case's invocations, and its status the AND of
  the per-invocation statuses: one failing invocation fails it, whatever the mean;
- ``tool_trajectory_avg_score``: in-order exact ``(name, args)`` matches over
  ``max(len expected, len actual, 1)``; default threshold 1.0 (``TrajectoryMatch::default``);
  args are ``serde_json::Value`` (``ToolUse`` in ``set.rs``) compared with ``==``, so ``1`` and
  ``1.0`` differ, as do ``true`` and ``1`` (:func:`serde_json_equal`);
- ``final_response_match_v1``: the fraction of the expected response's lower-cased whitespace
  tokens found as whole tokens in the actual response (1.0 when nothing is expected); default
  threshold 0.8 (``ResponseMatch::default``; the adk-rs CLI's ``eval`` passes 0.5).

Registered as adk-rs's: an adk-rs set is scored with these (``score.scorer.metrics_for``); the
ADK names keep ADK's meaning elsewhere.
"""

from __future__ import annotations

from typing import Any

from ci_eval.metrics.adk import adk_rs_fraction, require_paired, text_of
from ci_eval.metrics.base import Metric, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

# adk-rs compares with a 1e-9 slack so that a score like 0.7999999999 from float division
# still meets a threshold of 0.8
_SLACK = 1e-9


def invocation_passes(score: float, threshold: float) -> bool:
    """adk-rs's per-invocation verdict (``score + 1e-9 >= threshold``)."""
    return score + _SLACK >= threshold


def unigram_recall(expected: str, actual: str) -> float:
    """Fraction of the expected lower-cased whitespace tokens present as whole tokens in the
    actual; 1.0 when nothing is expected (adk-rs ``final_response_match_v1``). A repeated
    expected token counts each time, as adk-rs loops over every expected token."""
    wanted = expected.lower().split()
    if not wanted:
        return 1.0
    present = set(actual.lower().split())
    return sum(1 for token in wanted if token in present) / len(wanted)


# serde_json reads an integer literal as u64 when it is >= 0 and as i64 when it is negative; one
# outside both ranges it reads as f64 (serde-rs/json src/de.rs ``parse_integer``)
_INT_RANGE = range(-(2**63), 2**64)


def _number(value: int | float) -> tuple[str, int | float]:
    """A JSON number as serde_json holds it: an integer variant or a float (``Number``'s ``N``)."""
    if isinstance(value, int) and value in _INT_RANGE:
        return "int", value
    try:
        return "float", float(value)
    except OverflowError:
        # past f64's range serde_json refuses the file (NumberOutOfRange): adk-rs reads no such
        # args, so they are only ever equal to the same integer
        return "out of range", value


def serde_json_equal(left: Any, right: Any) -> bool:
    """``serde_json::Value``'s ``==`` on two values as Python's json loads them.

    serde_json's ``Number`` compares its variants only with themselves (serde-rs/json
    ``src/number.rs``, ``impl PartialEq for N``): ``1`` (PosInt) is not ``1.0`` (Float), though
    Python's ``1 == 1.0``; and a Bool is never a Number, though Python's ``True == 1``. Objects
    are equal by key whatever their order (``Map``'s ``PartialEq``), arrays element by element
    in order. Python's json keeps the distinction: ``1`` loads as int, ``1.0`` as float."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) or isinstance(right, int | float):
        return (
            isinstance(left, int | float)
            and isinstance(right, int | float)
            and _number(left) == _number(right)
        )
    if isinstance(left, dict) or isinstance(right, dict):
        return (
            isinstance(left, dict)
            and isinstance(right, dict)
            and left.keys() == right.keys()
            and all(serde_json_equal(value, right[key]) for key, value in left.items())
        )
    if isinstance(left, list) or isinstance(right, list):
        return (
            isinstance(left, list)
            and isinstance(right, list)
            and len(left) == len(right)
            and all(serde_json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    # null and strings: Python's == is serde_json's
    return bool(left == right)


def _mean(scores: list[float | None]) -> float:
    return sum(s or 0.0 for s in scores) / len(scores)


def final_response_match_v1(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    require_paired(expected, actual)
    # an invocation without final_response reads as "" (adk-rs ``response_text``)
    scores: list[float | None] = [
        unigram_recall(text_of(e.final_response), text_of(a.final_response))
        for e, a in zip(expected, actual, strict=True)
    ]
    return _mean(scores), scores, {}


def tool_trajectory(
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    """adk-rs's ``TrajectoryMatch``: position-wise matches over the longer list, args compared
    as ``serde_json::Value``s; it has no match types or ``ignore_args``."""
    require_paired(expected, actual)
    scores: list[float | None] = [
        adk_rs_fraction(
            a.tool_calls(), e.tool_calls(), ignore_args=False, args_equal=serde_json_equal
        )
        for e, a in zip(expected, actual, strict=True)
    ]
    return _mean(scores), scores, {}


register(
    Metric(
        "final_response_match_v1",
        "adk-rs: fraction of the expected response's lower-cased words present as whole words "
        "in the actual one (1.0 when nothing is expected); mean over invocations, FAILED when "
        "any invocation is below the threshold.",
        final_response_match_v1,
        default_threshold=0.8,
        origin="adk-rs",
        invocation_passes=invocation_passes,
    )
)
register(
    Metric(
        "tool_trajectory_avg_score",
        "adk-rs: in-order exact (name, args) matches / max(len expected, len actual, 1) per "
        "invocation; mean over invocations, FAILED when any invocation is below the threshold.",
        tool_trajectory,
        default_threshold=1.0,
        origin="adk-rs",
        invocation_passes=invocation_passes,
    ),
    dialect="adk-rs",
)
