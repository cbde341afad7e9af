"""discover → load → run → (score → compare → report, as they land): the one pipeline that the
CLI and the action entrypoint call."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import __version__, preflight, redact
from ci_eval import baseline as baseline_store
from ci_eval import shard as shard_spec
from ci_eval.compare import compare
from ci_eval.config import RunSettings
from ci_eval.connectors import build_connector
from ci_eval.connectors.base import AgentError
from ci_eval.discover import discover
from ci_eval.errors import InputError, ValidationFailed
from ci_eval.gate import gate
from ci_eval.load import Failed, LoadedEvalSet, load_all
from ci_eval.metrics import lookup
from ci_eval.metrics.custom import register_custom, register_entry_points
from ci_eval.metrics.judge import Judge
from ci_eval.results import RunResults, to_json, write_json_atomic
from ci_eval.runner import RunOptions, run_sets
from ci_eval.runner import _selected as selected
from ci_eval.score import ScoreOptions, parse_metric_option, parse_metric_table, score_results


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
    outcomes = load_all(candidates, Path(settings.eval_config) if settings.eval_config else None)
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


def score_options(settings: RunSettings) -> ScoreOptions:
    """Metric overrides, the repository's metric table, custom metrics and the judge."""
    try:
        overrides = [parse_metric_option(m) for m in settings.metric]
        repo = parse_metric_table(settings.metrics)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    register_custom(settings.custom_metrics)
    register_entry_points()
    unknown = [m.name for m in overrides if lookup(m.name) is None]
    if unknown:
        raise InputError(f"--metric: unknown metric(s) {', '.join(unknown)}; see `ci-eval metrics`")
    if settings.min_pass is not None and not 1 <= settings.min_pass <= settings.num_runs:
        raise InputError(f"--min-pass must be between 1 and --num-runs ({settings.num_runs})")
    return ScoreOptions(overrides, repo, settings.min_pass, make_judge(settings))


def make_judge(settings: RunSettings) -> Judge | None:
    config = settings.judge
    if not config.base_url and not config.model:
        return None
    if not config.base_url or not config.model:
        raise InputError("the judge needs both a base URL and a model")
    key = None
    if config.api_key_env:
        key = os.environ.get(config.api_key_env)
        if not key:
            raise InputError(
                f"the environment variable {config.api_key_env} (the judge's API key) is not set"
            )
    return Judge(
        config,
        key,
        Path(settings.template_dir) if settings.template_dir else None,
    )


def apply_baseline(
    results: RunResults, settings: RunSettings, env: Mapping[str, str] | None = None
) -> list[str]:
    """Compare with the baseline (a file, or the file at a git ref) and set the gate's
    --fail-on default. Returns notices for the terminal; warnings also go to the summary."""
    env = os.environ if env is None else env
    preflight.gate_options(settings)
    path = settings.baseline or baseline_store.DEFAULT_PATH
    ref = settings.baseline_ref or (None if settings.baseline else baseline_store.default_ref(env))
    if ref:
        data = baseline_store.read_at_ref(ref, path)
        where = f"{path} at {ref}"
    else:
        data = baseline_store.read(Path(path))
        where = path
    explicit = preflight.fail_on(settings.fail_on)
    notices = []
    if data is None:
        results.fail_on = explicit or ("failure", "error")
        notices.append(
            f"no baseline at {where}: gating on thresholds only (create one with "
            "`ci-eval baseline update RESULTS`)"
        )
        return notices
    comparison = compare(results, data, settings.tolerance, settings.significance)
    provenance = data.get("provenance") or {}
    if provenance.get("metrics_digest") not in (None, baseline_store.metrics_digest(results)):
        comparison.warnings.append(
            "the baseline was recorded with another metric configuration: compare with care"
        )
    version = str(provenance.get("ci_eval_version") or "")
    if version and version.split(".")[0] != __version__.split(".")[0]:
        comparison.warnings.append(
            f"the baseline was recorded by ci-eval {version} (now {__version__})"
        )
    age = baseline_store.age_days(data)
    if age is not None and age > settings.baseline_max_age:
        comparison.warnings.append(
            f"the baseline is {age:.0f} days old (more than "
            f"{settings.baseline_max_age:g}): consider updating it"
        )
    results.comparison = comparison
    results.fail_on = explicit or ("regression", "error")
    notices += [f"baseline warning: {w}" for w in comparison.warnings]
    return notices


def _calls_the_agent(sets: list[LoadedEvalSet], settings: RunSettings) -> bool:
    """Whether any selected case needs the agent (trace-mode cases score their recording)."""
    part = shard_spec.parse(settings.shard) if settings.shard else None
    return any(
        case.trace_actuals is None
        and selected(s.eval_set.eval_set_id, case.eval_id, settings.cases)
        and shard_spec.selected(s.eval_set.eval_set_id, case.eval_id, part)
        for s in sets
        for case in s.eval_set.eval_cases
    )


def child_environment(settings: RunSettings, env: Mapping[str, str]) -> dict[str, str]:
    """What a command agent sees: the job's environment without GitHub's and the Actions
    runtime's tokens, the action's inputs, the judge's key and the agent's own token — except
    the variables the user passes through with ``--agent-env`` / ``[agent] env``."""
    drop = [n for n in (settings.judge.api_key_env, settings.agent.token_env) if n]
    return redact.child_environment(env, drop=drop, keep=settings.agent.env)


def run(settings: RunSettings, stop: threading.Event | None = None) -> Outcome:
    redact.register_settings(settings, os.environ)
    sets = load_eval_sets(settings)
    # what is loaded lives to the end: out of the cyclic collector's sight, which would
    # otherwise rescan it again and again (at 20,000 cases, a third of the run)
    gc.freeze()
    check_case_filters(sets, settings.cases)
    preflight.run(settings, os.environ)  # options, output paths, baseline: before any agent
    options = score_options(settings)
    connector = build_connector(
        settings.agent,
        settings.timeout,
        settings.retries,
        child_env=child_environment(settings, os.environ),
    )
    if hasattr(connector, "verify") and _calls_the_agent(sets, settings):
        try:
            connector.verify()
        except AgentError as exc:
            connector.close()
            raise InputError(str(exc)) from None
    if settings.agent.replay_pick == "all" and settings.num_runs == 1:
        # one run per recording: every recording of a case is scored
        settings.num_runs = getattr(connector, "max_recordings", lambda: 1)()
    try:
        results = run_sets(
            sets,
            connector,
            RunOptions(
                settings.concurrency,
                settings.num_runs,
                settings.cases,
                shard_spec.parse(settings.shard) if settings.shard else None,
            ),
            stop=stop,
        )
    finally:
        connector.close()
    gc.freeze()  # the same for what the agent produced
    results.settings = {
        "agent": settings.agent.kind,
        "concurrency": settings.concurrency,
        "timeout": settings.timeout,
        "retries": settings.retries,
        "num_runs": settings.num_runs,
        "min_pass": settings.min_pass,
        "shard": settings.shard,
    }
    score_results(results, options)
    notices = [f"warning: {w}" for loaded in sets for w in loaded.warnings]
    notices += apply_baseline(results, settings)
    if settings.results:
        write_json_atomic(Path(settings.results), to_json(results))
    if settings.update_baseline:
        path = Path(settings.baseline or baseline_store.DEFAULT_PATH)
        baseline_store.write(path, baseline_store.from_results(results))
        notices.append(f"baseline written to {path}")
    return Outcome(results, gate(results), notices)
