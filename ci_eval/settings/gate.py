"""The gate's settings as the stages read them: one frozen value, built once by
:func:`ci_eval.settings.check.check_gate` from the run's settings (ci-eval.toml as the bar
rule reads it, then the flags or inputs), its defaults those of the settings table."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.settings.model import default


@dataclass(frozen=True, slots=True)
class GateSettings:
    """Where the bar is: how far a score may fall, how sure the gate must be, how much history
    a case needs, how many reruns confirm a break and how many cases may go missing."""

    tolerance: float = default("tolerance")  # type: ignore[assignment]
    significance: float = default("significance")  # type: ignore[assignment]
    min_history: int = default("min_history")  # type: ignore[assignment]
    confirm_runs: int = default("confirm_runs")  # type: ignore[assignment]
    max_removed: int = default("max_removed")  # type: ignore[assignment]
    baseline_window: int = default("baseline_window")  # type: ignore[assignment]
    baseline_max_age: float = default("baseline_max_age")  # type: ignore[assignment]
    fail_on: tuple[str, ...] = ()  # as given; empty: the gate's default where it runs


DEFAULT_GATE = GateSettings()  # every setting at its default
