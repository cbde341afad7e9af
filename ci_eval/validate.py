"""What ``ci-eval validate`` prints: one line per eval set (dialect, counts, the config whose
metrics apply), notes on trace mode and warnings, each problem on its own line, and what was
skipped, counted, or listed with ``-v`` so that a set that was not read is never silent."""

from __future__ import annotations

from collections.abc import Iterator

from ci_eval.discover import Ignored
from ci_eval.errors import ValidationFailed
from ci_eval.load import Failed, LoadedEvalSet, LoadedSidecar, Outcome, Skipped
from ci_eval.simulate import scenario_of

TRACE_NOTE = "trace mode: recorded conversation is scored, the agent is not called"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def simulated(outcome: LoadedEvalSet) -> int:
    """Cases whose user turns an LLM writes (they need a simulator to run)."""
    return sum(1 for c in outcome.eval_set.eval_cases if scenario_of(c, outcome.dialect))


def set_line(outcome: LoadedEvalSet) -> str:
    es = outcome.eval_set
    metrics = outcome.metrics
    source = " (ADK defaults)" if metrics.source == "default" else f" from {metrics.source}"
    sim = simulated(outcome)
    return (
        f"{outcome.path}: ok: {outcome.dialect}, {_n(len(es.eval_cases), 'case')}"
        + (f" ({sim} with a simulated user)" if sim else "")
        + ", "
        f"{_n(es.invocation_count(), 'invocation')}; metrics {metrics.describe()}{source}"
    )


def validate_lines(
    outcomes: list[Outcome], ignored: list[Ignored], verbose: bool = False
) -> Iterator[str]:
    for outcome in outcomes:
        if isinstance(outcome, LoadedEvalSet):
            yield set_line(outcome)
            cases = outcome.eval_set.eval_cases
            traced = sum(1 for c in cases if c.trace_actuals is not None)
            if traced:
                yield f"{outcome.path}: {TRACE_NOTE} ({traced} of {_n(len(cases), 'case')})"
            for warning in outcome.warnings:
                yield f"{warning} (warning)"
        elif isinstance(outcome, LoadedSidecar):
            yield f"{outcome.path}: ok: {outcome.kind}; metrics {outcome.config.describe()}"
        elif isinstance(outcome, Skipped):
            if verbose:
                yield f"{outcome.path}: skipped: {outcome.reason}"
        elif isinstance(outcome, Failed):
            error = outcome.error
            for problem in error.problems if isinstance(error, ValidationFailed) else [error]:
                yield str(problem)
    if verbose:
        for item in ignored:
            yield f"{item.rel}: not read: {item.reason}"


def validate_counts(outcomes: list[Outcome], ignored: list[Ignored], verbose: bool) -> str:
    sets = [o for o in outcomes if isinstance(o, LoadedEvalSet)]
    cases = sum(len(o.eval_set.eval_cases) for o in sets)
    sidecars = sum(isinstance(o, LoadedSidecar) for o in outcomes)
    skipped = sum(isinstance(o, Skipped) for o in outcomes)
    invalid = sum(isinstance(o, Failed) for o in outcomes)
    sim = sum(simulated(o) for o in sets)
    line = (
        f"{_n(len(sets), 'eval set')} ({_n(cases, 'case')}"
        + (f", {sim} with a simulated user" if sim else "")
        + f"), {_n(sidecars, 'sidecar')}, "
        f"{skipped} skipped, {invalid} invalid"
    )
    if ignored:
        line += f", {len(ignored)} other JSON not read"
    if (skipped or ignored) and not verbose:
        line += " (-v lists them)"
    return line
