"""The run's settings checked once, before the first agent call, in the order a user would fix
them, and parsed into :class:`Plan`: the frozen, typed values the stages read (the pipeline
hands them on; no stage parses a setting's text again)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_eval.errors import InputError
from ci_eval.settings.gate import GateSettings
from ci_eval.settings.model import Names, RunSettings, ci_credential
from ci_eval.settings.parse import (
    REPLAY_PICKS,
    CaseFilter,
    parse_cases,
    parse_fail_on,
    parse_metric_option,
    parse_metric_table,
    parse_shard,
)

if TYPE_CHECKING:  # the metric model is pydantic: `--help` reads this module's callers
    from ci_eval.model.metric_spec import MetricSpec

MAX_CONCURRENCY = 64  # cases at once, whatever the settings say (each may be a process)


@dataclass(frozen=True)
class Plan:
    """What the stages read of a run's settings, parsed once by :func:`check`."""

    gate: GateSettings
    shard: tuple[int, int] | None  # (I, N): only this shard's cases
    cases: tuple[CaseFilter, ...]  # --case: none selects every case
    metric_overrides: tuple[MetricSpec, ...]  # --metric: replaces the sets' own metrics
    metric_table: tuple[MetricSpec, ...]  # ci-eval.toml's [metrics]
    concurrency: int  # at most MAX_CONCURRENCY
    num_runs: int
    notices: tuple[str, ...] = ()  # what the check changed, said (a capped concurrency)


def check_number(
    names: Names,
    key: str,
    value: float | None,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """A finite number within the bounds, else an InputError naming the setting."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise names.error(key, f"must be a finite number, not {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo = "" if low is None else f"{'>' if low_open else '>='} {low:g}"
        hi = "" if high is None else f"{'<' if high_open else '<='} {high:g}"
        raise names.error(key, f"must be {' and '.join(x for x in (lo, hi) if x)}, not {value:g}")


def check_gate(settings: RunSettings) -> GateSettings:
    """The gate's settings, checked, as the one frozen value every stage reads."""
    names = settings.names
    check_number(names, "tolerance", settings.tolerance, low=0)
    check_number(
        names, "significance", settings.significance, low=0, high=1, low_open=True, high_open=True
    )
    check_number(names, "baseline_max_age", settings.baseline_max_age, low=0)
    for key in ("min_history", "baseline_window"):
        if getattr(settings, key) < 1:
            raise names.error(key, "must be at least 1")
    if settings.max_removed < 0:
        raise names.error("max_removed", "must be 0 or more")
    if not 0 <= settings.confirm_runs <= 20:
        raise names.error("confirm_runs", "must be from 0 (no reruns) to 20")
    return GateSettings(
        tolerance=float(settings.tolerance),
        significance=float(settings.significance),
        min_history=settings.min_history,
        confirm_runs=settings.confirm_runs,
        max_removed=settings.max_removed,
        baseline_window=settings.baseline_window,
        baseline_max_age=float(settings.baseline_max_age),
        fail_on=parse_fail_on(settings.fail_on, names.name("fail_on")),
    )


# the agents --otlp hears from: those that run apart from ci-eval and are called per turn
OTLP_KINDS = ("command", "http", "adk-http")


def check_otlp(settings: RunSettings) -> None:
    """``--otlp`` and its port and wait; the port and wait are checked even when it is off."""
    names, agent = settings.names, settings.agent
    if not 0 <= agent.otlp_port <= 65535:
        raise names.error(
            "agent.otlp_port", f"must be from 0 (a free port) to 65535, not {agent.otlp_port}"
        )
    check_number(names, "agent.otlp_wait", agent.otlp_wait, low=0, high=60)
    if agent.otlp and agent.kind is not None and agent.kind not in OTLP_KINDS:
        raise names.error(
            "agent.otlp",
            f"hears the spans of an agent ci-eval calls per turn ({', '.join(OTLP_KINDS)}), "
            f"not of {names.name('agent.kind')} {agent.kind}"
            + (
                ": a replay's recorded traces are read with --replay"
                if agent.kind == "replay"
                else ""
            ),
        )


# what ``dialect`` may name: a dialect whose files ADK's shape cannot tell apart
DIALECT_CHOICES = ("adk-rs",)
SELECT_CHOICES = ("all", "changed")


def check(settings: RunSettings) -> Plan:
    """Every setting of a run, in the order a user would fix them; returns them parsed."""
    names = settings.names
    for key, low in (("concurrency", 1), ("num_runs", 1), ("retries", 0)):
        if getattr(settings, key) < low:
            raise names.error(key, f"must be at least {low}")
    check_number(names, "timeout", settings.timeout, low=0, low_open=True)
    check_number(names, "judge.timeout", settings.judge.timeout, low=0, low_open=True)
    check_number(names, "judge.temperature", settings.judge.temperature, low=0)
    if settings.min_pass is not None and not 1 <= settings.min_pass <= settings.num_runs:
        raise names.error(
            "min_pass",
            f"must be between 1 and {names.name('num_runs')} ({settings.num_runs})",
        )
    shard = parse_shard(settings.shard, names.name("shard")) if settings.shard else None
    try:
        from ci_eval.net.llm_cache import parse_ttl

        parse_ttl(settings.cache_ttl)
    except ValueError as exc:
        raise names.error("cache_ttl", str(exc)) from None
    if settings.cache_sign_key_env and ci_credential(settings.cache_sign_key_env):
        raise names.error(
            "cache_sign_key_env",
            f"{settings.cache_sign_key_env} is a CI credential, not a signing key: name the "
            "variable that holds main's Ed25519 private key",
        )
    if settings.select not in SELECT_CHOICES:
        raise names.error(
            "select", f"{settings.select!r}: choose one of " + ", ".join(SELECT_CHOICES)
        )
    if settings.select == "changed" and settings.update_baseline:
        raise names.error(
            "select",
            f"changed cannot go with {names.name('update_baseline')}: the cases it does not "
            "re-run carry main's results, which are never recorded as runs",
        )
    if settings.dialect not in (None, *DIALECT_CHOICES):
        raise names.error(
            "dialect", f"{settings.dialect!r}: choose one of " + ", ".join(DIALECT_CHOICES)
        )
    if settings.agent.replay_pick not in REPLAY_PICKS:
        raise names.error(
            "agent.replay_pick",
            f"{settings.agent.replay_pick!r}: choose one of " + ", ".join(REPLAY_PICKS),
        )
    check_otlp(settings)
    gate = check_gate(settings)
    option = names.name("metric")
    try:
        overrides = tuple(parse_metric_option(m, option) for m in settings.metric)
        table = tuple(parse_metric_table(settings.metrics))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    notices = ()
    concurrency = settings.concurrency
    if concurrency > MAX_CONCURRENCY:  # 10,000 agent processes at once is no setting
        notices = (
            f"warning: {names.name('concurrency')} {concurrency} is capped at "
            f"{MAX_CONCURRENCY} cases at once",
        )
        concurrency = MAX_CONCURRENCY
    return Plan(
        gate,
        shard,
        parse_cases(settings.cases),
        overrides,
        table,
        concurrency,
        settings.num_runs,
        notices,
    )
