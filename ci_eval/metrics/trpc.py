"""trpc-agent-go's deterministic evaluators, rule for rule (evaluation/metric/criterion in
trpc-agent-go): ``tool_trajectory_avg_score`` with its tool strategies and
``final_response_avg_score`` with text / JSON / ROUGE / XML criteria. Per invocation 1 or 0,
mean over invocations; the reason for a 0 is kept. A criterion naming a ``compareName`` is
trpc-agent-go's error before any case is scored: the metrics file's (ci_eval/load/sidecars.py)
at load, and the metric's ERROR here for a criterion that came another way."""

from __future__ import annotations

from typing import Any

from ci_eval.metrics.base import Metric, MetricFailure, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.metrics.trpc_criteria import (
    Mismatch,
    json_match,
    rouge_match,
    shown,
    text_match,
    xml_match,
)
from ci_eval.model import IntermediateData, Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.trpc_registry import unresolvable_names, unresolvable_reason

# --- tool trajectory ---------------------------------------------------------------------

_DEFAULT_STRATEGY: dict[str, Any] = {"name": {}, "arguments": {}, "result": {}}


def trpc_tools(inv: Invocation) -> list[dict[str, Any]]:
    """An invocation's tool calls as trpc sees them: {id, name, arguments, result}."""
    calls = inv.tool_calls()
    data = inv.intermediate_data
    responses = list(data.tool_responses) if isinstance(data, IntermediateData) else []
    wrapped = set(inv.extensions.get("trpc", {}).get("wrappedResults", []))
    tools = []
    for n, call in enumerate(calls):
        match = next((r for r in responses if r.id is not None and r.id == call.id), None)
        if match is None and call.id is None and n < len(responses):
            match = responses[n]
        result = match.response if match else None
        if n in wrapped and isinstance(result, dict):
            result = result.get("result")
        tools.append(
            {"id": call.id, "name": call.name or "", "arguments": call.args, "result": result}
        )
    return tools


def _strategy(
    crit: dict[str, Any],
    actual: dict[str, Any],
    expected: dict[str, Any],
) -> dict[str, Any]:
    per_tool = crit.get("toolStrategy") or {}
    for name in (actual["name"], expected["name"]):
        if name in per_tool:
            return per_tool[name] or {}
    return crit.get("defaultStrategy") or _DEFAULT_STRATEGY


def _tool_matches(crit: dict[str, Any], actual: dict[str, Any], expected: dict[str, Any]) -> None:
    strategy = _strategy(crit, actual, expected)
    if strategy.get("name") is not None:
        text_match(actual["name"], expected["name"], strategy["name"], "name")
    if strategy.get("arguments") is not None:
        json_match(actual["arguments"], expected["arguments"], strategy["arguments"], "arguments")
    key = "result" if "result" in strategy else "response"  # gen 2 called it "response"
    if strategy.get(key) is not None:
        try:
            json_match(actual["result"], expected["result"], strategy[key], key)
        except Mismatch as exc:
            if actual["result"] is None and expected["result"] is not None:
                raise Mismatch(f"{exc} (the agent sent no tool result)") from None
            raise


def _call(k: int, tool: dict[str, Any]) -> str:
    """``call 2 get_weather``: an expected call by its place in the turn and its name."""
    return f"call {k + 1} {tool['name']}".rstrip()


def _names_match(crit: dict[str, Any], actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    rule = _strategy(crit, actual, expected).get("name")
    try:
        text_match(actual["name"], expected["name"], rule, "name")
    except Mismatch:
        return False
    return True


def _why_unmatched(
    crit: dict[str, Any], candidates: list[tuple[int, dict[str, Any]]], want: dict[str, Any], k: int
) -> str:
    """Why the expected call ``k`` matched none of ``candidates`` (the agent's calls with their
    places): the first field that differs from the call that comes closest — the one in its
    place, else the first of its name — else that no call has its name."""
    if not candidates:
        return "no call of the agent's left to match it in order"
    named = [(j, got) for j, got in candidates if _names_match(crit, got, want)]
    pool = named or candidates
    j, got = next(((j, got) for j, got in pool if j == k), pool[0])
    if not named and len(candidates) > 1:
        called = ", ".join(got["name"] or "(no name)" for _, got in candidates)
        return f"name differs: expected {shown(want['name'])}, got only {called}"
    try:
        _tool_matches(crit, got, want)
    except Mismatch as exc:
        return str(exc) + ("" if j == k else f" (against the agent's call {j + 1})")
    return "no call of the agent's matched it"  # not reached: a match would have been taken


def _full_matching(edges: list[list[int]], right: int) -> list[int]:
    """Kuhn's augmenting paths: the expected (left) indexes that cannot all be matched."""
    owner = [-1] * right

    def augment(left: int, seen: list[bool]) -> bool:
        for r in edges[left]:
            if not seen[r]:
                seen[r] = True
                if owner[r] == -1 or augment(owner[r], seen):
                    owner[r] = left
                    return True
        return False

    return [left for left in range(len(edges)) if not augment(left, [False] * right)]


def trajectory_match(
    crit: dict[str, Any], actual: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> None:
    if not actual and not expected:
        return
    gen2 = "orderInsensitive" in crit
    called = f" ({', '.join(t['name'] or '(no name)' for t in actual)})" if actual else ""
    if crit.get("subsetMatching"):
        if len(actual) < len(expected):
            raise Mismatch(
                f"number of tool calls differs: expected at least {len(expected)}, "
                f"got {len(actual)}{called}"
            )
    elif len(actual) != len(expected):
        raise Mismatch(
            f"number of tool calls differs: expected {len(expected)}, got {len(actual)}{called}"
        )
    ordered = (
        not crit.get("orderInsensitive", False) if gen2 else bool(crit.get("orderSensitive", False))
    )
    if ordered:
        i = -1
        for k, want in enumerate(expected):
            start, found = i + 1, False
            while i + 1 < len(actual):
                i += 1
                try:
                    _tool_matches(crit, actual[i], want)
                    found = True
                    break
                except Mismatch:
                    pass
            if not found:
                left = list(enumerate(actual))[start:]
                raise Mismatch(f"{_call(k, want)}: {_why_unmatched(crit, left, want, k)}")
        return
    edges = []
    for want in expected:
        row = []
        for j, got in enumerate(actual):
            try:
                _tool_matches(crit, got, want)
                row.append(j)
            except Mismatch:
                pass
        edges.append(row)
    unmatched = _full_matching(edges, len(actual))
    if unmatched:
        why = []
        for k in unmatched:
            if edges[k]:
                taken = ", ".join(str(j + 1) for j in edges[k])
                why.append(
                    f"{_call(k, expected[k])}: the agent's calls that match it ({taken}) "
                    "are matched to other expected calls"
                )
            else:
                reason = _why_unmatched(crit, list(enumerate(actual)), expected[k], k)
                why.append(f"{_call(k, expected[k])}: {reason}")
        raise Mismatch("; ".join(why))


def _resolvable(spec: MetricSpec) -> None:
    """registry.Resolve: a compareName is trpc's error before any case is scored."""
    for loc, what in unresolvable_names(spec.criterion):
        where = ".".join(str(k) for k in ["criterion", *loc])
        raise MetricFailure(f"{where}: {unresolvable_reason(what)}")


def _per_invocation(
    expected: list[Invocation], actual: list[Invocation], check: Any
) -> tuple[float, list[float | None], dict[str, Any]]:
    if not expected:
        raise NotApplicable("no invocations")
    if len(actual) != len(expected):
        raise NotApplicable(f"{len(actual)} actual invocations for {len(expected)} expected")
    scores: list[float | None] = []
    reasons: list[str | None] = []
    for exp, act in zip(expected, actual, strict=True):
        try:
            check(act, exp)
            scores.append(1.0)
            reasons.append(None)
        except Mismatch as exc:
            scores.append(0.0)
            reasons.append(str(exc))
        except RecursionError:
            raise MetricFailure(
                "a value is nested deeper than ci-eval can compare (Python's recursion limit; "
                "trpc-agent-go reads JSON up to 10,000 levels deep)"
            ) from None
    details: dict[str, Any] = {}
    if any(reasons):
        details["reasons"] = reasons
        details["reason"] = _turns(reasons)
    return sum(s or 0 for s in scores) / len(scores), scores, details


TURNS_SAID = 3  # failing turns one reason names; the results file's details have every one


def _turns(reasons: list[str | None]) -> str:
    """``turn 1, call 2 get_weather: result differs: …; turn 3: …``: the failing turns, each
    with why (the metric's reason, shown beside its score in every report)."""
    failing = [(n, r) for n, r in enumerate(reasons, 1) if r]
    said = [
        f"turn {n}, {r}" if r.startswith("call ") else f"turn {n}: {r}"
        for n, r in failing[:TURNS_SAID]
    ]
    more = len(failing) - TURNS_SAID
    return "; ".join(said) + (f"; {more} more failing turns" if more > 0 else "")


def tool_trajectory(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    _resolvable(spec)
    crit = spec.criterion.get("toolTrajectory")
    if crit is None:
        crit = {}  # generation 1 files carry no criterion: trpc's built-in default strategy
    return _per_invocation(
        expected, actual, lambda a, e: trajectory_match(crit, trpc_tools(a), trpc_tools(e))
    )


# --- final response ----------------------------------------------------------------------


def _content(inv: Invocation) -> str | None:
    if inv.final_response is None:
        return None
    return inv.final_response.text()


_RAW = ("the agent's final response", "the expected final response")


def final_response_match(
    crit: dict[str, Any], actual: Invocation, expected: Invocation, notes: set[str]
) -> None:
    """FinalResponseCriterion.Match (criterion/finalresponse/finalresponse.go): every criterion
    configured is checked, JSON, text, ROUGE, then XML, and every one that fails is said."""
    if not any(crit.get(k) is not None for k in ("text", "json", "rouge", "xml")):
        raise Mismatch("final response criterion must configure text, json, rouge, or xml")
    got, want = _content(actual), _content(expected)
    if got is None and want is None:
        return
    if got is None:
        raise Mismatch(
            f"final response differs: expected {shown(want)}, got nothing "
            "(the agent sent no final response)"
        )
    if want is None:
        # reference-free checks (a length bound with matchStrategy "skip") run against the
        # actual alone: trpc-agent-go's recorded caseaggregation results score them so
        want = ""
    problems = []
    checks = (
        ("json", lambda c: json_match(got, want, c, "final response json", raw=_RAW)),
        ("text", lambda c: text_match(got, want, c, "final response text")),
        ("rouge", lambda c: rouge_match(got, want, c, notes, "final response rouge")),
        ("xml", lambda c: xml_match(got, c, "final response xml")),
    )
    for key, check in checks:
        if crit.get(key) is not None:
            try:
                check(crit[key])
            except Mismatch as exc:
                problems.append(str(exc))
    if problems:
        raise Mismatch("; ".join(problems))


def final_response(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    _resolvable(spec)
    crit = spec.criterion.get("finalResponse")
    if crit is None:
        raise NotApplicable("final response criterion not configured")
    notes: set[str] = set()
    score, scores, details = _per_invocation(
        expected, actual, lambda a, e: final_response_match(crit, a, e, notes)
    )
    if notes:
        details["notes"] = sorted(notes)
    return score, scores, details


register(
    Metric(
        "tool_trajectory_avg_score",
        "trpc-agent-go: tool calls matched by name, arguments and result under the configured "
        "strategies (exact / contains / regex / skip, numberTolerance, ignoreTree / onlyTree), "
        "ordered or by bipartite matching, optionally as a subset; 1 or 0 per invocation.",
        tool_trajectory,
        default_threshold=1.0,
        origin="trpc-agent-go",
    ),
    dialect="trpc",
)
register(
    Metric(
        "final_response_avg_score",
        "trpc-agent-go: the final response against the expected one by text, JSON (with valid "
        "and schema), ROUGE and/or XML criteria (all configured must hold); 1 or 0 per "
        "invocation.",
        final_response,
        default_threshold=1.0,
        origin="trpc-agent-go",
    ),
    dialect="trpc",
)
