"""The verdict's items for usage: ``[budget]`` limits exceeded (blocking: setting a limit is
the opt-in) and the token and latency regressions the comparison found
(:mod:`ci_eval.gate.usage`), which block only when ``--fail-on`` names ``usage`` — otherwise
listed, not blocking, saying how to make them block. Pure: from the results."""

from __future__ import annotations

from ci_eval.gate.items import Item, Kind
from ci_eval.model.status import Status
from ci_eval.results.file import RunResults
from ci_eval.results.usage_totals import UsageTotals, of_results, summary
from ci_eval.settings.usage import Limits, budget_of

NOT_BLOCKING = "not blocking: add `usage` to --fail-on"
# the [budget] limits that need the agent's reported tokens
TOKEN_LIMITS = ("tokens_per_case", "cost_per_run", "max_tokens_per_run", "max_cost_per_run")


def _limits(results: RunResults) -> Limits:
    return budget_of(results.settings.budget)


def budget_items(results: RunResults) -> list[Item]:
    """One blocking item per limit exceeded: the cases over ``tokens_per_case`` (each), the
    job's cost over ``cost_per_run``, its p95 turn latency over ``p95_latency_s``; a binding
    limit reached, and the job's tokens past ``max_tokens_per_run``."""
    limits = _limits(results)
    if not limits and results.settings.budget_reached is None:
        return []
    found = of_results(results)
    items = _tokens_per_case(results, limits, found)
    costs = {
        k: c
        for k, c in (
            ("cost_per_run", limits.cost_per_run),
            ("max_cost_per_run", limits.max_cost_per_run),
        )
        if c is not None
    }
    spent_usd = summary(results)["cost_usd"] if costs else None  # computed once
    items += [i for k, c in costs.items() if (i := _cost_item(k, c, spent_usd)) is not None]
    reached = results.settings.budget_reached
    if reached is not None:  # a binding limit stopped calls: what it kept from running
        items.append(
            Item(
                Kind.BUDGET,
                True,
                change=f"budget reached: {reached.limit}",
                said=f"{reached.stopped} (this job: {reached.spent})",
            )
        )
    items += _tokens_per_run(results, limits, found)
    latency = limits.p95_latency_s
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


def _tokens_per_case(results: RunResults, limits: Limits, found: UsageTotals) -> list[Item]:
    """Each case over ``tokens_per_case``, and each judged case whose agent reported none."""
    tokens = limits.tokens_per_case
    if tokens is None:
        return []
    # a case main has tokens for is said by unmeasured_items, with main's figure
    said = {u.key for u in (results.comparison.unreported if results.comparison else [])}
    judged = {
        f"{s.eval_set_id}:{c.eval_id}"
        for s in results.sets
        for c in s.cases
        if c.status in (Status.PASSED, Status.FAILED)
    }
    items = []
    for case in found.cases:
        spent = case.tokens_per_run
        set_id, _, case_id = case.key.partition(":")
        if spent is None and case.key in judged and case.key not in said:
            items.append(
                Item(
                    Kind.UNMEASURED_USAGE,
                    True,
                    set_id,
                    case_id,
                    set_id,
                    change="tokens not reported",
                    said=f"[budget] tokens_per_case = {tokens:,.0f} cannot be checked: "
                    "the agent reported no token usage",
                )
            )
        if spent is not None and spent > tokens:
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
    return items


def _tokens_per_run(results: RunResults, limits: Limits, found: UsageTotals) -> list[Item]:
    """The job's tokens past ``max_tokens_per_run`` (every call's, as the ceiling counted
    them: the agent's, its reruns', the LLMs'), or not known where none reported any."""
    most = limits.max_tokens_per_run
    if most is None:
        return []
    known = [t for t in (found.agent.total_tokens, found.reruns.total_tokens) if t is not None]
    total = sum(known) if known else None
    for spent in (results.settings.llm_usage or {}).values():
        if spent.calls:
            total = (total or 0) + spent.input_tokens + spent.output_tokens
    if total is None:
        return [
            Item(
                Kind.UNMEASURED_USAGE,
                True,
                change="tokens unknown",
                said=f"[budget] max_tokens_per_run = {most:,.0f} cannot be checked: "
                "no call reported its tokens",
            )
        ]
    if total > most:
        return [
            Item(
                Kind.BUDGET,
                True,
                change=f"this job spent {total:,} tokens",
                said=f"over [budget] max_tokens_per_run = {most:,.0f} "
                "(its last calls went past it)",
            )
        ]
    return []


def _cost_item(key: str, cost: float, spent_usd: float | None) -> Item | None:
    """A cost limit's blocking item: the cost unknown (a limit not checked is not met), or
    over it; None within it."""
    if spent_usd is None:  # a limit that cannot be checked is not met
        return Item(
            Kind.UNMEASURED_USAGE,
            True,
            change="cost unknown",
            said=f"[budget] {key} = ${cost:g} cannot be checked: it needs [prices] for the "
            "agent's models and reported tokens",
        )
    if spent_usd <= cost:
        return None
    past = " (its last calls went past it)" if key == "max_cost_per_run" else ""
    return Item(
        Kind.BUDGET,
        True,
        change=f"this job cost ${spent_usd:.4g}",
        said=f"over [budget] {key} = ${cost:g}{past}",
    )


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


def unmeasured_items(results: RunResults) -> list[Item]:
    """The cases whose tokens main's history has and this run's agent did not report: not
    measured, never passed — blocking where a token or cost limit of ``[budget]`` applies or
    ``--fail-on`` names ``usage``, said otherwise."""
    comparison = results.comparison
    if comparison is None or not comparison.unreported:
        return []
    limits = _limits(results)
    blocks = "usage" in results.fail_on or any(getattr(limits, k) is not None for k in TOKEN_LIMITS)
    return [
        Item(
            Kind.UNMEASURED_USAGE,
            blocks,
            u.set_id,
            u.case_id,
            u.set_id,
            change=f"tokens not reported; main reported {u.before:,.0f} a run",
            said="the agent no longer reports its token usage"
            + ("" if blocks else " (not blocking: add `usage` to --fail-on, or set a [budget])"),
        )
        for u in comparison.unreported
    ]


def usage_items(results: RunResults) -> list[Item]:
    return budget_items(results) + unmeasured_items(results) + regression_items(results)
