"""What the agent under test spent, per case and per job: tokens (input, output, total, cached),
model calls, and latency — wall time per turn (p50, p95, max) and per run — computed from the
results (each turn's :class:`~ci_eval.model.usage.Usage` and ``duration_s``); with prices, a
cost. Confirmation reruns (``RunRecord.confirmation``) are counted apart: they are what the gate
spent to confirm a failure, not what the suite costs. A replayed run's durations are the
recording's, not measured: its latency is not counted (its tokens are).

``[prices]`` in ci-eval.toml: model name → ``{input = $/Mtok, output = $/Mtok}``. The agent's
usage does not say which model spent it, so the agent's price is ``[prices] agent``, else
``[prices] default``, else the only model listed; the judge's and the simulator's are those of
their model's name (``[judge] model``), else ``default``. A count the agent did not report is
unknown, not zero: a total says how many turns reported nothing. Pure: no I/O."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ci_eval.model.results import CaseRecord, RunRecord, RunResults

TOP = 5  # cases shown by tokens and by latency
COUNTS = ("input_tokens", "output_tokens", "cached_tokens", "model_calls")


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by linear interpolation; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


# slots, and no set of its own until a turn reports a count: a large run holds two per case
@dataclass(slots=True)
class Tally:
    """Counts over turns: each token count and model calls summed over the turns that reported
    it; ``unreported``: turns that reported nothing; latencies per turn and per run."""

    runs: int = 0
    turns: int = 0
    unreported: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    model_calls: int = 0
    reported: frozenset[str] = frozenset()  # the counts some turn reported
    turn_latency: list[float] = field(default_factory=list)
    run_latency: list[float] = field(default_factory=list)

    def add_run(self, run: RunRecord) -> int | None:
        """Count one run; returns its total tokens (None: none reported)."""
        self.runs += 1
        tokens: int | None = None
        # as the results file keeps them (4 decimals): a report of the file says the same
        if not run.replayed:
            self.run_latency.append(round(run.duration_s, 4))
        for record in run.invocations:
            self.turns += 1
            if record.duration_s is not None and not run.replayed:
                self.turn_latency.append(round(record.duration_s, 4))
            usage = record.usage
            if usage is None or not usage.known():
                self.unreported += 1
                continue
            for name in COUNTS:
                value = getattr(usage, name)
                if value is not None:
                    setattr(self, name, getattr(self, name) + value)
                    if name not in self.reported:
                        self.reported |= {name}
            total = usage.total_tokens
            if total is not None:
                tokens = (tokens or 0) + total
        return tokens

    @property
    def total_tokens(self) -> int | None:
        if not self.reported & {"input_tokens", "output_tokens"}:
            return None
        return self.input_tokens + self.output_tokens

    def known(self, name: str) -> int | None:
        return getattr(self, name) if name in self.reported else None

    def cost(self, price: Mapping[str, float] | None) -> float | None:
        """Dollars at ``price`` ($ per million input and output tokens); None without one or
        without tokens."""
        if not price or self.total_tokens is None:
            return None
        return (
            self.input_tokens * _number(price.get("input"))
            + self.output_tokens * _number(price.get("output"))
        ) / 1e6

    def latency(self) -> dict[str, float | None]:
        turns = self.turn_latency
        return {
            "p50": _round(percentile(turns, 0.5)),
            "p95": _round(percentile(turns, 0.95)),
            "max": _round(max(turns) if turns else None),
        }

    def json(self, price: Mapping[str, float] | None = None) -> dict[str, Any]:
        cost = self.cost(price)
        return {
            "runs": self.runs,
            "turns": self.turns,
            "unreported_turns": self.unreported,
            "input_tokens": self.known("input_tokens"),
            "output_tokens": self.known("output_tokens"),
            "cached_tokens": self.known("cached_tokens"),
            "total_tokens": self.total_tokens,
            "model_calls": self.known("model_calls"),
            "latency_s": self.latency(),
            "cost_usd": None if cost is None else round(cost, 6),
        }


def _number(value: Any) -> float:
    """A count or price as a results file may hold it (any JSON: a file is input): 0 unless
    a number."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else 0.0


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass(slots=True)
class CaseUsage:
    """One case's usage: its first runs' (``tally``) and its confirmation reruns' apart;
    ``tokens``: per first run, its total tokens (None: not reported), aligned with the runs."""

    key: str
    tally: Tally = field(default_factory=Tally)
    reruns: Tally = field(default_factory=Tally)
    tokens: list[int | None] = field(default_factory=list)

    @property
    def tokens_per_run(self) -> float | None:
        """The mean of its first runs' total tokens that were reported."""
        known = [t for t in self.tokens if t is not None]
        return sum(known) / len(known) if known else None

    @property
    def p95_latency(self) -> float | None:
        return percentile(self.tally.turn_latency, 0.95)


def case_usage(key: str, case: CaseRecord) -> CaseUsage:
    out = CaseUsage(key)
    for run in case.runs:
        if run.confirmation:
            out.reruns.add_run(run)
        else:
            out.tokens.append(out.tally.add_run(run))
    return out


def run_tokens(case: CaseRecord) -> list[int | None]:
    """Per run of the case, in order (reruns included), the agent's total tokens (None: the
    agent reported none), as the baseline records them."""
    return [Tally().add_run(run) for run in case.runs]


def price_of(
    prices: Mapping[str, Any] | None, model: str | None = None, others: Iterable[Any] = ()
) -> dict[str, float] | None:
    """The price table for ``model`` (None: the agent's, see the module; ``others``: the
    judge's and simulator's models, never taken for the agent's)."""
    if not prices:
        return None
    tables = {k: v for k, v in prices.items() if isinstance(v, Mapping)}
    if model is not None:
        found = tables.get(model) or tables.get("default")
    else:
        found = tables.get("agent") or tables.get("default")
        theirs = {o for o in others if isinstance(o, str)}
        rest = [v for k, v in tables.items() if k not in theirs]
        if found is None and len(tables) == 1 and len(rest) == 1:
            found = rest[0]
    return dict(found) if found else None


@dataclass
class UsageTotals:
    """A job's usage: the first runs' (``agent``), the reruns' apart, and per case."""

    agent: Tally
    reruns: Tally
    cases: list[CaseUsage]

    def top(self, by: str, n: int = TOP) -> list[CaseUsage]:
        """The cases spending most: ``by`` "tokens" (per run) or "latency" (p95 per turn)."""
        value = (lambda c: c.tokens_per_run) if by == "tokens" else (lambda c: c.p95_latency)
        # each case's value worked out once (a percentile sorts its turns), ranked stably
        valued = [(v, c) for c in self.cases if (v := value(c)) is not None]
        valued.sort(key=lambda vc: -vc[0])
        return [c for _, c in valued[:n]]


def totals(cases: Iterable[tuple[str, CaseRecord]]) -> UsageTotals:
    agent, reruns, per_case = Tally(), Tally(), []
    for key, case in cases:
        usage = case_usage(key, case)
        per_case.append(usage)
        for mine, into in ((usage.tally, agent), (usage.reruns, reruns)):
            _merge(into, mine)
    return UsageTotals(agent, reruns, per_case)


def _merge(into: Tally, tally: Tally) -> None:
    into.runs += tally.runs
    into.turns += tally.turns
    into.unreported += tally.unreported
    for name in COUNTS:
        setattr(into, name, getattr(into, name) + getattr(tally, name))
    into.reported |= tally.reported
    into.turn_latency += tally.turn_latency
    into.run_latency += tally.run_latency


def of_results(results: RunResults) -> UsageTotals:
    """The job's usage, computed once per results while their runs are the same in number
    (every report asks; reading a large run's runs back costs)."""
    key = sum(len(c.runs) for s in results.sets for c in s.cases)
    kept = results.__dict__.get("_usage_totals")
    if kept is not None and kept[0] == key:
        return kept[1]
    found = totals((f"{s.eval_set_id}:{c.eval_id}", c) for s, c in results.cases())
    results.__dict__["_usage_totals"] = (key, found)
    return found


def summary(results: RunResults) -> dict[str, Any]:
    """What the results file records (``settings.usage_totals``) and the reports show: the
    agent's first runs and its confirmation reruns apart, each with its cost where priced, the
    judge's and simulator's usage where the run counted it, the total cost, and the top cases
    by tokens and by latency."""
    prices = results.settings.prices
    found = of_results(results)
    agent_price = price_of(prices, others=results.settings.models.values())
    out: dict[str, Any] = {
        "agent": found.agent.json(agent_price),
        "reruns": found.reruns.json(agent_price),
    }
    llm = results.settings.llm_usage
    costs = [out["agent"]["cost_usd"], out["reruns"]["cost_usd"]]
    for role, spent in (llm or {}).items():
        model = results.settings.models.get(role)
        price = price_of(prices, str(model) if model else "default")
        cost = None
        if price:
            cost = (
                spent.input_tokens * _number(price.get("input"))
                + spent.output_tokens * _number(price.get("output"))
            ) / 1e6
        used = dataclasses.asdict(spent)
        out[role] = {**used, "cost_usd": None if cost is None else round(cost, 6)}
        costs.append(out[role]["cost_usd"])
    known = [c for c in costs if c is not None]
    out["cost_usd"] = round(sum(known), 6) if known else None
    out["top_tokens"] = [
        {"case": c.key, "tokens_per_run": round(c.tokens_per_run or 0)} for c in found.top("tokens")
    ]
    out["top_latency"] = [
        {"case": c.key, "p95_turn_s": _round(c.p95_latency)} for c in found.top("latency")
    ]
    return out
