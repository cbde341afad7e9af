"""The verdict's items for usage: ``[budget]`` limits exceeded (blocking: setting a limit is
the opt-in) and the token and latency regressions the comparison found
(:mod:`ci_eval.gate.usage`), which block only when ``--fail-on`` names ``usage`` — otherwise
listed, not blocking, saying how to make them block. Pure: from the results."""

from __future__ import annotations

from ci_eval.gate.items import Item, Kind
from ci_eval.results.file import RunResults
from ci_eval.results.usage_totals import of_results, summary

NOT_BLOCKING = "not blocking: add `usage` to --fail-on"


def _limits(results: RunResults) -> dict[str, float]:
    raw = results.settings.get("budget")
    if not isinstance(raw, dict):
        return {}
    from ci_eval.settings.usage import budget_of

    return budget_of(raw)


def budget_items(results: RunResults) -> list[Item]:
    """One blocking item per limit exceeded: the cases over ``tokens_per_case`` (each), the
    job's cost over ``cost_per_run``, its p95 turn latency over ``p95_latency_s``."""
    limits = _limits(results)
    if not limits:
        return []
    items = []
    found = of_results(results)
    tokens = limits.get("tokens_per_case")
    if tokens is not None:
        for case in found.cases:
            spent = case.tokens_per_run
            if spent is not None and spent > tokens:
                set_id, _, case_id = case.key.partition(":")
                items.append(
                    Item(
                        Kind.BUDGET,
                        True,
                        set_id,
                        case_id,
                        set_id,
                        change=f"{spent:,.0f} tokens per run",
                        said=f"over [budget] tokens_per_case = {tokens:,.0f}",
                    )
                )
    cost = limits.get("cost_per_run")
    if cost is not None:
        spent_usd = summary(results)["cost_usd"]
        if spent_usd is not None and spent_usd > cost:
            items.append(
                Item(
                    Kind.BUDGET,
                    True,
                    change=f"this job cost ${spent_usd:.4g}",
                    said=f"over [budget] cost_per_run = ${cost:g}",
                )
            )
        elif spent_usd is None:
            items.append(
                Item(
                    Kind.BUDGET,
                    False,
                    change="cost unknown",
                    said="[budget] cost_per_run needs [prices] and reported tokens",
                )
            )
    latency = limits.get("p95_latency_s")
    p95 = found.agent.latency()["p95"]
    if latency is not None and p95 is not None and p95 > latency:
        items.append(
            Item(
                Kind.BUDGET,
                True,
                change=f"p95 turn latency {p95:.2f} s",
                said=f"over [budget] p95_latency_s = {latency:g}",
            )
        )
    return items


def regression_items(results: RunResults) -> list[Item]:
    """The comparison's token and latency regressions, blocking under ``--fail-on usage``."""
    comparison = results.comparison
    if comparison is None:
        return []
    blocks = "usage" in results.fail_on
    items = []
    for change in comparison.usage:
        if not change.regressed:
            continue
        kind = Kind.TOKENS if change.kind == "tokens" else Kind.LATENCY
        rose = "tokens rose" if change.kind == "tokens" else "slower"
        what = "tokens" if change.kind == "tokens" else "latency"
        items.append(
            Item(
                kind,
                blocks,
                change.set_id,
                change.case_id,
                change.set_id,
                change=f"{rose}: {change.describe()}",
                judged="judged against main's history"
                + (
                    f" (p={change.adjusted:.2g} after Benjamini–Hochberg)"
                    if change.adjusted
                    else ""
                ),
                test=f"×{change.ratio:.2f}",
                said=f"{what} ×{change.ratio:.2f} per run, beyond its history"
                + ("" if blocks else f" ({NOT_BLOCKING})"),
            )
        )
    return items


def usage_items(results: RunResults) -> list[Item]:
    return budget_items(results) + regression_items(results)
