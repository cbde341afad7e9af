"""watsonx Orchestrate's Agent Routing F1 and Tool Parameter F1, ci-eval's own code after
ibm-watsonx-orchestrate-evaluation-framework 1.6.9 (``agentops``), checked against it by
tests/score/test_watsonx_ibm_parity_routing.py.

**agent_routing_f1** — ``agentops/metrics/orchestrate_agent_routing_accuracy.py``
(``OrchestrateAgentRoutingAccuracy``, eval name ``orchestrate_agent_routing_accuracy``, shown as
"Agent Routing F1"; older outputs call it ``agent_routing_accuracy``). A tool call whose name,
less the ``chat_with_collaborator_`` prefix, is an agent's is a routing call. Expected agents:
those owning a ``tool_call`` goal's tool, plus goals whose ``tool_name`` is itself an agent (the
explicitly labelled ones). tp = called agents expected, fp = called agents not expected, fn =
labelled agents never called; F1 = round(2tp / (2tp + fn + fp), 2), and 1 when no routing call
was made. IBM reads the agents and their tools from the Orchestrate server
(``agentops/resource_map.py``); ci-eval reads them from the metric's ``agents`` option: a list
of agent specs (``name``, ``tools``, ``collaborators``) or the path of an agent spec JSON file
(one agent or a list; IBM's YAML specs converted to JSON) or of a folder of them, relative to
the working directory.

**tool_parameter_f1** — ``agentops/metrics/tool_parameter_f1.py`` (``ToolParameterF1``). Each
tool call is compared with every ``tool_call`` goal of its tool; a goal keeps its latest call's
parameter F1 = 2tp / (2tp + fp + fn) (tp: checked parameters whose normalised values match, fp:
actual parameters the goal does not name, fn: checked parameters missing or wrong; ``ignore``
and ``<IGNORE>`` parameters unchecked, ``optional`` ones checked only when present), rounded to 4
places. The score is the mean of the goals' F1 (rounded to 4), NaN ones left out; 0 when no call
reached a goal. ``fuzzy`` parameters compare as numbers (±0.001) or dates (python-dateutil) as
IBM's do; other text IBM compares by its LLM client's embeddings (cosine >= 0.8; 1.6.9 raises
without a client), which ci-eval has not: it approximates them with IBM's dormant fallback,
fuzzywuzzy's WRatio > 0.8 on a 0-100 scale, i.e. the processed strings share a character.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.metrics.registry import register
from ci_eval.metrics.watsonx import (
    as_number_or_date,
    fuzzy_text_match,
    ignore_keyword,
    normalize,
)
from ci_eval.metrics.watsonx_messages import messages_of
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

ROUTING_PREFIX = "chat_with_collaborator_"  # agentops.type.GPTOSS_ROUTING_AGENT_NAME_PREFIX
NO_AGENTS = (
    "agent routing needs the agents and their tools (IBM reads them from the Orchestrate "
    'server): give the metric an "agents" option, a list of agent specs or the path of '
    "agent spec files"
)


def _dataset(ctx: ScoreContext) -> dict[str, Any]:
    data = ctx.extensions.get("watsonx")
    if not isinstance(data, dict):
        raise NotApplicable("not a watsonx Orchestrate dataset (no goals)")
    return data


def _tool_goals(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [g for g in data.get("goal_details") or [] if g.get("type") == "tool_call"]


# --- agents ---------------------------------------------------------------------------------


def _read_specs(path: Path) -> list[dict[str, Any]]:
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    specs: list[dict[str, Any]] = []
    for file in files:
        value = json.loads(file.read_text(encoding="utf-8"))
        specs.extend(v for v in (value if isinstance(value, list) else [value]) if v)
    return specs


@lru_cache(maxsize=32)
def _specs_at(path: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    try:
        specs = _read_specs(Path(path))
    except (OSError, ValueError) as exc:
        raise NotApplicable(f"agents {path!r}: cannot read ({exc})") from None
    return tuple(
        (str(s["name"]), tuple(str(t) for t in s.get("tools") or []))
        for s in specs
        if isinstance(s, dict) and s.get("name")
    )


def agents_of(spec: MetricSpec) -> dict[str, tuple[str, ...]]:
    """Agent name → its tool names, from the metric's ``agents`` option."""
    given = spec.criterion.get("agents")
    if isinstance(given, str):
        return dict(_specs_at(given))
    if isinstance(given, list):
        return {
            str(a["name"]): tuple(str(t) for t in a.get("tools") or [])
            for a in given
            if isinstance(a, dict) and a.get("name")
        }
    raise NotApplicable(NO_AGENTS)


def routing_f1(
    data: dict[str, Any], messages: list[dict[str, Any]], agents: dict[str, tuple[str, ...]]
) -> tuple[float, dict[str, Any]]:
    """IBM's OrchestrateAgentRoutingAccuracy over IBM-shaped messages."""
    tools2agents: dict[str, set[str]] = {}
    for agent, tools in agents.items():
        for tool in tools:
            tools2agents.setdefault(tool, set()).add(agent)
    possible, labelled = set(), set()
    for tool in {g.get("tool_name") for g in _tool_goals(data)}:
        possible.update(tools2agents.get(tool, ()))  # type: ignore[arg-type]
        if tool in agents:
            labelled.add(tool)
    called: set[str] = set()
    routing_calls = 0
    for message in messages:
        if message["type"] != "tool_call":
            continue
        name = (json.loads(message["content"]).get("name") or "").removeprefix(ROUTING_PREFIX)
        if name in agents:
            routing_calls += 1
            called.add(name)
    expected = labelled | possible
    tp, fp, fn = len(called & expected), len(called - expected), len(labelled - called)
    score = round(2 * tp / (2 * tp + fn + fp), 2) if routing_calls > 0 else 1.0
    details = {
        "total_routing_calls": routing_calls,
        "routed_to": sorted(called),
        "expected_agents": sorted(expected),
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
    }
    return score, details


def agent_routing_f1(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    data = _dataset(ctx)
    score, details = routing_f1(data, messages_of(actual), agents_of(spec))
    return score, [score], details


# --- parameters -----------------------------------------------------------------------------


def parameter_f1(
    expected: dict[str, Any] | None, actual: dict[str, Any], strategies: dict[str, str], ignore: str
) -> float:
    """``ToolParameterF1._compute_parameter_f1`` (NaN: not applicable)."""
    if not expected:
        return math.nan if not actual else 0.0
    if expected == {"IGNORE": None}:
        return math.nan
    checked = [
        name
        for name in expected
        if strategies.get(name, "strict") != "ignore"
        and not (strategies.get(name) == "optional" and name not in actual)
    ]
    matching = 0
    for name in checked:
        if name not in actual:
            continue
        want, got = normalize(expected[name], ignore), normalize(actual.get(name), ignore)
        if want == ignore:
            continue
        if strategies.get(name, "strict") == "fuzzy":
            converted, equal = as_number_or_date(got, want)
            equal = equal if converted else fuzzy_text_match(got, want)
        else:
            equal = got == want
        matching += equal
    fp = len(set(actual) - set(expected))
    fn = len(set(checked)) - matching
    denominator = 2 * matching + fp + fn
    return math.nan if denominator == 0 else round(2 * matching / denominator, 4)


def parameter_scores(data: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, float]:
    """Goal name → the parameter F1 of the latest call of its tool."""
    goals = {g["name"]: g for g in _tool_goals(data)}
    ignore = ignore_keyword()
    latest: dict[str, float] = {}
    for message in messages:
        if message["type"] != "tool_call":
            continue
        call = json.loads(message["content"])
        args = call.get("args") or {}
        for name, goal in goals.items():
            if goal.get("tool_name") == call.get("name") and name:
                latest[name] = parameter_f1(
                    goal.get("args"), args, goal.get("arg_matching") or {}, ignore
                )
    return latest


def tool_parameter_f1(
    expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
) -> tuple[float, list[float | None], dict[str, Any]]:
    data = _dataset(ctx)
    if not _tool_goals(data):
        raise NotApplicable("the dataset expects no tool calls")
    scores = parameter_scores(data, messages_of(actual))
    valid = [s for s in scores.values() if not math.isnan(s)]
    if scores and not valid:
        raise NotApplicable("no goal the agent's calls reached checks a parameter")
    score = round(sum(valid) / len(valid), 4) if valid else 0.0
    details = {
        "matched_tool_count": len(scores),
        "expected_tool_count": len(_tool_goals(data)),
        "individual_f1_scores": {k: (None if math.isnan(v) else v) for k, v in scores.items()},
    }
    return score, [score], details


register(
    Metric(
        "agent_routing_f1",
        "watsonx Orchestrate: F1 of the agents the conversation was routed to against the "
        "agents owning the expected tools (1 when nothing was routed); needs the agents "
        '("agents" option).',
        agent_routing_f1,
        origin="watsonx Orchestrate",
        needs_expected=False,
    )
)
register(
    Metric(
        "tool_parameter_f1",
        "watsonx Orchestrate: per expected tool goal, F1 of the latest call's parameters "
        "against the goal's arguments; the mean over the goals reached, rounded to 4 places.",
        tool_parameter_f1,
        origin="watsonx Orchestrate",
        needs_expected=False,
    )
)
