"""Everything a run could refuse, refused before the first agent call: its settings (checked
once, :func:`ci_eval.settings.check`), the metric names the eval sets and ci-eval.toml use, and
where the outputs go (each one is probed by creating and removing a file there). A mistake
costs one line and exit 2, not a finished run whose results cannot be written."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.metrics import NEEDS, NOT_COMPUTED, adk_code, lookup
from ci_eval.metrics.custom import register_custom
from ci_eval.metrics.pr_code import PullRequestCode
from ci_eval.metrics.registry import did_you_mean
from ci_eval.model.metric_spec import MetricConfig
from ci_eval.settings import CONFIG_NAME, Plan, RunSettings
from ci_eval.settings.check import check


def _probe(directory: Path, option: str, shown: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".ci-eval-probe.", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"{option}: cannot write here: {exc.strerror or exc}", path=shown
        ) from None


def output_file(path: str | Path | None, option: str) -> None:
    """The file can be written (atomically: its directory takes a new file)."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{option}: is a directory, expected a file name", path=str(path))
    _probe(target.parent, option, str(path))


def output_dir(path: str | Path | None, option: str) -> None:
    if not path:
        return
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise InputError(f"{option}: exists and is not a directory", path=str(path))
    _probe(target, option, str(path))


def outputs(settings: RunSettings) -> None:
    """Every file and folder the run writes, named as the user set them."""
    name = settings.names.name
    output_file(settings.results, name("results"))
    output_file(settings.junit, name("junit"))
    output_file(settings.summary, name("summary"))
    output_dir(settings.adk_results, name("adk_results"))
    output_dir(settings.adk_rs_report, name("adk_rs_report"))
    output_dir(settings.trpc_results, name("trpc_results"))
    if settings.update_baseline:  # reading it is gate.main_history.load_baseline's
        output_file(settings.baseline_file(), name("baseline"))


def run(settings: RunSettings) -> Plan:
    """Every check that needs no agent, in the order a user would fix them; returns the
    settings parsed."""
    plan = check(settings)
    outputs(settings)
    return plan


def unknown_metrics(config: MetricConfig, where: str) -> list[InputError]:
    """Each metric a sidecar or config names that no registry knows: an input error naming the
    file, the JSON path and the known names (google-adk rejects such a config too)."""
    from ci_eval.metrics import REGISTRY

    dialect = config.dialect if config.dialect in ("adk", "trpc") else None
    problems = []
    code = {spec.name for spec, _ in adk_code.code_metrics(config)}  # register_code_metrics'
    for spec in config.metrics:
        name = spec.evaluator or spec.name
        if lookup(name, dialect) is not None or name in NOT_COMPUTED or spec.name in code:
            continue
        known = sorted({key.split("/")[-1] for key in REGISTRY})
        path, line, col, json_path = spec.origin or (where, None, None, None)
        problems.append(
            InputError(
                f"unknown metric {name!r}{did_you_mean(name)}; known: {', '.join(known)}",
                path=path,
                line=line,
                col=col,
                json_path=json_path,
            )
        )
    return problems


def register_metrics(settings: RunSettings, guard: PullRequestCode | None = None) -> None:
    """Custom metrics from ci-eval.toml and installed packages, before names are checked; code
    a pull request changed is not imported (``guard``)."""
    register_custom(settings.custom_metrics, guard)


def code_metric_problems(
    config: MetricConfig, guard: PullRequestCode | None = None
) -> list[InputError]:
    """The ADK eval config's custom_metrics with a code_config, registered (their functions
    imported by google-adk, after :func:`register_metrics`); what keeps one from running."""
    return adk_code.register_config(config, guard)


def register_code_metrics(
    sets: Iterable[LoadedEvalSet], guard: PullRequestCode | None = None
) -> None:
    """Every eval config's code_config metrics, before any agent call: a function google-adk
    cannot load, or no google-adk to load it, is exit 2, not a run of ERROR metrics."""
    problems: list[InputError] = []
    seen: set[str] = set()
    for s in sets:
        if s.metrics.source not in seen:
            seen.add(s.metrics.source)
            problems += code_metric_problems(s.metrics, guard)
    if problems:
        raise ValidationFailed(problems)


def check_metric_names(sets: list[LoadedEvalSet], settings: RunSettings) -> None:
    """Unknown metric names in sidecars or ci-eval.toml [metrics]: exit 2 before any agent call,
    never a silently NOT_EVALUATED case."""
    problems: list[InputError] = []
    seen: set[str] = set()
    for s in sets:
        if s.metrics.source in seen or s.metrics.source == "default":
            continue
        seen.add(s.metrics.source)
        problems += unknown_metrics(s.metrics, s.metrics.source)
    for name in settings.metrics:
        if lookup(name) is None:
            problems.append(
                InputError(
                    f"unknown metric {name!r} in [metrics]{did_you_mean(name)}; "
                    "see `ci-eval metrics`",
                    path=CONFIG_NAME,
                )
            )
    if problems:
        raise ValidationFailed(problems)


def needs_elsewhere(config: MetricConfig, where: str) -> list[str]:
    """A line per metric ``config`` names that needs what ci-eval does not call (Vertex AI's
    evaluation service), said before any agent call: its cases will be NOT_EVALUATED whatever
    the agent does, and the gate fails on that by default."""
    dialect = config.dialect if config.dialect in ("adk", "trpc") else None
    lines = []
    for spec in config.metrics:
        name = spec.evaluator or spec.name
        need = NEEDS.get(name)
        if need is None or lookup(name, dialect) is not None:  # a custom metric of that name
            continue
        path, line, col, json_path = spec.origin or (where, None, None, None)
        said = InputError(
            f"{name} needs {need}: its cases will be NOT_EVALUATED, which fails the gate "
            "unless --fail-on leaves out not-evaluated",
            path=path,
            line=line,
            col=col,
            json_path=json_path,
        )
        lines.append(str(said))
    return lines


def metrics_needing_elsewhere(sets: list[LoadedEvalSet], plan: Plan) -> list[str]:
    """:func:`needs_elsewhere` for a run: each set's config once (--metric, which replaces
    them, names only metrics ci-eval computes)."""
    if plan.metric_overrides:
        return []
    lines: list[str] = []
    seen: set[str] = set()
    for s in sets:
        if s.metrics.source not in seen and s.metrics.source != "default":
            seen.add(s.metrics.source)
            lines += needs_elsewhere(s.metrics, s.metrics.source)
    return lines


def judge_model_of_configs(
    settings: RunSettings, sets: Iterable[LoadedEvalSet]
) -> tuple[RunSettings, str | None]:
    """The settings with the judge's model an ADK eval config names (``judge_model_options.
    judge_model``, as in test_config.json), where a judge is asked for (a base URL) and neither
    [judge] nor the command line names a model; and the line that says so. [judge]'s model,
    when given, is the judge's, whatever a config names, and nothing is said. One model serves
    a run (one judge scores every set): where configs name several, the first set's is used
    and the line names the others."""
    judge = settings.judge
    if judge.model or not judge.base_url:
        return settings, None
    named: dict[str, str] = {}  # model → the first config that names it
    for s in sets:
        for model in s.metrics.judge_models():
            named.setdefault(model, s.metrics.source)
    if not named:
        return settings, None
    (model, source), *others = named.items()
    resolved = dataclasses.replace(settings, judge=dataclasses.replace(judge, model=model))
    flag = settings.names.name("judge.model")
    unset = "[judge] model" + (f" or {flag}" if flag != "[judge] model" else "")
    said = f"judge model {model} from {source} (no {unset} given)"
    if others:
        said += "; one judge model serves a run, so not " + ", ".join(
            f"{other} from {where}" for other, where in others
        )
    return resolved.freeze(), said
