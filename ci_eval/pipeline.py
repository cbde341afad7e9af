"""discover → load → run → (score → compare → report, as they land): the one pipeline that the
CLI and the action entrypoint call."""

from __future__ import annotations

import dataclasses
import gc
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import preflight
from ci_eval.connectors import adk_missing_message, build_connector
from ci_eval.connectors.base import AgentError, AgentUnreachable, Connector, Unanswered
from ci_eval.errors import InputError, ValidationFailed
from ci_eval.gate import changed as changed_cases
from ci_eval.gate import confirm
from ci_eval.gate.changed import Selection
from ci_eval.gate.compare import compare
from ci_eval.gate.decision import gate
from ci_eval.gate.main_history import (
    LoadedBaseline,
    apply_baseline,
    confirm_target,
    load_baseline,
    update_baseline,
)
from ci_eval.gate.set_lines import pass_rates
from ci_eval.io import reaper
from ci_eval.io.jsonfast import paused_gc
from ci_eval.load.discover import discover
from ci_eval.load.evalsets import Failed, LoadedEvalSet, load_all, skipped_line
from ci_eval.metrics import adk_code, adk_judges, lookup
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.pr_code import PullRequestCode, not_run_reasons
from ci_eval.metrics.registry import did_you_mean
from ci_eval.model import EvalCase
from ci_eval.model.comparison import Comparison
from ci_eval.model.describe import trajectory_counts
from ci_eval.model.facts import LlmUse, RunFacts
from ci_eval.model.results import CaseRecord
from ci_eval.net import llm, llm_cache
from ci_eval.net.llm import ChatClient
from ci_eval.net.llm_cache import ResponseCache
from ci_eval.results import spill as spill_to
from ci_eval.results import usage_totals
from ci_eval.results.file import RunResults, write_results
from ci_eval.run import control as control_run
from ci_eval.run import selection as shard_spec
from ci_eval.run.ceiling import Ceiling
from ci_eval.run.ceiling import said as ceiling_said
from ci_eval.run.runner import Reran, RunOptions, rerun, run_sets
from ci_eval.same_day import AutoGate, auto_control_run, child_environment, run_control
from ci_eval.score.scorer import ScoreOptions, Scorer
from ci_eval.settings import GateSettings, Plan, RunSettings, api_key
from ci_eval.settings.parse import CaseFilter
from ci_eval.simulate import SimulatorFactory, build_simulator
from ci_eval.text import redact
from ci_eval.text.plural import listed, plural
from ci_eval.worker import processes as workers


@dataclass
class RunOutcome:
    results: RunResults
    exit_code: int
    problems: list[str] = field(default_factory=list)
    results_written: bool = True  # the results file asked for, written


def load_eval_sets(settings: RunSettings) -> list[LoadedEvalSet]:
    """All eval sets under the settings' paths; any invalid one is an input error (exit 2)."""
    return load_eval_sets_said(settings)[0]


def load_eval_sets_said(settings: RunSettings) -> tuple[list[LoadedEvalSet], str | None]:
    """:func:`load_eval_sets`, and the line that names the JSON files skipped as no eval set
    of any dialect (None: none was)."""
    candidates = discover(
        [Path(p) for p in settings.paths],
        settings.include or None,
        settings.exclude or None,
        Path(settings.root) if settings.root else None,
    )
    eval_config = Path(settings.eval_config) if settings.eval_config else None
    outcomes = load_all(
        candidates, eval_config, settings.names.name("eval_config"), settings.dialect
    )
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
    return sets, skipped_line(outcomes)


def check_case_filters(
    sets: list[LoadedEvalSet], filters: tuple[CaseFilter, ...], option: str = "--case"
) -> None:
    known = {(s.eval_set.eval_set_id, c.eval_id) for s in sets for c in s.eval_set.eval_cases}
    bad = shard_spec.unmatched(filters, known)
    if bad is not None:
        raise InputError(
            f"{option} {bad.text}: no such eval set or case (give SET_ID:CASE_ID)"
            + shard_spec.suggestion(bad, known)
        )


def score_options(
    settings: RunSettings,
    plan: Plan,
    env: Mapping[str, str] | None = None,
    sets: Sequence[LoadedEvalSet] = (),
) -> ScoreOptions:
    """Metric overrides, the repository's metric table, custom metrics (the eval configs'
    code_config ones too) and the judge."""
    # repository code a pull request changed is not imported into the job's process
    guard = PullRequestCode(os.environ if env is None else env, settings.trust_pr_config)
    preflight.register_metrics(settings, guard)
    preflight.register_code_metrics(sets, guard)  # the eval configs' own metric code
    code = {spec.name for s in sets for spec, _ in adk_code.code_metrics(s.metrics)}
    unknown = [
        m.name for m in plan.metric_overrides if lookup(m.name) is None and m.name not in code
    ]
    if unknown:
        raise InputError(
            f"{settings.names.name('metric')}: unknown metric(s) {', '.join(unknown)}"
            f"{did_you_mean(unknown[0]) if len(unknown) == 1 else ''}; "
            "see `ci-eval metrics`"
        )
    return ScoreOptions(
        list(plan.metric_overrides),
        list(plan.metric_table),
        settings.min_pass,
        make_judge(settings, env),
    )


def make_judge(settings: RunSettings, env: Mapping[str, str] | None = None) -> Judge | None:
    """The LLM judge the settings describe (None: none); its key read from ``env`` (default:
    the process's environment)."""
    env = os.environ if env is None else env
    config = settings.judge
    if not config.base_url and not config.model:
        return None
    if not config.base_url or not config.model:
        raise InputError(
            "the judge needs both a base URL and a model ([judge] base_url and model, or "
            f"{settings.names.name('judge.base_url')} and {settings.names.name('judge.model')}; "
            "an ADK eval config's judge_model_options.judge_model gives the model)"
        )
    return Judge(
        config,
        api_key(env, config.api_key_env, "the judge's"),
        Path(settings.template_dir) if settings.template_dir else None,
    )


def confirmation_reruns(
    results: RunResults,
    gate_settings: GateSettings,
    loaded: LoadedBaseline,
    cases: dict[tuple[str, str], tuple[LoadedEvalSet, EvalCase]],
    rerun_one: Callable[[list[tuple[LoadedEvalSet, EvalCase, CaseRecord]]], Reran],
    scorer: Scorer,
    stop: threading.Event | None = None,
) -> list[str]:
    """Rerun, a run a round, each failing case the comparison cannot decide yet (see
    :mod:`ci_eval.gate.confirm`), rescoring it after each; the rounds stop when none is left, or
    when the job is cancelled (the results then say it was interrupted). Returns what to say
    of them."""
    if loaded.data is None:
        return []
    runs_target = confirm_target(results)

    def judged() -> Comparison:
        return compare(results, loaded.data, gate_settings, loaded.accepted, runs_target)

    comparison = judged()  # the outage check's and the first round's
    why_not = confirm.outage(comparison, results, runs_target)
    if why_not:
        results.settings.outage = why_not
        return [why_not]
    stopped = stop.is_set if stop is not None else lambda: False
    rounds = _Rounds(rerun_one, scorer, cases, results)
    for _ in range(gate_settings.confirm_runs):
        asked = confirm.to_confirm(comparison, runs_target)
        keys = [k for k in asked if k in cases and k not in rounds.none_left]
        if stopped() or not keys:
            break
        rounds.run(keys)
        comparison = judged()
    if stopped():  # cancelled before or during a round: its runs say so
        results.interrupted = True
    results.settings.confirmation_reruns = rounds.spent
    results.settings.no_run_left = [f"{s}:{c}" for s, c in sorted(rounds.none_left)]
    return rounds.said()


class _Rounds:
    """Confirmation rounds: runs made, cases rerun, cases with no recorded run left."""

    def __init__(
        self,
        rerun_one: Callable[[list[tuple[LoadedEvalSet, EvalCase, CaseRecord]]], Reran],
        scorer: Scorer,
        cases: dict[tuple[str, str], tuple[LoadedEvalSet, EvalCase]],
        results: RunResults,
    ) -> None:
        self.rerun_one, self.scorer, self.cases = rerun_one, scorer, cases
        self.records = {(s.eval_set_id, c.eval_id): c for s in results.sets for c in s.cases}
        self.by_set = {s.eval_set_id: s for s in results.sets}
        self.spent = 0
        self.rerun_cases: set[tuple[str, str]] = set()
        self.none_left: set[tuple[str, str]] = set()

    def run(self, keys: list[tuple[str, str]]) -> None:
        """One round: a run of each case, rescored."""
        reran = self.rerun_one([(*self.cases[k], self.records[k]) for k in keys])
        self.none_left.update(reran.none_left)
        made = [k for k in keys if k not in self.none_left]
        self.rerun_cases.update(made)
        for key in made:
            self.scorer.case(self.by_set[key[0]], self.records[key])
        self.spent += reran.made

    def said(self) -> list[str]:
        said = []
        if self.spent:
            cases = [f"{s}:{c}" for s, c in sorted(self.rerun_cases)]
            said.append(
                f"confirmation reruns: {plural(self.spent, 'agent run')} of "
                f"{plural(len(cases), 'failing case')} ({listed(cases, 5)}), "
                "before the gate decided"
            )
        if self.none_left:
            ids = listed([f"{s}:{c}" for s, c in sorted(self.none_left)], 5)
            said.append(
                f"no recorded run left to confirm {plural(len(self.none_left), 'failing case')} "
                f"({ids}): a recorded run is evidence once, so the gate judges the runs "
                "recorded; record more runs of them to confirm a break"
            )
        return said


def _calls_the_agent(sets: list[LoadedEvalSet], plan: Plan) -> bool:
    """Whether any selected case needs the agent (trace-mode cases score their recording)."""
    return any(
        case.trace_actuals is None
        and shard_spec.case_selected(plan.cases, s.eval_set.eval_set_id, case.eval_id)
        and shard_spec.selected(s.eval_set.eval_set_id, case.eval_id, plan.shard)
        for s in sets
        for case in s.eval_set.eval_cases
    )


def prepare_after_run(settings: RunSettings, env: Mapping[str, str]) -> None:
    """Import (and build) what the results file and the report stage use, while the agent's turns
    are in flight and the main thread would only wait (``RunOptions.meanwhile``): part of a
    run's start-up off its critical path. The Markdown renderer and jinja2 only when a summary
    or comment will be rendered."""
    import ci_eval.io.jsonwrite
    import ci_eval.publish
    import ci_eval.report.terminal
    from ci_eval.model import results_file

    results_file.warm()  # the results file's writers: the report stage reads results as well
    if settings.summary or settings.comment or env.get("GITHUB_STEP_SUMMARY"):
        import ci_eval.report.markdown  # noqa: F401


@dataclass
class _Job:
    """Everything a run has ready before its first agent call, then what it found."""

    settings: RunSettings
    env: Mapping[str, str]
    sets: list[LoadedEvalSet]
    plan: Plan
    options: ScoreOptions
    simulator: SimulatorFactory | None
    judge_llm: ChatClient | None
    simulator_llm: ChatClient | None
    cache: ResponseCache | None
    ceiling: Ceiling | None
    loaded: LoadedBaseline
    selection: Selection | None
    control_sha: str | None
    notices: list[str] = field(default_factory=list)
    skipped: str | None = None  # the JSON files discovery skipped, named in one line


def run(
    settings: RunSettings, stop: threading.Event | None = None, env: Mapping[str, str] | None = None
) -> RunOutcome:
    """Evaluate: every check before the first agent call, then replay, score, compare and
    write the results file. ``env`` is the job's environment (default: the process's)."""
    env = os.environ if env is None else env
    # built by settings.build, and so frozen; a caller's own settings are frozen here
    job = _prepare(settings.freeze(), env)
    connector = _connect(job)
    results, run_options = _run_and_score(job, connector, stop)
    # what the connector holds (a replay's recordings, large for a large run) goes before
    # reporting, where a run peaks
    del connector
    gc.freeze()  # the same for what the agent produced
    control, said = _control(job, results, run_options, stop)
    job.notices += [said] if said else []
    if control is not None and control.interrupted:
        results.interrupted = True
    # compare first (against the baseline as it was), then write
    job.notices += apply_baseline(results, settings, env, job.plan.gate, job.loaded, control)
    _record_usage(job, results)
    written = _write_results(job, results)
    if settings.update_baseline:
        job.notices.append(update_baseline(results, settings))
    return RunOutcome(results, gate(results), job.notices, written)


def _control(
    job: _Job, results: RunResults, run_options: RunOptions, stop: threading.Event | None
) -> tuple[RunResults | None, str | None]:
    """The same-day control, when one is asked for (``auto``: when it would decide)."""
    settings, data = job.settings, job.loaded.data
    if not job.control_sha or results.interrupted or data is None:
        return None, None
    if settings.control == control_run.AUTO:
        gate_by = AutoGate(data, job.plan.gate, job.loaded.accepted, job.options)
        return auto_control_run(
            settings, job.env, job.control_sha, job.sets, gate_by, results, run_options, stop
        )
    return run_control(settings, job.control_sha, job.env, job.sets, run_options, job.options, stop)


def _prepare(settings: RunSettings, env: Mapping[str, str]) -> _Job:
    """Every check before the first agent call: the eval sets, the plan, the metrics, the
    judge and simulator, the budget, the baseline, the selection and the control."""
    redact.register_settings(settings, env)
    # before any worker or agent starts: our environ is not theirs to read; the workers (the
    # repository's metric code, an in-process agent) get what an agent gets
    redact.undumpable()
    workers.configure(child_environment(settings, env), settings.agent.user)
    if settings.agent.kind == "adk" and settings.agent.module and not adk_missing_message(env):
        workers.prestart_agent(settings.agent.module)  # its imports overlap the loading below
    with paused_gc():
        sets, skipped = load_eval_sets_said(settings)
        # what is loaded lives to the end: out of the cyclic collector's sight, which would
        # otherwise rescan it again and again, at a cost that grows with the run; frozen
        # before the collector is back, whose first pass would walk all of it once more
        gc.freeze()
    plan = preflight.run(settings)  # settings and output paths: before any agent call
    check_case_filters(sets, plan.cases, settings.names.name("cases"))
    control_run.check(settings)
    # the judge's model from an eval config where no setting names one (the simulator, whose
    # default is the judge's, takes it too)
    settings, judge_said = preflight.judge_model_of_configs(settings, sets)
    options = score_options(settings, plan, env, sets)
    simulator = build_simulator(settings.simulator, settings.judge, env)
    # the judge's and the simulator's clients: their answers cached (--cache), their usage counted
    judge_llm, simulator_llm = (x.client if x else None for x in (options.judge, simulator))
    try:
        cache, cached_said = llm_cache.attach(
            (judge_llm, simulator_llm),
            settings.cache,
            settings.cache_ttl,
            settings.update_baseline,
            env,
            settings.cache_sign_key_env,
            settings.cache_public_key,
        )
    except ValueError as exc:
        raise InputError(f"response cache: {exc}") from None
    if not settings.metric:  # --metric replaces the sets' own metrics
        preflight.check_metric_names(sets, settings)
    ceiling = job_ceiling(settings)
    for client, role in ((judge_llm, "judge"), (simulator_llm, "simulator")):
        if client is not None:
            client.ceiling, client.role = ceiling, role
    loaded = load_baseline(settings, env)
    selection = None
    if settings.select == "changed":
        root = Path(settings.root or ".")
        selection = changed_cases.select(sets, loaded.data, env, root, settings.agent.watch)
    # the control's commit, found before any agent call (with no baseline there is nothing to
    # judge against, and no control is run)
    control_sha, not_auto = control_run.commit(settings, env) if loaded.data else (None, None)
    job = _Job(
        settings, env, sets, plan, options, simulator, judge_llm, simulator_llm, cache, ceiling,
        loaded, selection, control_sha,
    )  # fmt: skip
    job.notices = [judge_said] if judge_said else []
    job.notices += list(cached_said) + ([not_auto] if not_auto else [])  # after the connector's
    job.skipped = skipped
    return job


def _connect(job: _Job) -> Connector:
    """The agent's connector, checked where it can be before any case runs, and the notices
    so far in their order; a replay of every recording runs each case once per recording."""
    settings, env, sets, plan = job.settings, job.env, job.sets, job.plan
    connector = build_connector(
        settings.agent,
        settings.timeout,
        settings.retries,
        child_env=child_environment(settings, env),
        env=env,
    )
    if _calls_the_agent(sets, plan):
        try:
            connector.verify(c for s in sets for c in s.eval_set.eval_cases)
        except AgentUnreachable as exc:
            # infrastructure, not input: every case an ERROR in every report, exit 3
            connector.close()
            connector = Unanswered(str(exc), connector.kind, connector.describe())
        except AgentError as exc:
            connector.close()
            raise InputError(str(exc)) from None
    job.notices = _first_notices(job, connector)
    if settings.agent.replay_pick == "all" and plan.num_runs == 1:
        # one run per recording: every recording of a case is scored
        job.plan = dataclasses.replace(plan, num_runs=connector.max_recordings())
    return connector


def _first_notices(job: _Job, connector: Connector) -> list[str]:
    """What is said before any case runs, in its order: the files skipped, the eval sets', the
    connector's, the process reaper's, the plan's, the response cache's and the metrics'."""
    settings, sets, plan = job.settings, job.sets, job.plan
    notices = [job.skipped] if job.skipped else []
    notices += [f"warning: {w}" for loaded_set in sets for w in loaded_set.warnings]
    kept_root = connector.warning
    if kept_root and redact.current().secrets:  # root with nothing to read is no news
        notices.append(f"warning: {kept_root} (set {settings.agent.name('user')})")
    notices += [connector.announce] if connector.announce else []
    if settings.agent.kind in ("command", "adk"):  # agents ci-eval starts itself
        notices += [f"warning: {w}" for w in [reaper.unavailable_warning()] if w]
    notices += plan.notices
    notices += job.notices  # the response cache's
    notices += [f"warning: {n}" for n in preflight.metrics_needing_elsewhere(sets, plan)]
    return notices


def _run_and_score(
    job: _Job, connector: Connector, stop: threading.Event | None
) -> tuple[RunResults, RunOptions]:
    """The cases run and scored, each as its runs end (a judge's calls overlap the agent's
    turns), then kept as the results file will hold them: a run's memory is its cases' JSON,
    not their objects, and in a run of many cases their runs go to a temporary file until
    the reports read them. With a baseline, a failing case may be run again before the gate
    decides: its eval case is kept for that (without one, each case goes as its runs end)."""
    settings, env, sets, plan = job.settings, job.env, job.sets, job.plan
    total = sum(len(s.eval_set.eval_cases) for s in sets) * plan.num_runs
    spill = spill_to.for_run(total, env)
    scorer = Scorer(job.options, then=CaseRecord.compact if spill is None else spill.hold)
    confirming = job.loaded.data is not None and plan.gate.confirm_runs > 0
    kept = {
        (s.eval_set.eval_set_id, c.eval_id): (s, c)
        for s in sets
        for c in s.eval_set.eval_cases
        if confirming
    }
    run_options = RunOptions(
        plan.concurrency,
        plan.num_runs,
        plan.cases,
        plan.shard,
        settings.timeout,
        job.simulator,
        meanwhile=lambda: prepare_after_run(settings, env),
        case_done=scorer.case,
        # the sets are not read after the run, unless reruns or a control run them again
        release_cases=not confirming and not settings.control,
        carried=job.selection.carried if job.selection else {},
        ceiling=job.ceiling,
    )
    try:
        results = run_sets(sets, connector, run_options, stop=stop)
        _record_settings(job, results, confirming)
        scorer.rest(results)
        if confirming and not results.interrupted:
            job.notices += confirmation_reruns(
                results,
                plan.gate,
                job.loaded,
                kept,
                lambda targets, agent=connector: rerun(targets, agent, run_options, stop),
                scorer,
                stop,
            )
        if settings.agent.otlp:  # where the turns' tool calls came from, in every report
            results.settings.trajectories = trajectory_counts(c for _, c in results.cases())
        # a replay's recordings explain some scores: an eval set edited since, another ADK
        job.notices += connector.notices(results)
    finally:
        connector.close()
    return results, run_options


def _record_settings(job: _Job, results: RunResults, confirming: bool) -> None:
    """The run's settings in its results, with what the run itself found (a stop)."""
    stopped = results.settings.stopped
    results.settings = run_settings(job.settings, job.plan, job.simulator, confirming)
    if stopped:
        results.settings.stopped = stopped
        job.notices.append(stopped)
    if job.selection is not None:
        said = job.selection.said
        results.settings.selection = said  # said in the verdict
        job.notices.append(said)


def _record_usage(job: _Job, results: RunResults) -> None:
    """The judge's and the simulator's own usage, apart; the budget reached; the totals."""
    used = llm.usage_of(judge=job.judge_llm, simulator=job.simulator_llm)
    results.settings.llm_usage = {role: LlmUse(**u) for role, u in used.items()}
    cache = job.cache
    if cache is not None:
        results.settings.llm_cache = {"dir": job.settings.cache, "read": cache.read}
    job.notices += [line for line in [llm.usage_line(used)] if line]
    job.notices += [f"warning: {why}" for why in not_run_reasons()]
    job.notices += cache.said() if cache is not None else []
    reached = job.ceiling.report() if job.ceiling is not None else None
    if reached:  # a blocking item of the verdict (ci_eval.gate.usage_items)
        results.settings.budget_reached = reached
        job.notices.append(ceiling_said(reached))
    results.settings.usage_totals = usage_totals.summary(results)  # in the results file


def _write_results(job: _Job, results: RunResults) -> bool:
    """The results file, when asked for; False when it could not be written (the other
    reports are still written; the run then exits 3)."""
    if not job.settings.results:
        return True
    results.pass_rates = pass_rates(results)
    try:
        write_results(Path(job.settings.results), results)
    except OSError as exc:
        job.notices.append(
            f"error: cannot write the results file {job.settings.results}: {exc.strerror or exc}"
        )
        return False
    return True


def job_ceiling(settings: RunSettings) -> Ceiling | None:
    """[budget]'s binding limits for this job, checked before any call: a cost limit needs a
    price for the agent's tokens."""
    models = {"judge": settings.judge.model, "simulator": settings.simulator.model}
    ceiling = Ceiling.of(settings.budget, settings.prices, models)
    priced = ceiling is None or bool(ceiling.prices["agent"])
    if ceiling is not None and ceiling.limits.max_cost_per_run is not None and not priced:
        raise InputError(
            "[budget] max_cost_per_run needs a price for the agent's tokens: add [prices] "
            "agent = {input = …, output = …} ($ per million tokens), or [prices] default"
        )
    return ceiling


def run_settings(
    settings: RunSettings, plan: Plan, simulator: object, confirming: bool
) -> RunFacts:
    """What the results file records of the run's settings."""
    return RunFacts(
        agent=settings.agent.kind,
        concurrency=plan.concurrency,
        timeout=settings.timeout,
        retries=settings.retries,
        num_runs=plan.num_runs,
        min_pass=settings.min_pass,
        shard=settings.shard,
        simulator=None
        if simulator is None
        else {"model": simulator.client.model, "max_turns": simulator.config.max_turns},  # type: ignore[attr-defined]
        # whose code and prompts scored ADK's judged metrics (the ADK user simulator's
        # instructions: each simulated run's simulation.instructions)
        adk_prompts=adk_judges.source(),
        cases=settings.cases,
        confirm_runs=plan.gate.confirm_runs if confirming else 0,
        # what the pull request's ci-eval.toml changed of the bar, not applied
        bar_changes=list(settings.bar_changes),
        max_removed=plan.gate.max_removed,
        # the usage report's prices and the gate's [budget] (ci_eval.results.usage_totals)
        prices=dict(settings.prices),
        budget=dict(settings.budget),
        models={"judge": settings.judge.model, "simulator": settings.simulator.model},
    )
