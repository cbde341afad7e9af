"""IBM watsonx Orchestrate's metrics, read from ibm-watsonx-orchestrate-evaluation-framework
1.5.2 (``agentops``) and checked against 1.6.9's own code (tests/score/test_watsonx_ibm_parity.py):
tool-call precision and recall, journey success and journey completion, and assert_llm.

Tool calls are checked against the dataset's ``tool_call`` goals with IBM 1.6.9's argument
matching (nested arguments as dot paths, strict / optional / ignore / fuzzy, ``<IGNORE>``,
``{"IGNORE": null}``, values normalised as ``normalize_args``: numbers canonical, lists sorted,
text lower-cased; 1.5.2 compared lower-cased ``str()``). Text, interaction and ``assert_llm``
goals are decided in ``watsonx_goals``: text goals and assertions through the judge (without one,
journey metrics on datasets with them are NOT_EVALUATED), interaction goals against the
interactions the conversation records.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.metrics.watsonx_goals import (
    assertions,
    check_assertions,
    matched_interaction_goals,
    matched_text_goals,
)
from ci_eval.metrics.watsonx_messages import messages_of
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

IGNORE_ENV = "RESERVED_KEYWORD_FOR_GROUND_TRUTH_ARGS"
DUMMY = "__dummy__"


def ignore_keyword() -> str:
    """IBM's "any value" placeholder: its environment variable, read when scoring (not at
    import, so a run sees the environment it was started with)."""
    return os.environ.get(IGNORE_ENV, "<IGNORE>")


def normalize(value: Any, ignore: str) -> Any:
    """IBM 1.6.9's ``agentops.extractors.utils.normalize_args``: the placeholder kept, dicts
    and lists normalised inside (lists sorted), numbers and numeric strings as one string
    (``10.0`` and ``"10"`` → ``"10"``), anything else its lower-cased ``str()``."""
    if str(value) == ignore:
        return str(value)
    if isinstance(value, dict):
        return {str(k): normalize(v, ignore) for k, v in value.items()}
    if isinstance(value, list):
        return sorted(
            (normalize(v, ignore) for v in value), key=lambda v: json.dumps(v, sort_keys=True)
        )
    if isinstance(value, int | float):
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return str(int(number)) if number.is_integer() else str(number)
    return str(value).lower()


def as_number_or_date(actual: Any, want: Any) -> tuple[bool, bool]:
    """IBM's ``compare_as_date_or_number``: (converted, equal)."""
    try:
        return True, abs(float(actual) - float(want)) <= 0.001
    except (ValueError, TypeError):
        pass
    from dateutil import parser  # IBM's date parser; loaded only for fuzzy arguments

    try:
        return True, parser.parse(actual) == parser.parse(want)
    except (ValueError, TypeError, OverflowError):
        return False, False


_NOT_WORD = re.compile(r"(?ui)\W")


def fuzzy_text_match(actual: Any, want: Any) -> bool:
    """A ``fuzzy`` text value: IBM compares its LLM client's embeddings (cosine >= 0.8), which
    ci-eval has not; this is IBM's fallback without a client, fuzzywuzzy's WRatio > 0.8 on a
    0-100 scale, i.e. the processed (non-word characters blanked, lower-cased) strings share a
    character."""
    a = set(_NOT_WORD.sub(" ", str(actual)).lower().strip()) - {" "}
    b = set(_NOT_WORD.sub(" ", str(want)).lower().strip()) - {" "}
    return bool(a & b)


def _flatten(value: dict[str, Any], parent: str = "") -> dict[str, Any]:
    """``agentops.utils.dict_helpers.flatten_dict``: nested dicts to dot paths."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        path = f"{parent}.{key}" if parent else key
        if isinstance(item, dict):
            out.update(_flatten(item, path))
        else:
            out[path] = item
    return out


def _strategy(path: str, strategies: dict[str, str]) -> str:
    """``resolve_strategy``: the path's own, else its nearest parent's, else strict."""
    if path in strategies:
        return strategies[path]
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:i]) in strategies:
            return strategies[".".join(parts[:i])]
    return "strict"


def arguments_match(
    expected: dict[str, Any] | None,
    actual: dict[str, Any] | None,
    strategies: dict[str, str],
    ignore: str | None = None,
) -> bool:
    """IBM 1.6.9's ``agentops.extractors.utils.argument_matching``; ``fuzzy`` text by
    ``fuzzy_text_match``. ``ignore``: the placeholder (default: ``ignore_keyword()``)."""
    ignore = ignore_keyword() if ignore is None else ignore
    if expected is None:
        return not actual
    if expected == {"IGNORE": None}:
        return True
    flat_actual = _flatten(actual or {})
    for path, want_raw in _flatten(expected).items():
        strategy = _strategy(path, strategies)
        got, want = normalize(flat_actual.get(path), ignore), normalize(want_raw, ignore)
        if strategy == "ignore" or want == ignore:
            continue
        if strategy == "optional":
            if path in flat_actual and flat_actual[path] != want_raw:
                return False
            continue
        if path not in flat_actual:
            return False
        if strategy == "fuzzy":
            converted, equal = as_number_or_date(got, want)
            if not (equal if converted else fuzzy_text_match(got, want)):
                return False
        elif strategy == "strict" and got != want:
            return False
    return True


def _dataset(ctx: ScoreContext) -> dict[str, Any]:
    data = ctx.extensions.get("watsonx")
    if not isinstance(data, dict):
        raise NotApplicable("not a watsonx Orchestrate dataset (no goals)")
    return data


def _tool_goals(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["name"]: g for g in data.get("goal_details") or [] if g.get("type") == "tool_call"}


def tool_analysis(data: dict[str, Any], actual: list[Invocation]) -> dict[str, Any]:
    """IBM's ExpectedToolExtractor + ToolCalling over every tool call the agent made."""
    goals = _tool_goals(data)
    calls = [c for inv in actual for c in inv.tool_calls()]
    correct: dict[str, None] = {}  # goal names, in the order first matched
    relevant = incorrect = 0
    ignore = ignore_keyword()
    for call in calls:
        name = (call.name or "").strip()
        candidates = [g for g in goals.values() if (g.get("tool_name") or "").strip() == name]
        if not candidates:
            continue
        relevant += 1
        # IBM 1.6.9 credits each goal once ("consume-once"): a later call can only reach a goal
        # not yet claimed, so two goals on one tool need two calls
        for goal in candidates:
            if goal["name"] in correct:
                continue
            strategies = goal.get("arg_matching") or {}
            if arguments_match(goal.get("args"), call.args or {}, strategies, ignore):
                correct[goal["name"]] = None
                break
        else:
            incorrect += 1
    called = {(c.name or "").strip() for c in calls}
    return {
        "total_tool_calls": len(calls),
        "expected_tool_calls": len(goals),
        "correct_tool_calls": list(correct),
        "relevant_tool_calls": relevant,
        "tool_calls_with_incorrect_parameter": incorrect,
        "missed_tool_calls": sorted({g.get("tool_name") for g in goals.values()} - called),
    }


def tool_call_recall(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    analysis = tool_analysis(_dataset(ctx), actual)
    if analysis["expected_tool_calls"] == 0:
        raise NotApplicable("the dataset expects no tool calls")
    score = round(len(analysis["correct_tool_calls"]) / analysis["expected_tool_calls"], 2)
    return score, [score], analysis


def tool_call_precision(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    analysis = tool_analysis(_dataset(ctx), actual)
    if analysis["expected_tool_calls"] == 0:
        raise NotApplicable("the dataset expects no tool calls")
    total = analysis["total_tool_calls"]
    score = round(len(analysis["correct_tool_calls"]) / total, 2) if total else 0.0
    return score, [score], analysis


def is_topological(goals: dict[str, list[str]], ordering: list[str]) -> bool:
    """IBM's JourneySuccessMetric.is_topological_sort in strict mode (last index counts)."""
    if not ordering:
        return False
    graph = {k: list(v) for k, v in goals.items()}
    position = {node: [i] for i, node in enumerate(ordering)}
    seen, parents = set(), set()
    for node, children in graph.items():
        seen.add(node)
        if children:
            parents.add(node)
            seen.update(children)
    next_index = max(i for values in position.values() for i in values) + 1
    for terminal in seen - parents:
        graph[terminal] = [DUMMY]
        graph[DUMMY] = []
        position[DUMMY] = [next_index]
        next_index += 1
    for node, children in graph.items():
        for child in children:
            if node not in position or child not in position:
                return False
            if all(i >= max(position[child]) for i in position[node]):
                return False
    return True


def _journey(actual: list[Invocation], ctx: ScoreContext) -> dict[str, Any]:
    """IBM's journey (``JourneySuccessMetric``, ``JourneyCompletion``): the tool analysis, the
    text and interaction goals (all, matched), the assertions' results and whether the goal DAG
    was walked in order (tool calls, then interactions, then texts) with every assertion
    passed."""
    data = _dataset(ctx)
    if not data.get("goals") and not data.get("goal_details"):
        raise NotApplicable("a referenceless dataset (no goals)")
    messages = messages_of(actual)
    analysis = tool_analysis(data, actual)
    interactions, matched_interactions = matched_interaction_goals(data, actual, messages)
    texts, matched_texts = matched_text_goals(data, messages, ctx.judge)
    results = check_assertions(data, messages, ctx.judge)
    ordering = analysis["correct_tool_calls"] + matched_interactions + matched_texts
    # an empty DAG (assertions only) is no journey walked: IBM's is_topological_sort says False
    walked = is_topological(data.get("goals") or {}, ordering)
    return {
        **analysis,
        "text_goals": texts,
        "matched_text_goals": matched_texts,
        "interaction_goals": interactions,
        "matched_interaction_goals": matched_interactions,
        "assertion_results": results,
        "success": walked and all(r["passed"] for r in results),
    }


def journey_success(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    journey = _journey(actual, ctx)
    score = 1.0 if journey.pop("success") else 0.0
    return score, [score], journey


def journey_completion(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    """IBM 1.6.9's ``JourneyCompletion``: tool-call recall when the dataset has only tool goals,
    else every goal reached (tool calls, texts, interactions, assertions passed) / every goal,
    rounded to 2 places."""
    journey = _journey(actual, ctx)
    journey.pop("success")
    results = journey["assertion_results"]
    if not journey["text_goals"] and not journey["interaction_goals"] and not results:
        if journey["expected_tool_calls"] == 0:
            raise NotApplicable("the dataset expects no tool calls and no text")
        score = round(len(journey["correct_tool_calls"]) / journey["expected_tool_calls"], 2)
        return score, [score], journey
    reached = (
        len(journey["correct_tool_calls"])
        + len(journey["matched_text_goals"])
        + len(journey["matched_interaction_goals"])
        + sum(1 for r in results if r["passed"])
    )
    goals = (
        journey["expected_tool_calls"]
        + len(journey["text_goals"])
        + len(journey["interaction_goals"])
        + len(results)
    )
    score = round(reached / goals, 2) if goals else 1.0
    return score, [score], journey


def assert_llm(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    """IBM's ``AssertLLMMetric`` ("Assert LLM"): assertions passed / assertions, round 2."""
    data = _dataset(ctx)
    if not assertions(data):
        raise NotApplicable("the dataset has no assert_llm goals")
    results = check_assertions(data, messages_of(actual), ctx.judge)
    passed = sum(1 for r in results if r["passed"])
    score = round(passed / len(results), 2)
    details = {
        "passed_assertions": passed,
        "total_assertions": len(results),
        "assertion_results": results,
    }
    return score, [score], details


for _name, _scorer, _text, _threshold in (
    (
        "tool_call_recall",
        tool_call_recall,
        "watsonx Orchestrate: expected tool-call goals matched (name and arguments) / expected, "
        "rounded to 2 places.",
        None,
    ),
    (
        "tool_call_precision",
        tool_call_precision,
        "watsonx Orchestrate: expected goals matched / all tool calls made, rounded to 2 places.",
        None,
    ),
    (
        "journey_success",
        journey_success,
        "watsonx Orchestrate: 1 when every goal of the dependency graph was reached after its "
        "prerequisites (text goals through the judge) and every assert_llm check passed, else 0.",
        1.0,
    ),
    (
        "journey_completion",
        journey_completion,
        "watsonx Orchestrate: the share of goals reached (tool calls, texts, interactions, "
        "assert_llm checks passed), rounded to 2 places.",
        None,
    ),
    (
        "assert_llm",
        assert_llm,
        "watsonx Orchestrate: the dataset's assert_llm checks the judge found true / all of "
        "them, rounded to 2 places.",
        None,
    ),
):
    register(
        Metric(
            _name,
            _text,
            _scorer,
            default_threshold=_threshold,
            origin="watsonx Orchestrate",
            needs_expected=False,  # the dataset's goals, not an expected conversation
        )
    )
