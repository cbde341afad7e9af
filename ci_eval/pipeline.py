"""discover → load → run → (score → compare → report, as they land): the one pipeline that the
CLI and the action entrypoint call."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.config import RunSettings
from ci_eval.connectors import build_connector
from ci_eval.discover import discover
from ci_eval.errors import InputError, ValidationFailed
from ci_eval.load import Failed, LoadedEvalSet, load_all
from ci_eval.results import RunResults, to_json, write_json_atomic
from ci_eval.runner import RunOptions, run_sets

EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INFRA = 0, 1, 2, 3


@dataclass
class Outcome:
    results: RunResults
    exit_code: int
    problems: list[str] = field(default_factory=list)


def load_eval_sets(settings: RunSettings) -> list[LoadedEvalSet]:
    """All eval sets under the settings' paths; any invalid one is an input error (exit 2)."""
    candidates = discover(
        [Path(p) for p in settings.paths], settings.include or None, settings.exclude or None
    )
    outcomes = load_all(candidates)
    problems: list[InputError] = []
    for outcome in outcomes:
        if isinstance(outcome, Failed):
            error = outcome.error
            problems += error.problems if isinstance(error, ValidationFailed) else [error]
    if problems:
        raise ValidationFailed(problems)
    sets = [o for o in outcomes if isinstance(o, LoadedEvalSet)]
    if not sets:
        raise InputError("no eval sets found under " + ", ".join(settings.paths or ["."]))
    return sets


def check_case_filters(sets: list[LoadedEvalSet], filters: list[str]) -> None:
    known = {(s.eval_set.eval_set_id, c.eval_id) for s in sets for c in s.eval_set.eval_cases}
    set_ids = {k[0] for k in known}
    for f in filters:
        set_id, _, case_id = f.partition(":")
        if (
            case_id
            and (set_id, case_id) not in known
            and not (set_id == "*" and any(k[1] == case_id for k in known))
        ) or (not case_id and set_id not in set_ids):
            raise InputError(f"--case {f}: no such eval set or case (give SET_ID:CASE_ID)")


def run(settings: RunSettings, stop: threading.Event | None = None) -> Outcome:
    sets = load_eval_sets(settings)
    check_case_filters(sets, settings.cases)
    for name, value, low in (
        ("--concurrency", settings.concurrency, 1),
        ("--num-runs", settings.num_runs, 1),
        ("--retries", settings.retries, 0),
    ):
        if value < low:
            raise InputError(f"{name} must be at least {low}")
    if settings.timeout <= 0:
        raise InputError("--timeout must be positive")
    connector = build_connector(settings.agent, settings.timeout, settings.retries)
    try:
        results = run_sets(
            sets,
            connector,
            RunOptions(settings.concurrency, settings.num_runs, settings.cases),
            stop=stop,
        )
    finally:
        connector.close()
    results.settings = {
        "agent": settings.agent.kind,
        "concurrency": settings.concurrency,
        "timeout": settings.timeout,
        "retries": settings.retries,
        "num_runs": settings.num_runs,
    }
    if settings.results:
        write_json_atomic(Path(settings.results), to_json(results))
    errors = results.count("ERROR")
    return Outcome(results, EXIT_INFRA if errors or results.interrupted else EXIT_OK)


def summary_lines(results: RunResults) -> list[str]:
    lines = []
    for s in results.sets:
        completed = sum(1 for c in s.cases if c.status == "COMPLETED")
        errors = [c for c in s.cases if c.status == "ERROR"]
        skipped = sum(1 for c in s.cases if c.status == "SKIPPED")
        extra = f", {skipped} skipped" if skipped else ""
        name = s.file if s.eval_set_id == s.file else f"{s.eval_set_id} ({s.file})"
        lines.append(f"{name}: {completed}/{len(s.cases)} cases ran, {len(errors)} errors{extra}")
        lines += [f"  ERROR {c.eval_id} ({c.file}:{c.line}): {c.error}" for c in errors]
    total = len(results.cases())
    lines.append(
        f"{total} cases: {results.count('COMPLETED')} ran, {results.count('ERROR')} "
        f"errors, {results.count('SKIPPED')} skipped in {results.duration_s:.1f} s "
        f"({results.agent})" + (" — interrupted" if results.interrupted else "")
    )
    return lines
