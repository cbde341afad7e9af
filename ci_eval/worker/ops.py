"""What the worker does on request: load and call the repository's metric functions (custom,
ADK ``code_config``, workspace plugins) and run an in-process ADK agent. Each op takes and gives
JSON data only."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from importlib.metadata import EntryPoint, distributions
from pathlib import Path
from typing import Any

Op = Callable[..., dict[str, Any]]
OPS: dict[str, Op] = {}


class Refused(Exception):
    """An op's own error, said as it is: ``kind`` tells the trusted side what it means."""

    def __init__(self, message: str, kind: str = "failure") -> None:
        super().__init__(message)
        self.kind = kind


def op(name: str) -> Callable[[Op], Op]:
    def register(function: Op) -> Op:
        OPS[name] = function
        return function

    return register


_FUNCTIONS: dict[str, Any] = {}  # custom metric name -> its function
_ADK: dict[str, Any] = {}  # code_config path -> its ADK registry
_SESSIONS: dict[str, Any] = {}
_AGENT: dict[str, Any] = {}


def _source(fn: Any) -> str | None:
    try:
        return inspect.getsourcefile(fn)
    except TypeError:  # a callable object, a builtin
        return None


@op("hello")
def hello() -> dict[str, Any]:
    import os

    return {"pid": os.getpid()}


@op("custom.load")
def custom_load(name: str, target: str, entry_point: bool = False) -> dict[str, Any]:
    """Import ``module:function`` (from an installed package or, after them, the workspace)."""
    if entry_point:
        try:
            fn = EntryPoint(name, target, "ci_eval.metrics").load()
        except Exception as exc:
            raise Refused(f"custom metric {name}: cannot load {target}: {exc}", "input") from None
    else:
        module_name, _, attr = target.partition(":")
        try:
            fn = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise Refused(f"custom metric {name}: cannot load {target}: {exc}", "input") from None
    if not callable(fn):
        raise Refused(f"custom metric {name}: {target} is not callable", "input")
    _FUNCTIONS[name] = fn
    return {"source": _source(fn)}


def _invocations(data: list[dict[str, Any]]) -> list[Any]:
    from ci_eval.metrics.custom import undumped

    return undumped(data)


@op("custom.score")
def custom_score(
    name: str, expected: list[Any], actual: list[Any], criterion: dict[str, Any]
) -> dict[str, Any]:
    from ci_eval.metrics.custom import result_of

    value = _FUNCTIONS[name](_invocations(expected), _invocations(actual), dict(criterion))
    score, per, details = result_of(value, name)
    return {"score": score, "per": per, "details": details}


@op("plugins")
def plugins(root: str) -> dict[str, Any]:
    """The ``ci_eval.metrics`` entry points of distributions in the workspace."""
    from ci_eval.metrics.custom import ENTRY_POINT_GROUP
    from ci_eval.worker.workspace import in_workspace

    found = []
    for dist in distributions():
        where = Path(str(dist.locate_file("")))
        if not in_workspace(where, [Path(root)]):
            continue
        for entry in dist.entry_points:
            if entry.group == ENTRY_POINT_GROUP:
                meta = getattr(dist, "_path", None)
                found.append({"name": entry.name, "value": entry.value, "meta": str(meta)})
    return {"plugins": found}


@op("adk.load")
def adk_load(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    from ci_eval.metrics import adk_code

    try:
        registry = adk_code.load_into_registry(name, entry, _ADK.get(adk_code.function_path(entry)))
    except adk_code.CannotLoad as exc:
        raise Refused(str(exc), "input") from None
    path = adk_code.function_path(entry)
    _ADK[path] = registry
    module, _, attr = path.rpartition(".")
    return {"source": _source(getattr(importlib.import_module(module), attr))}


@op("adk.score")
def adk_score(
    path: str,
    expected: list[Any],
    actual: list[Any],
    spec: dict[str, Any],
    rubrics: list[Any] | None,
    scenario: dict[str, Any] | None,
) -> dict[str, Any]:
    from ci_eval.metrics import adk_code
    from ci_eval.metrics.base import ScoreContext
    from ci_eval.model.metric_spec import MetricSpec

    ctx = ScoreContext(rubrics=rubrics, scenario=scenario)
    score, per, details = adk_code.score_in_registry(
        _ADK[path], path, _invocations(expected), _invocations(actual),
        MetricSpec(**spec), ctx,
    )  # fmt: skip
    if "status" in details:
        details = {**details, "status": details["status"].value}
    return {"score": score, "per": per, "details": details}


# --- the in-process ADK agent ----------------------------------------------------------------


@op("agent.load")
def agent_load(module: str) -> dict[str, Any]:
    from ci_eval.worker.adk_agent import AgentError, load_root_agent

    try:
        _AGENT["agent"] = load_root_agent(module)
    except AgentError as exc:
        raise Refused(str(exc), "agent") from None
    return {"name": _AGENT["agent"].name}


@op("agent.open")
def agent_open(
    key: str, app: str | None, user: str, state: dict[str, Any], session_id: str | None
) -> dict[str, Any]:
    from ci_eval.worker.adk_agent import LocalSession

    session = LocalSession.open(_AGENT["agent"], app, user, state, session_id)
    _SESSIONS[key] = session
    return {}


@op("agent.send")
def agent_send(key: str, content: dict[str, Any], seconds: float) -> dict[str, Any]:
    from ci_eval.worker.adk_agent import AgentError

    try:
        return {"events": _SESSIONS[key].send(content, seconds)}
    except AgentError as exc:
        raise Refused(str(exc), "agent") from None


@op("agent.close")
def agent_close(key: str) -> dict[str, Any]:
    session = _SESSIONS.pop(key, None)
    if session is not None:
        session.close()
    return {}
