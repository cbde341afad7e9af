"""The usage report's words, the same in every channel: the agent's tokens, model calls, turn
latency and cost in one line, the confirmation reruns' and the judge's and simulator's apart,
and the cases that spend most (:mod:`ci_eval.results.usage_totals`). Pure: from the results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_eval.results.file import RunResults
from ci_eval.results.usage_totals import summary


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "n/a"


def _cost(value: Any) -> str:
    if not isinstance(value, int | float):
        return ""
    return f"${value:.2f}" if value >= 1 else f"${value:.4f}"


def agent_line(spent: Mapping[str, Any]) -> str:
    """``12,345 tokens (10,000 in, 2,345 out) in 30 model calls; turn p50 1.2 s, p95 3.4 s,
    max 5 s; $0.0123`` — what is known of it."""
    parts = []
    if spent.get("total_tokens") is not None:
        text = (
            f"{_n(spent['total_tokens'])} tokens ({_n(spent.get('input_tokens'))} in, "
            f"{_n(spent.get('output_tokens'))} out)"
        )
        if spent.get("model_calls") is not None:
            text += f" in {_n(spent['model_calls'])} model calls"
        if spent.get("unreported_turns"):
            text += f" ({spent['unreported_turns']} of {spent['turns']} turns reported none)"
        parts.append(text)
    elif spent.get("turns"):
        parts.append("tokens not reported")
    latency = spent.get("latency_s") or {}
    if latency.get("p95") is not None:
        parts.append(
            f"turn latency p50 {latency['p50']:.2f} s, p95 {latency['p95']:.2f} s, "
            f"max {latency['max']:.2f} s"
        )
    if spent.get("cost_usd") is not None:
        parts.append(_cost(spent["cost_usd"]))
    return "; ".join(parts)


def llm_line(spent: Mapping[str, Any]) -> str:
    """A judge's or simulator's calls (``llm_usage``): calls, cache hits, tokens, cost."""
    text = f"{_n(spent.get('calls'))} calls"
    if spent.get("cache_hits"):
        text += f" ({_n(spent['cache_hits'])} from the cache)"
    if spent.get("input_tokens") is not None or spent.get("output_tokens") is not None:
        text += f", {_n(spent.get('input_tokens'))} tokens in, {_n(spent.get('output_tokens'))} out"
    if spent.get("cost_usd") is not None:
        text += f"; {_cost(spent['cost_usd'])}"
    return text


def usage_view(results: RunResults) -> dict[str, Any] | None:
    """What the templates show as ``usage`` (None: nothing was measured: a replay, no runs):
    ``line`` the totals in one line, ``rows`` who spent what (agent, reruns, judge,
    simulator), ``top_tokens`` and ``top_latency`` the cases spending most."""
    found = summary(results)
    agent = found["agent"]
    # a results file from before usage was reported renders as it did then (latency alone)
    recorded = results.settings.usage_totals is not None or agent.get("total_tokens") is not None
    measured = agent.get("total_tokens") is not None or (agent.get("latency_s") or {}).get("p95")
    if not recorded or not (measured or any(found.get(k) for k in ("judge", "simulator"))):
        return None
    rows = [{"who": "agent", "what": agent_line(agent) or "not measured"}]
    reruns = found["reruns"]
    if reruns.get("runs"):
        rows.append(
            {
                "who": f"agent, {reruns['runs']} confirmation reruns",
                "what": agent_line(reruns) or "not measured",
            }
        )
    for role in ("judge", "simulator"):
        if found.get(role):
            rows.append({"who": role, "what": llm_line(found[role])})
    line = f"agent: {rows[0]['what']}"
    if reruns.get("runs") and reruns.get("total_tokens") is not None:
        line += f" · reruns: {_n(reruns['total_tokens'])} tokens"
    for role in ("judge", "simulator"):
        if found.get(role):
            line += f" · {role}: {_n(found[role].get('calls'))} calls"
    if found.get("cost_usd") is not None:
        line += f" · total {_cost(found['cost_usd'])}"
    ids = [c.eval_id for _, c in results.cases()]
    shared = {i for i in ids if ids.count(i) > 1} if len(ids) < 2000 else set(ids)

    def name(key: str) -> str:  # the case's id; its set's too where another set has the id
        set_id, _, case_id = key.partition(":")
        if case_id == set_id:  # a legacy file: one case named by its path, as its row says
            return case_id.rsplit("/", 1)[-1]
        return f"{set_id} › {case_id}" if case_id in shared else case_id

    return {
        "line": line,
        # whether any tokens were counted (the agent's, or the judge's or simulator's)
        "tokens": agent.get("total_tokens") is not None or len(rows) > 1,
        "rows": rows,
        "top_tokens": [
            {"case": name(t["case"]), "value": f"{t['tokens_per_run']:,} tokens"}
            for t in found["top_tokens"]
        ],
        "top_latency": [
            {"case": name(t["case"]), "value": f"{t['p95_turn_s']:.2f} s"}
            for t in found["top_latency"]
        ],
    }
