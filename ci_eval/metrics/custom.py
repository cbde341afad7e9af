"""Custom metrics: a team's own function, registered by name.

From ``ci-eval.toml``::

    [custom_metrics]
    polite = "my_evals.metrics:politeness"

or from an installed package's entry point in the group ``ci_eval.metrics``. The function gets
the expected and actual invocations (ADK ``Invocation`` models, one per turn) and the metric's
criterion, and returns the score — a float — or ``(score, per_invocation_scores)`` or a dict
``{"score": …, "per_invocation": […], "details": {…}}``. ci-eval compares the score with the
threshold; an exception makes that metric ERROR for that case, never the run.

A function written for google-adk, named by an ADK eval config's ``custom_metrics`` with a
``code_config``, runs as google-adk runs it instead: :mod:`ci_eval.metrics.adk_code`.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint, distributions, entry_points
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError
from ci_eval.metrics.base import Metric, ScoreContext
from ci_eval.metrics.pr_code import PullRequestCode, not_run
from ci_eval.metrics.registry import REGISTRY, register, reset
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec

ENTRY_POINT_GROUP = "ci_eval.metrics"


def _wrap(fn: Callable[..., Any], name: str) -> Any:
    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> tuple[float, list[float | None], dict[str, Any]]:
        value = fn(expected, actual, dict(spec.criterion))
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

    return scorer


def repository_importable() -> None:
    """The repository's own modules importable by their dotted path from its root (the
    working directory), as pytest finds them from its rootdir."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))


def load_function(target: str, name: str) -> Callable[..., Any]:
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"custom metric {name}: expected 'module:function', got {target!r}")
    repository_importable()
    try:
        module = importlib.import_module(module_name)
        fn = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"custom metric {name}: cannot load {target}: {exc}") from None
    if not callable(fn):
        raise InputError(f"custom metric {name}: {target} is not callable")
    return fn


def _entry_points() -> list[EntryPoint]:
    """The entry points of the ``ci_eval.metrics`` group. Most installs have none: each
    distribution's ``entry_points.txt`` is first searched for the group's name as plain text
    (cheaper than parsing them all, and this runs on every run); only when one names it
    does importlib.metadata parse them (and pick among duplicate distributions)."""
    if not any(
        ENTRY_POINT_GROUP in (d.read_text("entry_points.txt") or "") for d in distributions()
    ):
        return []
    return list(entry_points(group=ENTRY_POINT_GROUP))


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
    both, before anything runs."""
    reset()
    _SOURCES.clear()
    sources: dict[str, tuple[str, str]] = {}  # name -> (where it was named, module:function)
    for name, target in table.items():
        if not isinstance(target, str):
            raise InputError(f'[custom_metrics] {name}: expected "module:function"')
        _claim(name, f"[custom_metrics] {name} = {target!r}", target, sources)
        changed = guard.changed(target.partition(":")[0]) if guard else None
        if changed:  # not imported: importing runs it
            register(not_run(name, changed))
            continue
        fn = load_function(target, name)
        register(Metric(name, f"custom metric {target}", _wrap(fn, name), origin="custom"))
        source = inspect.getsourcefile(fn)
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
