"""What ``ci-eval validate`` prints: one line per eval set (dialect, counts, the config whose
metrics apply), notes on trace mode and warnings, each problem on its own line, and what was
skipped, counted, or listed with ``-v`` so that a set that was not read is never silent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ci_eval.dialects import defaults_label
from ci_eval.errors import InputError, ValidationFailed
from ci_eval.load.discover import DEFAULT_INCLUDE, Ignored, discover_all
from ci_eval.load.evalsets import (
    Failed,
    FileOutcome,
    LoadedEvalSet,
    LoadedSidecar,
    Skipped,
    load_all,
)
from ci_eval.metrics.pr_code import PullRequestCode
from ci_eval.model.metric_spec import MetricConfig, defaults_dialect
from ci_eval.settings.parse import parse_metric_table
from ci_eval.simulate import scenario_of
from ci_eval.text.plural import plural

TRACE_NOTE = "trace mode: recorded conversation is scored, the agent is not called"


_n = plural


def simulated(outcome: LoadedEvalSet) -> int:
    """Cases whose user turns an LLM writes (they need a simulator to run)."""
    return sum(1 for c in outcome.eval_set.eval_cases if scenario_of(c, outcome.dialect))


def set_line(outcome: LoadedEvalSet) -> str:
    es = outcome.eval_set
    metrics = outcome.metrics
    source = (
        f" ({defaults_label(outcome.dialect, defaults_dialect(outcome.dialect, es))})"
        if metrics.source == "default"
        else f" from {metrics.source}"
    )
    sim = simulated(outcome)
    return (
        f"{outcome.path}: ok: {outcome.dialect}, {_n(len(es.eval_cases), 'case')}"
        + (f" ({sim} with a simulated user)" if sim else "")
        + ", "
        f"{_n(es.invocation_count(), 'invocation')}; metrics {metrics.describe()}{source}"
    )


def _needs_elsewhere(config: MetricConfig, where: str, said: set[str]) -> Iterator[str]:
    """Metrics that need a service ci-eval does not call, once per config that names them."""
    from ci_eval import preflight

    if config.source != "default" and config.source not in said:
        said.add(config.source)
        for line in preflight.needs_elsewhere(config, where):
            yield f"{line} (warning)"


def validate_lines(
    outcomes: list[FileOutcome], ignored: list[Ignored], verbose: bool = False
) -> Iterator[str]:
    said: set[str] = set()
    for outcome in outcomes:
        if isinstance(outcome, LoadedEvalSet):
            yield set_line(outcome)
            cases = outcome.eval_set.eval_cases
            traced = sum(1 for c in cases if c.trace_actuals is not None)
            if traced:
                yield f"{outcome.path}: {TRACE_NOTE} ({traced} of {_n(len(cases), 'case')})"
            for warning in outcome.warnings:
                yield f"{warning} (warning)"
            yield from _needs_elsewhere(outcome.metrics, outcome.path, said)
        elif isinstance(outcome, LoadedSidecar):
            yield f"{outcome.path}: ok: {outcome.kind}; metrics {outcome.config.describe()}"
            yield from _needs_elsewhere(outcome.config, outcome.path, said)
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


def validate_counts(outcomes: list[FileOutcome], ignored: list[Ignored], verbose: bool) -> str:
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


@dataclass
class Validation:
    """What ``ci-eval validate`` prints: ``lines`` on standard output, ``notes`` on standard
    error, and whether every eval set is valid."""

    lines: list[str]
    notes: list[str]
    valid: bool


def validate(
    paths: list[Path],
    include: list[str] | None,
    exclude: list[str] | None,
    eval_config: Path | None,
    verbose: bool,
) -> Validation:
    """The validate stage: discover, load, check the metric names (custom metrics of
    ci-eval.toml included) and tally. A file that cannot be read at all raises InputError."""
    from ci_eval import preflight
    from ci_eval.settings import find_config, load_config

    # what `run` would use: ci-eval.toml's [run] where no flag says otherwise, and its [metrics]
    config = find_config()
    settings = load_config(config, required=False)
    paths = paths or [Path(p) for p in settings.paths]
    include = include or settings.include or None
    exclude = exclude or settings.exclude or None
    if eval_config is None and settings.eval_config:
        eval_config = Path(settings.eval_config)
    found = discover_all(paths, include, exclude)
    outcomes = load_all(found.candidates, eval_config, dialect=settings.dialect)
    if settings.metrics:
        table = MetricConfig(parse_metric_table(settings.metrics), f"{config} [metrics]", "adk")
        outcomes = [_with_table(o, table) for o in outcomes]
    # as `run` does: code a pull request changed is not imported into this process
    guard = PullRequestCode(os.environ)
    preflight.register_metrics(settings, guard)
    outcomes = with_metric_names_checked(outcomes, guard)
    outcomes, ignored = _read_configs(outcomes, found.ignored)
    lines = list(validate_lines(outcomes, ignored, verbose))
    if not any(isinstance(o, LoadedEvalSet | LoadedSidecar | Failed) for o in outcomes):
        skipped = sum(isinstance(o, Skipped) for o in outcomes) + len(found.ignored)
        return Validation(lines, _none_found(include, skipped, verbose), valid=False)
    invalid = any(isinstance(o, Failed) for o in outcomes)
    return Validation(lines, [validate_counts(outcomes, ignored, verbose)], not invalid)


def _none_found(include: list[str] | None, skipped: int, verbose: bool) -> list[str]:
    """What to say when no eval set was found: where it looked, and what it left out."""
    notes = [
        "no eval sets found (searched for "
        + ", ".join(include or DEFAULT_INCLUDE)
        + (", and any *.json in folders named eval*" if not include else "")
        + ")"
    ]
    if skipped and not verbose:
        notes.append(f"{_n(skipped, 'JSON file')} skipped or not read; -v lists them")
    return notes


def _with_table(outcome: FileOutcome, table: MetricConfig) -> FileOutcome:
    """A set without a config of its own is scored by ci-eval.toml's [metrics], as in `run`."""
    if isinstance(outcome, LoadedEvalSet) and outcome.metrics.source == "default":
        metrics = replace(table, dialect=outcome.metrics.dialect)
        return replace(outcome, metrics=metrics)
    return outcome


def _read_configs(
    outcomes: list[FileOutcome], ignored: list[Ignored]
) -> tuple[list[FileOutcome], list[Ignored]]:
    """The configs eval sets read their metrics from (a test_config.json beside a set, in a
    folder the search does not read) are sidecars, listed and counted as such; the rest of
    the JSON not read stays so."""
    used = {
        o.metrics.source: o.metrics
        for o in outcomes
        if isinstance(o, LoadedEvalSet) and o.metrics.source != "default"
    }
    kind = {"adk": "adk-config", "trpc": "trpc-metrics"}
    read = [
        LoadedSidecar(i.rel, kind.get(used[i.rel].dialect, "adk-config"), used[i.rel])
        for i in ignored
        if i.rel in used
    ]
    return outcomes + read, [i for i in ignored if i.rel not in used]


def with_metric_names_checked(
    outcomes: list[FileOutcome], guard: PullRequestCode | None = None
) -> list[FileOutcome]:
    """An eval set or sidecar naming a metric no registry knows, or a custom_metrics function
    google-adk cannot load (or no google-adk to load it), is invalid (as in `run`)."""
    from ci_eval import preflight

    out: list[FileOutcome] = []
    reported: set[str] = set()
    for outcome in outcomes:
        config = (
            outcome.metrics
            if isinstance(outcome, LoadedEvalSet) and outcome.metrics.source != "default"
            else outcome.config
            if isinstance(outcome, LoadedSidecar)
            else None
        )
        problems = (
            preflight.code_metric_problems(config, guard)
            + preflight.unknown_metrics(config, outcome.path)
            if config
            else []
        )
        if problems and config is not None and config.source in reported:
            problems = [
                InputError(
                    f"its metrics come from {config.source}, which names "
                    + (
                        "unknown metrics"
                        if all(p.message.startswith("unknown metric") for p in problems)
                        else "metrics that cannot run here"
                    ),
                    path=outcome.path,
                )
            ]
        elif problems and config is not None:
            reported.add(config.source)
        out.append(Failed(outcome.path, ValidationFailed(problems)) if problems else outcome)
    return out
