"""Custom metrics: a team's own function, registered by name.

From ``ci-eval.toml``::

    [custom_metrics]
    polite = "my_evals.metrics:politeness"

or from an installed package's entry point in the group ``ci_eval.metrics``. The function gets
the expected and actual invocations (ADK ``Invocation`` models, one per turn) and the metric's
criterion, and returns the score — a float — or ``(score, per_invocation_scores)`` or a dict
``{"score": …, "per_invocation": […], "details": {…}}``. ci-eval compares the score with the
threshold; an exception makes that metric ERROR for that case, never the run. The repository's
functions run in the metrics worker (:mod:`ci_eval.worker`), never in ci-eval's own process;
an installed package's entry point (outside the workspace) runs here.

A function written for google-adk, named by an ADK eval config's ``custom_metrics`` with a
``code_config``, runs as google-adk runs it instead: :mod:`ci_eval.metrics.adk_code`.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, distributions, entry_points
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError
from ci_eval.metrics.base import Metric, MetricFailure, NotApplicable, ScoreContext
from ci_eval.metrics.pr_code import PullRequestCode, forget_reasons, kept_from_scoring, not_run
from ci_eval.metrics.registry import REGISTRY, register, reset
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.worker.client import WorkerError

ENTRY_POINT_GROUP = "ci_eval.metrics"


# a metric function that has not answered in this long is an ERROR for that case
METRIC_TIMEOUT_S = 300.0


def result_of(value: Any, name: str) -> tuple[float, list[float | None], dict[str, Any]]:
    """What a custom metric function returned, as (score, per-invocation scores, details)."""
    details: dict[str, Any] = {}
    per: list[float | None] = []
    if isinstance(value, dict):
        score, per, details = (
            value.get("score"),
            list(value.get("per_invocation") or []),
            dict(value.get("details") or {}),
        )
    elif isinstance(value, tuple):
        score, per = value[0], list(value[1])
    else:
        score = value
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise TypeError(f"custom metric {name} returned {score!r}, not a number")
    return float(score), per, details


EXTENSIONS = "__extensions__"  # an invocation's dialect data, on the wire to the worker


def dumped(invocations: list[Invocation]) -> list[dict[str, Any]]:
    return [
        {**i.model_dump(mode="json", exclude_none=True), EXTENSIONS: i.extensions}
        for i in invocations
    ]


def undumped(data: list[dict[str, Any]]) -> list[Invocation]:
    out = []
    for item in data:
        fields = dict(item)
        extensions = fields.pop(EXTENSIONS, None) or {}
        invocation = Invocation.model_validate(fields)
        invocation.extensions.update(extensions)
        out.append(invocation)
    return out


def asked(worker: Any, name: str, op: str, /, **args: Any) -> dict[str, Any]:
    """The metrics worker's answer to a scoring op: NotApplicable once code the pull request
    changed has run there (before or during this call), MetricFailure for its error."""
    if worker.changed:
        raise kept_from_scoring(name, worker.changed)
    try:
        answer = worker.call(op, METRIC_TIMEOUT_S, **args)
    except WorkerError as exc:
        if worker.changed:
            raise kept_from_scoring(name, worker.changed) from None
        if exc.kind == "not_applicable":
            raise NotApplicable(str(exc)) from None
        raise MetricFailure(str(exc)) from None
    if worker.changed:
        raise kept_from_scoring(name, worker.changed)
    score, per, details = answer.get("score"), answer.get("per"), answer.get("details")
    if isinstance(score, bool) or not isinstance(score, int | float) or not isinstance(per, list):
        raise MetricFailure(f"custom metric {name} returned {score!r}, not a number")
    per = [
        float(p) if isinstance(p, int | float) and not isinstance(p, bool) else None for p in per
    ]
    return {
        "score": float(score),
        "per": per,
        "details": details if isinstance(details, dict) else {},
    }


def _remote(name: str, worker: Any) -> Any:
    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        answer = asked(
            worker, name, "custom.score",
            name=name, expected=dumped(expected), actual=dumped(actual),
            criterion=dict(spec.criterion),
        )  # fmt: skip
        return answer["score"], answer["per"], answer["details"]

    return scorer


def _load(name: str, target: str, worker: Any, entry_point: bool = False) -> str | None:
    """Load ``target`` in the metrics worker; its source file (None: none). InputError for
    one it cannot load."""
    if not entry_point:
        module_name, sep, attr = target.partition(":")
        if not sep or not module_name or not attr:
            raise InputError(f"custom metric {name}: expected 'module:function', got {target!r}")
    args = {"name": name, "target": target, "entry_point": entry_point}
    try:
        answer = worker.call("custom.load", METRIC_TIMEOUT_S, **args)
    except WorkerError as exc:
        if worker.changed:
            return None
        if exc.kind == "input":  # the worker's own words: the module, what went wrong
            raise InputError(str(exc)) from None
        raise InputError(f"custom metric {name}: cannot load {target}: {exc}") from None
    source = answer.get("source")
    return source if isinstance(source, str) else None


def _entry_points() -> list[EntryPoint]:
    """The entry points of the ``ci_eval.metrics`` group of installed distributions outside the
    workspace (one there is the repository's code: the worker runs it). Most installs have
    none: each distribution's ``entry_points.txt`` is first searched for the group's name as
    plain text (cheaper than parsing them all, and this runs on every run); only when one names
    it does importlib.metadata parse them (and pick among duplicate distributions)."""
    from ci_eval.worker.workspace import in_workspace, roots

    naming = [
        d for d in distributions() if ENTRY_POINT_GROUP in (d.read_text("entry_points.txt") or "")
    ]
    if not naming:  # the usual case: no distribution's location is looked at
        return []
    where = roots()
    names = {d.metadata["Name"] for d in naming if not in_workspace(str(d.locate_file("")), where)}
    return [
        e for e in entry_points(group=ENTRY_POINT_GROUP) if e.dist is None or e.dist.name in names
    ]


def workspace_plugins(root: Path) -> bool:
    """Whether the workspace holds a distribution (``*.dist-info``, ``*.egg-info`` at its top,
    where an import path entry finds it) naming the ``ci_eval.metrics`` group."""
    for meta in [*root.glob("*.dist-info"), *root.glob("*.egg-info")]:
        try:
            if ENTRY_POINT_GROUP in (meta / "entry_points.txt").read_text("utf-8", "replace"):
                return True
        except OSError:
            continue
    return False


def _builtin(name: str) -> Metric | None:
    """The built-in metric a custom metric's name would shadow (``trpc/name`` included)."""
    for key, metric in REGISTRY.items():
        if metric.origin != "custom" and key.split("/")[-1] == name:
            return metric
    return None


# the file of each [custom_metrics] function of this run: in a pull request, code the PR may
# have changed (it decides scores), which the gate then says
_SOURCES: dict[str, Path] = {}


def source_files() -> dict[str, Path]:
    """The file each of this run's custom metric functions is defined in: ``[custom_metrics]``'s
    and the eval configs' ``code_config`` ones (``metrics.adk_code``)."""
    return dict(_SOURCES)


def add_source(name: str, path: Path) -> None:
    """The metric ``name`` of this run is computed by code in ``path``."""
    _SOURCES[name] = path


def register_custom(table: dict[str, str], guard: PullRequestCode | None = None) -> None:
    """This run's custom metrics: ``[custom_metrics]`` in ci-eval.toml, then the entry points of
    the ``ci_eval.metrics`` group, replacing the previous run's. One rule for every name: a
    custom metric may not take a built-in metric's name, and two custom metrics may not share
    one (the same ``module:function`` twice is one metric) — either is an input error naming
    both, before anything runs. The repository's functions are loaded and called in the
    metrics worker (:mod:`ci_eval.worker`)."""
    from ci_eval.worker import processes as workers

    reset()
    forget_reasons()
    workers.close_metrics()  # the previous run's worker, with what it imported
    _SOURCES.clear()
    sources: dict[str, tuple[str, str]] = {}  # name -> (where it was named, module:function)
    for name, target in table.items():
        if not isinstance(target, str):
            raise InputError(f'[custom_metrics] {name}: expected "module:function"')
        _claim(name, f"[custom_metrics] {name} = {target!r}", target, sources)
        changed = guard.changed(target.partition(":")[0]) if guard else None
        if changed:  # not imported: nothing of it runs
            register(not_run(name, changed))
            continue
        worker = workers.metrics(guard)
        source = _load(name, target, worker)
        if worker.changed:
            register(not_run(name, worker.changed))
            continue
        register(Metric(name, f"custom metric {target}", _remote(name, worker), origin="custom"))
        if source:
            _SOURCES[name] = Path(source)
    for entry in _entry_points():
        if not _claim(
            entry.name, f"the entry point {entry.name} = {entry.value!r}", entry.value, sources
        ):
            continue
        try:
            fn = entry.load()
        except Exception as exc:  # a broken plugin names itself, it does not stop ci-eval
            raise InputError(
                f"custom metric {entry.name}: cannot load {entry.value}: {exc}"
            ) from None
        description = f"custom metric {entry.value} (entry point)"
        register(Metric(entry.name, description, _wrap(fn, entry.name), origin="custom"))
    if workspace_plugins(Path.cwd()):
        _register_workspace_plugins(guard, sources)


def _wrap(fn: Callable[..., Any], name: str) -> Any:
    """An installed plugin's function, called here: installed code, not the workspace's."""

    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        return result_of(fn(expected, actual, dict(spec.criterion)), name)

    return scorer


def _register_workspace_plugins(
    guard: PullRequestCode | None, sources: dict[str, tuple[str, str]]
) -> None:
    """The entry points of distributions in the workspace, loaded and run in the worker; one
    whose ``entry_points.txt`` the pull request added or changed is not run."""
    from ci_eval.worker import processes as workers

    worker = workers.metrics(guard)
    try:
        found = worker.call("plugins", METRIC_TIMEOUT_S, root=str(Path.cwd()))["plugins"]
    except WorkerError as exc:
        raise InputError(f"the workspace's metric plugins cannot be listed: {exc}") from None
    for plugin in found if isinstance(found, list) else []:
        name, value = str(plugin.get("name")), str(plugin.get("value"))
        where = f"the workspace's entry point {name} = {value!r}"
        if not _claim(name, where, value, sources):
            continue
        listing = Path(str(plugin.get("meta"))) / "entry_points.txt"
        changed = guard.first_changed([listing]) if guard else None
        if changed:
            register(not_run(name, changed))
            continue
        source = _load(name, value, worker, entry_point=True)
        if worker.changed:
            register(not_run(name, worker.changed))
            continue
        description = f"custom metric {value} (an entry point in the workspace)"
        register(Metric(name, description, _remote(name, worker), origin="custom"))
        if source:
            _SOURCES[name] = Path(source)


def _claim(name: str, where: str, target: str, sources: dict[str, tuple[str, str]]) -> bool:
    """Record that ``where`` defines ``name``; False when the same function already does."""
    builtin = _builtin(name)
    if builtin is not None:
        raise InputError(
            f"custom metric {name}: {where} has the name of the built-in metric {name} "
            f"({builtin.origin}); give the custom metric another name"
        )
    if name in sources:
        first, first_target = sources[name]
        if first_target == target:
            return False
        raise InputError(
            f"custom metric {name} is defined twice: by {first} and by {where}; rename one"
        )
    sources[name] = (where, target)
    return True
