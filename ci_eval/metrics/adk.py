"""ADK's deterministic metrics, number for number: tool trajectory, ROUGE-1 response match and
the informational efficiency metrics."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.metrics.rouge import rouge1_fmeasure
from ci_eval.model import Content, FunctionCall, Invocation
from ci_eval.model.metric_spec import MetricSpec

MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER", "ADK_RS")


def match_type(criterion: dict[str, Any]) -> str:
    """ADK's coercion: an int (0, 1, 2) or a string, case-insensitive, '-' or ' ' for '_'."""
    value = criterion.get("match_type", "EXACT")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2:
        return MATCH_TYPES[value]
    if isinstance(value, str):
        normal = value.strip().upper().replace("-", "_").replace(" ", "_")
        if normal in MATCH_TYPES:
            return normal
    raise NotApplicable(f"unknown match_type {value!r}; use EXACT, IN_ORDER or ANY_ORDER")


def _same(actual: FunctionCall, expected: FunctionCall, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def exact(actual: list[FunctionCall], expected: list[FunctionCall], ignore_args: bool) -> bool:
    return len(actual) == len(expected) and all(
        _same(a, e, ignore_args) for a, e in zip(actual, expected, strict=True)
    )


def in_order(actual: list[FunctionCall], expected: list[FunctionCall], ignore_args: bool) -> bool:
    if not expected:
        return True
    i = 0
    for call in actual:  # greedy subsequence scan, as ADK
        if _same(call, expected[i], ignore_args):
            i += 1
            if i == len(expected):
                return True
    return False


def any_order(actual: list[FunctionCall], expected: list[FunctionCall], ignore_args: bool) -> bool:
    if not expected:
        return True
    remaining = list(actual)
    for want in expected:  # each expected call takes the first equal actual call
        for i, call in enumerate(remaining):
            if _same(call, want, ignore_args):
                del remaining[i]
                break
        else:
            return False
    return True


def adk_rs_fraction(
    actual: list[FunctionCall],
    expected: list[FunctionCall],
    ignore_args: bool,
    args_equal: Callable[[Any, Any], bool] = operator.eq,
) -> float:
    """adk-rs: in-order exact (name, args) matches / max(len expected, len actual, 1).

    ``args_equal`` compares two calls' args. The ADK metric's ``ADK_RS`` match type keeps
    Python's ``==``, as ADK's metric compares Python values; adk-rs's own metric
    (``metrics.adk_rs``) passes ``serde_json::Value`` equality, as adk-rs compares."""
    matches = sum(
        1
        for a, e in zip(actual, expected, strict=False)
        if a.name == e.name and (ignore_args or args_equal(a.args, e.args))
    )
    return matches / max(len(expected), len(actual), 1)


_MATCHERS = {"EXACT": exact, "IN_ORDER": in_order, "ANY_ORDER": any_order}


def require_paired(expected: list[Invocation], actual: list[Invocation]) -> None:
    if len(actual) != len(expected):
        raise NotApplicable(f"{len(actual)} actual invocations for {len(expected)} expected")
    if not expected:
        raise NotApplicable("no invocations to compare")


def tool_trajectory(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    require_paired(expected, actual)
    kind = match_type(spec.criterion)
    ignore_args = bool(spec.criterion.get("ignore_args", False))
    scores: list[float | None] = []
    for exp, act in zip(expected, actual, strict=True):
        calls, wanted = act.tool_calls(), exp.tool_calls()
        if kind == "ADK_RS":
            scores.append(adk_rs_fraction(calls, wanted, ignore_args))
        else:
            scores.append(1.0 if _MATCHERS[kind](calls, wanted, ignore_args) else 0.0)
    return _mean(scores), scores, {"match_type": kind, "ignore_args": ignore_args}


def text_of(content: Content | None) -> str:
    """ADK's ``_get_text_from_content`` (``Content.text()``), "" for no content."""
    return content.text() if content is not None else ""


def response_match(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    require_paired(expected, actual)
    scores: list[float | None] = [
        rouge1_fmeasure(text_of(e.final_response), text_of(a.final_response))
        for e, a in zip(expected, actual, strict=True)
    ]
    return _mean(scores), scores, {}


def tool_call_count(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    """ADK's tool_call_count_v1: tool calls per invocation, averaged (never a per-case sum)."""
    if not actual:
        raise NotApplicable("no invocations")
    counts: list[float | None] = [float(len(a.tool_calls())) for a in actual]
    return _mean(counts), counts, {}


def invocation_duration(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    """ADK's invocation_duration_v1: seconds per timed turn, averaged, rounded to ms."""
    durations = [a.duration for a in actual]
    known = [d for d in durations if d is not None]
    if not known:
        raise NotApplicable("no turn was timed")
    return round(sum(known) / len(known), 3), list(durations), {}


def _mean(values: list[float | None]) -> float:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else 0.0


register(
    Metric(
        "tool_trajectory_avg_score",
        "Tool calls per invocation against the expected ones: 1 or 0 per invocation, mean over "
        "invocations. Criterion: match_type EXACT (default) | IN_ORDER | ANY_ORDER | ADK_RS "
        "(adk-rs: in-order matches / max(len), a fraction), ignore_args.",
        tool_trajectory,
        default_threshold=1.0,
    )
)
register(
    Metric(
        "response_match_score",
        "ROUGE-1 F-measure of the final response against the expected one, with ADK's "
        "Unicode-aware tokenizer and Porter stemming; mean over invocations.",
        response_match,
        default_threshold=0.8,
    )
)
register(
    Metric(
        "tool_call_count_v1",
        "Tool calls per invocation, averaged (informational).",
        tool_call_count,
        value_range="[0, ∞)",
        informational=True,
        needs_expected=False,
    )
)
register(
    Metric(
        "invocation_duration_v1",
        "Seconds per timed turn, averaged (informational).",
        invocation_duration,
        value_range="[0, ∞) s",
        informational=True,
        needs_expected=False,
    )
)
