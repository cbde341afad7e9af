"""ADK eval configs' ``custom_metrics``: a metric whose ``code_config.name`` names a function in
the repository, run by google-adk as ``adk eval`` runs it.

What google-adk 2.13 does with such an entry (``register_custom_metrics_from_config``, then
``MetricEvaluatorRegistry.get_evaluator``): ``code_config.name`` is ``package.module.function``;
the module is imported with ``importlib`` from ``sys.path`` and the function is called as
``function(eval_metric, actual_invocations, expected_invocations, conversation_scenario)`` with
ADK's own types — an ``EvalMetric`` whose ``threshold`` is taken out (its ``criterion`` keeps
it), lists of ADK ``Invocation``, the expected ones None and a ``ConversationScenario`` for a
simulated case — and awaited when it returns a coroutine. It returns an ``EvaluationResult``
whose ``overall_eval_status`` is the metric's verdict, kept as the function gave it.

ci-eval asks the installed google-adk to do all of that: each function is registered in an ADK
metric registry of its own, whose evaluator (ADK's ``_CustomMetricEvaluator``) finds, calls and
awaits it. The module path is resolved from the repository root (the working directory, put on
``sys.path`` as for ``[custom_metrics]``), where ``adk eval`` finds it when run from there with
``PYTHONPATH=.``, and pytest (ADK's ``AgentEvaluator``) from its rootdir.

Without google-adk there are no ADK types to call the function with: such a config is an input
error (exit 2) before the first agent call, naming the config and its metrics. The functions'
files count as custom metric code (``custom.source_files``): in a pull request, one it changed
is said in the verdict.
"""

from __future__ import annotations

import importlib
import os
import warnings
from pathlib import Path
from typing import Any

from ci_eval import ACTION_REPO, IMAGE, __version__
from ci_eval.errors import InputError
from ci_eval.metrics.base import Metric, MetricFailure, NotApplicable, ScoreContext
from ci_eval.metrics.custom import METRIC_TIMEOUT_S, add_source
from ci_eval.metrics.pr_code import PullRequestCode, not_run
from ci_eval.metrics.registry import REGISTRY, register
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status

# MetricConfig.extras keys (see load.sidecars): name -> the custom_metrics entry, and name ->
# where its code_config.name is written (path, line, col, json path)
ENTRIES, PLACES = "custom_metrics", "custom_metrics_at"


def code_metrics(config: MetricConfig) -> list[tuple[MetricSpec, dict[str, Any]]]:
    """Each metric of ``config`` (an ADK eval config's) that its ``custom_metrics`` run with a
    ``code_config``, with that entry."""
    entries = (config.extras or {}).get(ENTRIES) or {}
    return [
        (spec, entries[spec.name])
        for spec in config.metrics
        if spec.name in entries and spec.evaluator == function_path(entries[spec.name])
    ]


def function_path(entry: dict[str, Any]) -> str:
    """``code_config.name`` of a custom_metrics entry as written (google-adk reads either
    spelling)."""
    code = entry["code_config"] if "code_config" in entry else entry["codeConfig"]
    return str(code["name"])


def register_config(config: MetricConfig, guard: PullRequestCode | None = None) -> list[InputError]:
    """Register the code_config metrics ``config`` names, each function once a run; the
    problems (google-adk missing, a function it cannot load), each naming the config file,
    where in it, and the metric."""
    found = code_metrics(config)
    if not found:
        return []
    places = (config.extras or {}).get(PLACES) or {}
    missing = _adk_missing([spec.name for spec, _ in found])
    if missing:
        return [_error(missing, places.get(found[0][0].name), config.source)]
    problems = []
    for spec, entry in found:
        module = function_path(entry).rpartition(".")[0]
        changed = guard.changed(module) if guard and module else None
        if changed:  # not imported: importing runs it
            register(not_run(spec.name, changed))
            continue
        try:
            _register_one(spec.name, entry, guard)
        except _CannotLoad as exc:
            problems.append(_error(str(exc), places.get(spec.name), config.source))
    return problems


class _CannotLoad(Exception):
    pass


def _error(message: str, place: Any, source: str) -> InputError:
    path, line, col, json_path = place or (source, None, None, None)
    return InputError(message, path=path, line=line, col=col, json_path=json_path)


def _adk_missing(names: list[str]) -> str | None:
    """Why these metrics cannot run here, in one line saying what to install; None when
    google-adk is installed."""
    try:
        with warnings.catch_warnings():  # ADK marks its registry experimental, loudly
            warnings.simplefilter("ignore")
            importlib.import_module("google.adk.evaluation.metric_evaluator_registry")
        return None
    except ImportError:
        pass
    said = (
        f"custom metric {names[0]} (custom_metrics with a code_config) needs"
        if len(names) == 1
        else f"custom metrics {', '.join(names)} (custom_metrics with a code_config) need"
    )
    head = f"{said} google-adk, which calls such functions with its own types"
    if os.environ.get("CI_EVAL_IMAGE") == "slim" or os.environ.get("CI_EVAL_ACTION") == "setup":
        return (
            f"{head}, and this action has no google-adk: use the image with it, "
            f"`uses: {ACTION_REPO}/adk@v{__version__}` (image {IMAGE}:v{__version__}-adk), "
            "same inputs"
        )
    return f"{head}, and google-adk is not installed: pip install 'ci-eval[adk]'"


def _register_one(name: str, entry: dict[str, Any], guard: PullRequestCode | None) -> None:
    """Load the function in the metrics worker and register its metric here, each path once."""
    from ci_eval.worker import processes as workers
    from ci_eval.worker.client import WorkerError

    path = function_path(entry)
    if not path.rpartition(".")[0]:  # google-adk splits it at the last dot
        raise _CannotLoad(
            f"custom metric {name}: its code_config {path!r} is not a dotted "
            "'package.module.function' path, which google-adk imports"
        )
    worker = workers.metrics(guard)
    try:
        answer = worker.call("adk.load", METRIC_TIMEOUT_S, name=name, entry=entry)
    except WorkerError as exc:
        if not worker.changed:
            raise _CannotLoad(str(exc)) from None
        answer = {}
    if worker.changed:
        register(not_run(name, worker.changed))
        return
    if path not in REGISTRY:
        description = f"ADK custom metric {path} (an eval config's code_config)"
        register(
            Metric(
                path,
                description,
                lambda e, a, spec, ctx: _score(worker, path, e, a, spec, ctx),
                origin="custom",
                needs_expected=False,  # ADK gives it None and the scenario instead
            )
        )
    source = answer.get("source")
    if isinstance(source, str):
        add_source(name, Path(source))


class CannotLoad(Exception):
    """google-adk cannot load a code_config's function (said as the input error)."""


_CannotLoad = CannotLoad


def load_into_registry(name: str, entry: dict[str, Any], registry: Any | None) -> Any:
    """In the metrics worker: ``entry``'s function registered in an ADK metric registry of its
    own (``registry`` when the path already has one) and imported, as ADK does before a case
    is scored; that registry."""
    path = function_path(entry)
    with warnings.catch_warnings():  # ADK marks its registry and evaluators experimental
        warnings.simplefilter("ignore")
        from google.adk.evaluation.eval_config import EvalConfig
        from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric
        from google.adk.evaluation.metric_evaluator_registry import (
            MetricEvaluatorRegistry,
            register_custom_metrics_from_config,
        )

        registry = registry or MetricEvaluatorRegistry()
        try:
            register_custom_metrics_from_config(
                EvalConfig.model_validate({"custom_metrics": {name: entry}}), registry
            )
            registry.get_evaluator(
                EvalMetric(metric_name=name, threshold=0.0, criterion=BaseCriterion(threshold=0))
            )
        except Exception as exc:  # ADK wraps an ImportError; a module may raise anything
            cause = exc.__cause__ or exc
            raise CannotLoad(
                f"custom metric {name}: google-adk cannot load its code_config {path!r} "
                f"({type(cause).__name__}: {cause}); the module path is imported from the "
                "repository root (the working directory), as `adk eval` run there with "
                "PYTHONPATH=. imports it"
            ) from None
    return registry


def _spec_data(spec: MetricSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "threshold": spec.threshold,
        "criterion": dict(spec.criterion),
        "evaluator": spec.evaluator,
    }


def _score(
    worker: Any,
    path: str,
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    from ci_eval.metrics.custom import asked, dumped

    answer = asked(
        worker, path, "adk.score",
        path=path, expected=dumped(expected), actual=dumped(actual),
        spec=_spec_data(spec), rubrics=ctx.rubrics, scenario=ctx.scenario,
    )  # fmt: skip
    details = dict(answer["details"])
    if "status" in details:
        try:
            details["status"] = Status(details["status"])
        except ValueError:
            details["status"] = Status.FAILED
    return answer["score"], answer["per"], details


def _adk_invocations(invocations: list[Invocation]) -> list[Any]:
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation

    return [
        AdkInvocation.model_validate(i.model_dump(mode="json", exclude_none=True))
        for i in invocations
    ]


_VERDICTS = {"PASSED": Status.PASSED, "FAILED": Status.FAILED, "INFORMATIONAL": Status.INFO}


def score_in_registry(
    registry: Any,
    path: str,
    expected: list[Invocation],
    actual: list[Invocation],
    spec: MetricSpec,
    ctx: ScoreContext,
) -> tuple[float, list[float | None], dict[str, Any]]:
    """The function's EvaluationResult, as ADK's eval service reads it: its score, its
    per-invocation scores and its own verdict (``details["status"]``)."""
    from google.adk.evaluation.eval_case import ConversationScenario, Rubric
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric
    from google.adk.evaluation.evaluator import EvaluationResult

    criterion = (
        None
        if spec.threshold is None
        else BaseCriterion.model_validate({**spec.criterion, "threshold": spec.threshold})
    )
    metric = EvalMetric(
        metric_name=spec.name,
        threshold=spec.threshold,
        criterion=criterion,
        custom_function_path=path,
    )
    evaluator = registry.get_evaluator(metric)
    adk_actual = _adk_invocations(actual)
    # ADK's eval service copies the case's and each expected turn's rubrics onto the actuals
    # before any metric sees them
    case_rubrics = [Rubric.model_validate(r) for r in ctx.rubrics or []]
    for n, inv in enumerate(adk_actual):
        extra = list(case_rubrics)
        if ctx.scenario is None and n < len(expected) and expected[n].rubrics:
            extra += [Rubric.model_validate(r.model_dump(mode="json")) for r in expected[n].rubrics]
        if extra:
            inv.rubrics = list(inv.rubrics or []) + extra
    scenario = None if ctx.scenario is None else ConversationScenario.model_validate(ctx.scenario)
    import asyncio  # here, not at import: only a run with such a metric needs it

    result = asyncio.run(
        evaluator.evaluate_invocations(
            actual_invocations=adk_actual,
            expected_invocations=None if scenario is not None else _adk_invocations(expected),
            conversation_scenario=scenario,
        )
    )
    if not isinstance(result, EvaluationResult):
        raise MetricFailure(
            f"{path} returned {type(result).__name__}, not google-adk's EvaluationResult"
        )
    status = result.overall_eval_status.name
    if result.overall_score is None or status == "NOT_EVALUATED":
        raise NotApplicable(f"{path} gave no score ({status})")
    per = result.per_invocation_results
    if status != "INFORMATIONAL" and len(per) != len(adk_actual):
        raise MetricFailure(  # google-adk's own check, which fails the case there
            f"{path}: Eval metric should return results for each invocation. Found "
            f"{len(per)} results for {len(adk_actual)} invocations."
        )
    details: dict[str, Any] = {"status": _VERDICTS.get(status, Status.FAILED)}
    if result.overall_rubric_scores:
        details["rubrics"] = {r.rubric_id: r.score for r in result.overall_rubric_scores}
    return float(result.overall_score), [r.score for r in per], details
