"""The same-day control (``--control``): the merge base's agent run in this job, on the same
cases, scored as the pull request's are (:mod:`ci_eval.run.control` finds it and its
worktree). ``--control auto`` runs it only when the suite-wide test alone fires, on a sample
of the cases (:mod:`ci_eval.gate.auto_control`), and uses it only when the merge base's agent
shows the drop too."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from ci_eval.connectors import build_connector
from ci_eval.gate import auto_control, confirm
from ci_eval.gate.compare import compare
from ci_eval.gate.main_history import confirm_target
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model.baseline import Baseline
from ci_eval.model.comparison import Acceptance
from ci_eval.model.results import CaseRecord
from ci_eval.model.status import Status
from ci_eval.results.file import RunResults
from ci_eval.run import control as control_run
from ci_eval.run.runner import RunOptions, run_sets
from ci_eval.score.scorer import ScoreOptions, Scorer
from ci_eval.settings import GateSettings, RunSettings
from ci_eval.text import redact
from ci_eval.text.plural import plural


def child_environment(settings: RunSettings, env: Mapping[str, str]) -> dict[str, str]:
    """What a command agent sees: the job's environment without GitHub's and the Actions
    runtime's tokens, the action's inputs, the judge's key and the agent's own token — except
    the variables the user passes through with ``--agent-env`` / ``[agent] env``."""
    keys = (settings.judge.api_key_env, settings.agent.token_env, settings.cache_sign_key_env)
    drop = [n for n in keys if n]
    return redact.child_environment(env, drop=drop, keep=settings.agent.env)


def run_control(
    settings: RunSettings,
    sha: str,
    env: Mapping[str, str],
    sets: list[LoadedEvalSet],
    run_options: RunOptions,
    options: ScoreOptions,
    stop: threading.Event | None,
) -> tuple[RunResults, str]:
    """The same-day control (:mod:`ci_eval.run.control`): the merge base's agent on the same
    cases, as many runs, in this job; scored as the PR's are. Returns its results and the line
    that says what it ran."""
    with control_run.agent(settings, sha) as (agent, named):
        connector = build_connector(
            agent,
            settings.timeout,
            settings.retries,
            child_env=child_environment(settings, env),
            env=env,
        )
        scorer = Scorer(options, then=CaseRecord.compact)
        try:
            control = run_sets(
                sets,
                connector,
                dataclasses.replace(run_options, case_done=scorer.case, meanwhile=None),
                stop=stop,
            )
        finally:
            connector.close()
        scorer.rest(control)
    runs = sum(len(c.runs) for _, c in control.cases())
    return control, (
        f"same-day control: {plural(runs, 'agent run')} of {named} on the same cases in this job"
    )


@dataclass(frozen=True)
class AutoGate:
    """What ``--control auto`` judges by: main's history, the gate's settings, the accepted
    entries, and how the control's runs are scored."""

    baseline: Baseline
    settings: GateSettings
    accepted: list[Acceptance]
    options: ScoreOptions


def auto_control_run(
    settings: RunSettings,
    env: Mapping[str, str],
    sha: str,
    sets: list[LoadedEvalSet],
    gate: AutoGate,
    results: RunResults,
    run_options: RunOptions,
    stop: threading.Event | None,
) -> tuple[RunResults | None, str | None]:
    """``--control auto``: nothing unless the suite-wide test alone fires against main's
    history; then the merge base's agent on a sample of the cases (``auto_control.SAMPLE``,
    ``auto_control.RUNS`` runs each). Returns the control when the merge base's agent shows the
    drop too (the pull request is then judged against it), else None; and what to say."""
    first = compare(results, gate.baseline, gate.settings, gate.accepted, confirm_target(results))
    if not auto_control.wanted(first):
        return None, None
    judged = (Status.PASSED, Status.FAILED)
    keys = set(auto_control.sample([(s.eval_set_id, c.eval_id) for s in results.sets
                                    for c in s.cases if c.status in judged]))  # fmt: skip
    sampled = [s for s in (_only(s, keys) for s in sets) if s.eval_set.eval_cases]
    runs = auto_control.runs(run_options.num_runs)
    control, said = run_control(
        settings, sha, env, sampled, dataclasses.replace(run_options, num_runs=runs),
        gate.options, stop,
    )  # fmt: skip
    control.settings.num_runs = runs
    today = compare(control, gate.baseline, gate.settings, gate.accepted, confirm.target(runs, 0))
    head = (
        f"{settings.names.name('control')} auto: the suite-wide test alone fired, so a same-day "
        f"control ran {said.removeprefix('same-day control: ')} "
        f"({plural(len(keys), 'case')} sampled)"
    )
    if auto_control.the_days(today):
        results.settings.day_shared = (
            f"a broad drop the merge base's agent shows too today ({plural(len(keys), 'case')}, "
            f"{settings.names.name('control')} auto): judged against it"
        )
        return control, f"{head}: it shows the drop too, and this pull request is judged against it"
    results.settings.day_ruled_out = (
        f"not the provider's day: the merge base's agent, run in this job on "
        f"{plural(len(keys), 'case')} ({settings.names.name('control')} auto), shows no drop "
        "against main's history"
    )
    return None, (
        f"{head}: it shows no drop against main's history today, so the drop is this pull request's"
    )


def _only(loaded: LoadedEvalSet, keys: set[tuple[str, str]]) -> LoadedEvalSet:
    es = loaded.eval_set
    cases = [c for c in es.eval_cases if (es.eval_set_id, c.eval_id) in keys]
    return dataclasses.replace(loaded, eval_set=es.model_copy(update={"eval_cases": cases}))
