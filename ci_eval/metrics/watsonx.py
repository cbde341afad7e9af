"""IBM watsonx Orchestrate's metrics, read from ibm-watsonx-orchestrate-evaluation-framework
1.5.2 (``agentops``) and checked against 1.6.9's own code (tests/score/test_watsonx_ibm_parity.py):
tool-call precision and recall, journey success and journey completion.

Tool calls are checked against the dataset's ``tool_call`` goals with IBM's argument matching
(strict / optional / ignore, ``<IGNORE>``, ``{"IGNORE": null}``, values compared as lower-cased
``str()``). Text goals need IBM's two LLM checks (keywords, semantic match), made through the
judge; without one, journey metrics on datasets with text goals are NOT_EVALUATED.
"""

from __future__ import annotations

import os
from typing import Any

from ci_eval.metrics.adk import text_of
from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

IGNORE_ENV = "RESERVED_KEYWORD_FOR_GROUND_TRUTH_ARGS"
DUMMY = "__dummy__"


def ignore_keyword() -> str:
    """IBM's "any value" placeholder: its environment variable, read when scoring (not at
    import, so a run sees the environment it was started with)."""
    return os.environ.get(IGNORE_ENV, "<IGNORE>")


def _normalise(value: Any, ignore: str) -> str:
    """IBM's ``normalize_args``: ``str()`` of the decoded JSON value, lower-cased."""
    text = str(value)
    return text if text == ignore else text.lower()


def arguments_match(
    expected: dict[str, Any] | None,
    actual: dict[str, Any],
    strategies: dict[str, str],
    ignore: str | None = None,
) -> bool:
    """``agentops.extractors.utils.argument_matching`` without its LLM/fuzzy branch.
    ``ignore``: the placeholder (default: ``ignore_keyword()``)."""
    ignore = ignore_keyword() if ignore is None else ignore
    if expected is None:
        return not actual
    if expected == {"IGNORE": None}:
        return True
    for name in expected:
        strategy = strategies.get(name, "strict")
        got, want = _normalise(actual.get(name), ignore), _normalise(expected.get(name), ignore)
        if strategy == "ignore" or want == ignore:
            continue
        if strategy == "optional":
            if name not in actual:
                continue
            if actual[name] != expected[name]:
                return False
        if name not in actual:
            return False
        if strategy == "fuzzy":
            try:
                return abs(float(got) - float(want)) <= 0.001  # IBM returns on a fuzzy field
            except ValueError:
                return got == want
        if strategy == "strict" and got != want:
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


def matched_text_goals(
    data: dict[str, Any], actual: list[Invocation], ctx: ScoreContext
) -> tuple[list[str], list[str]]:
    """(text goal names, the ones matched): IBM's keyword AND semantic LLM checks."""
    goals = [g for g in data.get("goal_details") or [] if g.get("type") == "text"]
    if not goals:
        return [], []
    if ctx.judge is None:
        raise NotApplicable(
            "text goals need IBM's LLM keyword and semantic checks: configure "
            "a judge ([judge] in ci-eval.toml)"
        )
    responses = [text_of(inv.final_response) for inv in actual if inv.final_response]
    context = data.get("starting_sentence") or ""
    matched = []
    for goal in goals:
        expected = goal.get("summary") or goal.get("response") or ""
        for response in responses:
            keywords = goal.get("keywords") or []
            keyword_ok = not keywords or ctx.judge.ask(
                ctx.judge.render(
                    "watsonx_keyword_match.j2", keywords="\n".join(keywords), response=response
                )
            ).strip().lower().startswith("true")
            semantic_ok = keyword_ok and ctx.judge.ask(
                ctx.judge.render(
                    "watsonx_semantic_match.j2", context=context, expected=expected, actual=response
                )
            ).strip().lower().startswith("true")
            if keyword_ok and semantic_ok:
                matched.append(goal["name"])
                break
    return [g["name"] for g in goals], matched


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


def _journey(
    actual: list[Invocation],
    ctx: ScoreContext,
) -> tuple[dict[str, Any], list[str], list[str], bool]:
    """IBM's journey: tool analysis, text goals (all, matched) and whether the goal DAG was
    walked in order."""
    data = _dataset(ctx)
    if not data.get("goals"):
        raise NotApplicable("a referenceless dataset (no goals)")
    analysis = tool_analysis(data, actual)
    text_goals, texts = matched_text_goals(data, actual, ctx)
    success = is_topological(data["goals"], analysis["correct_tool_calls"] + texts)
    return analysis, text_goals, texts, success


def journey_success(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    analysis, _, texts, ok = _journey(actual, ctx)
    return (1.0 if ok else 0.0), [1.0 if ok else 0.0], {"matched_text_goals": texts, **analysis}


def journey_completion(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    analysis, text_goals, texts, success = _journey(actual, ctx)
    if success:
        score = 1.0
    elif not text_goals:
        if analysis["expected_tool_calls"] == 0:
            raise NotApplicable("the dataset expects no tool calls and no text")
        score = round(len(analysis["correct_tool_calls"]) / analysis["expected_tool_calls"], 2)
    else:
        score = round(
            (len(analysis["correct_tool_calls"]) + len(texts))
            / (analysis["expected_tool_calls"] + len(text_goals)),
            2,
        )
    return score, [score], analysis


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
        "prerequisites (text goals through the judge), else 0.",
        1.0,
    ),
    (
        "journey_completion",
        journey_completion,
        "watsonx Orchestrate: 1 on journey success, else the share of goals reached.",
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
