"""``[budget]``'s binding limits: once one is reached, the job issues no more calls of its kind.

- ``max_agent_calls``: turns sent to the agent, over the job (first runs, confirmation reruns,
  the same-day control);
- ``max_judge_calls``: calls to the judge's and the user simulator's endpoint (cached answers
  are not calls);
- ``max_tokens_per_run``: tokens the job spent — the agent's as it reports them, the judge's
  and the simulator's as their endpoint does; reached, no call of any kind is made;
- ``max_cost_per_run``: the same tokens at ``[prices]``; reached, no call is made.

A call already in flight finishes (a limit can be passed by its last call; the verdict then
says the job went over it). A run not started says ``not run: budget reached (…)`` and is an
error of its case, so the gate blocks (exit 1: the limit is the gate's, not an outage); a judge
call refused is an error of the metric that asked it.
One :class:`Ceiling` is shared by every thread of the job."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ci_eval.model.facts import BudgetReached
from ci_eval.model.usage import Usage
from ci_eval.results.usage_totals import price_of
from ci_eval.text.plural import plural

if TYPE_CHECKING:
    from ci_eval.settings.usage import Limits


@dataclass
class Ceiling:
    limits: Limits
    # $ per million tokens: the agent's, and the judge's and simulator's by role
    prices: dict[str, dict[str, float] | None] = field(default_factory=dict)
    agent_calls: int = 0
    judge_calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    reached: str | None = None  # "[budget] max_agent_calls = 100", once reached
    refused: int = 0  # calls refused because of it
    not_started: int = 0  # runs not started because of it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(
        cls, budget: Mapping[str, object], prices: Mapping[str, Any], models: Mapping[str, Any]
    ) -> Ceiling | None:
        """The job's ceiling, or None when ``[budget]`` sets no binding limit."""
        from ci_eval.settings.usage import budget_of

        limits = budget_of(budget).binding()
        if not limits:
            return None
        theirs = [m for m in models.values() if m]
        chosen = {"agent": price_of(prices, others=theirs)}
        for role, model in models.items():
            chosen[role] = price_of(prices, str(model) if model else "default")
        return cls(limits, chosen)

    def _over(self) -> str | None:
        """The limit that stops every call, if one is reached (the caller holds the lock)."""
        tokens, cost = self.limits.max_tokens_per_run, self.limits.max_cost_per_run
        if tokens is not None and self.tokens >= tokens:
            return f"[budget] max_tokens_per_run = {tokens:,.0f}"
        if cost is not None and self.cost >= cost:
            return f"[budget] max_cost_per_run = ${cost:g}"
        return None

    def _closed_to(self, kind: str) -> str | None:
        """The limit that stops ``kind``'s calls (``agent`` or ``judge``), if one is reached
        (the caller holds the lock)."""
        why = self._over()
        calls = self.limits.calls(kind)
        made = self.agent_calls if kind == "agent" else self.judge_calls
        if why is None and calls is not None and made >= calls:
            why = f"[budget] max_{kind}_calls = {calls:,.0f}"
        if why is not None:
            self.reached = self.reached or why
        return why

    def _call(self, kind: str) -> str | None:
        with self._lock:
            why = self._closed_to(kind)
            if why is not None:
                self.refused += 1
                return f"budget reached ({why})"
            if kind == "agent":
                self.agent_calls += 1
            else:
                self.judge_calls += 1
            return None

    def agent_call(self) -> str | None:
        """Before a turn is sent: None (go ahead, counted), or why it is not."""
        return self._call("agent")

    def judge_call(self) -> str | None:
        """Before the judge or the simulator calls its endpoint: None, or why it may not."""
        return self._call("judge")

    def closed(self) -> str | None:
        """Why no new run starts: a limit that stops every call, or the agent's calls'."""
        with self._lock:
            why = self._closed_to("agent")
            if why is None:
                return None
            self.not_started += 1
            return f"budget reached ({why})"

    def spent(self, role: str, input_tokens: int, output_tokens: int) -> None:
        """Tokens a call spent: ``role`` is ``agent``, ``judge`` or ``simulator``."""
        price = self.prices.get(role)
        with self._lock:
            self.tokens += input_tokens + output_tokens
            if price:
                self.cost += (
                    input_tokens * float(price.get("input") or 0)
                    + output_tokens * float(price.get("output") or 0)
                ) / 1e6

    def agent_spent(self, usage: Usage | None) -> None:
        if usage is not None and usage.total_tokens is not None:
            self.spent("agent", usage.input_tokens or 0, usage.output_tokens or 0)

    def report(self) -> BudgetReached | None:
        """Once a limit stopped calls: which (``limit``), what the job spent (``spent``) and
        what it kept from running (``stopped``), as the results file records it; else None."""
        if self.reached is None:
            return None
        spent = (
            f"{plural(self.agent_calls, 'agent call')}, {plural(self.judge_calls, 'judge call')}"
        )
        spent += f", {self.tokens:,} tokens"
        if self.limits.max_cost_per_run is not None:
            spent += f", ${self.cost:.4g}"
        stopped = [
            f"{plural(n, what)} {how}"
            for n, what, how in (
                (self.not_started, "run", "not started"),
                (self.refused, "call", "refused"),
            )
            if n
        ]
        return BudgetReached(self.reached, spent, ", ".join(stopped))


def said(report: BudgetReached) -> str:
    """``budget reached: [budget] max_agent_calls = 3 (3 agent calls, …); 2 runs not started``."""
    return f"budget reached: {report.limit} ({report.spent}); {report.stopped}"
