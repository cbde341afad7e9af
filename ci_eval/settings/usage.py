"""ci-eval.toml's ``[prices]`` and ``[budget]`` tables, checked: every bad key at once, with the
type it wants. Both place the bar (``BAR_TABLES``): in a pull request they are the merge
base's.

``[prices]``: model name → ``{input = $/Mtok, output = $/Mtok}`` (``agent`` and ``default`` are
names too: see :mod:`ci_eval.results.usage_totals`). ``[budget]``: opt-in limits, each a
blocking item of the verdict when exceeded — ``tokens_per_case`` (a case's mean total tokens
per run), ``cost_per_run`` (dollars for the whole job: the agent's runs, its reruns, the judge's
and the simulator's calls, where priced) and ``p95_latency_s`` (the 95th percentile of the
agent's wall time per turn over the job) — and limits that bind, stopping calls once reached
(:mod:`ci_eval.run.ceiling`): ``max_tokens_per_run``, ``max_cost_per_run``, ``max_agent_calls``,
``max_judge_calls``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ci_eval.errors import InputError
from ci_eval.text.suggest import did_you_mean

BUDGET_KEYS = (
    "tokens_per_case",
    "cost_per_run",
    "p95_latency_s",
    # binding: no call is made past them (ci_eval.run.ceiling)
    "max_tokens_per_run",
    "max_cost_per_run",
    "max_agent_calls",
    "max_judge_calls",
)
PRICE_KEYS = ("input", "output")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def check_budget(table: dict[str, object], path: str) -> list[InputError]:
    problems = []
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in BUDGET_KEYS:
            hint = did_you_mean(name, BUDGET_KEYS) or "; [budget] has: " + ", ".join(BUDGET_KEYS)
            problems.append(InputError(f"unknown key [budget] {key}{hint}", path=path))
        elif not _number(value):
            problems.append(InputError(f"[budget] {key}: expected a number (0 or more)", path=path))
    return problems


def check_prices(table: dict[str, object], path: str) -> list[InputError]:
    problems = []
    for model, entry in table.items():
        if not isinstance(entry, dict):
            problems.append(
                InputError(
                    f"[prices] {model}: expected a table {{input = $/Mtok, output = $/Mtok}}",
                    path=path,
                )
            )
            continue
        for key, value in entry.items():
            if key not in PRICE_KEYS:
                problems.append(
                    InputError(
                        f"unknown key [prices] {model}.{key}; a price has: input, output",
                        path=path,
                    )
                )
            elif not _number(value):
                problems.append(
                    InputError(
                        f"[prices] {model}.{key}: expected dollars per million tokens (a number)",
                        path=path,
                    )
                )
    return problems


@dataclass(frozen=True, slots=True)
class Limits:
    """The ``[budget]`` limits set (None: not set)."""

    tokens_per_case: float | None = None
    cost_per_run: float | None = None
    p95_latency_s: float | None = None
    max_tokens_per_run: float | None = None
    max_cost_per_run: float | None = None
    max_agent_calls: float | None = None
    max_judge_calls: float | None = None

    def binding(self) -> Limits:
        """Only the limits that stop calls once reached (:mod:`ci_eval.run.ceiling`)."""
        return Limits(
            max_tokens_per_run=self.max_tokens_per_run,
            max_cost_per_run=self.max_cost_per_run,
            max_agent_calls=self.max_agent_calls,
            max_judge_calls=self.max_judge_calls,
        )

    def __bool__(self) -> bool:
        return any(getattr(self, name) is not None for name in BUDGET_KEYS)

    def calls(self, kind: str) -> float | None:
        """``max_agent_calls`` or ``max_judge_calls``."""
        return self.max_agent_calls if kind == "agent" else self.max_judge_calls


def budget_of(table: Mapping[str, object]) -> Limits:
    """The limits set, by their canonical names."""
    return Limits(
        **{
            key.replace("-", "_"): float(value)  # type: ignore[arg-type]
            for key, value in table.items()
            if key.replace("-", "_") in BUDGET_KEYS and _number(value)
        }
    )
