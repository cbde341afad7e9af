"""The GitHub Action's entrypoint (``ci-eval action``): read the inputs, run the whole
pipeline in the workspace, report, and exit with the documented codes.

Inputs arrive as ``INPUT_<NAME>`` with hyphens kept (``INPUT_NUM-RUNS``), which shells cannot
read but Python can; the underscore form is accepted too, for running the same entrypoint from a
plain environment. The runner does not enforce ``required``; values are validated here, and a
bad one is a one-line error naming the input.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from ci_eval import pipeline
from ci_eval.config import RunSettings, find_config, load_config
from ci_eval.errors import InputError
from ci_eval.publish import ReportSettings

# every input of action.yml, and what it sets (tests check both lists stay in step)
INPUTS = (
    "paths",
    "include",
    "exclude",
    "agent",
    "agent-url",
    "app-name",
    "user-id",
    "agent-command",
    "agent-module",
    "replay",
    "config",
    "metrics",
    "num-runs",
    "min-pass",
    "concurrency",
    "timeout",
    "retries",
    "baseline",
    "baseline-ref",
    "fail-on",
    "tolerance",
    "junit",
    "job-summary",
    "comment",
    "comment-id",
    "results",
    "template-dir",
    "shard",
    "github-token",
    "working-directory",
)
OUTPUTS = (
    "verdict",
    "gate",
    "passed",
    "failed",
    "errors",
    "regressions",
    "known-failures",
    "not-evaluated",
    "total",
    "score",
    "junit-path",
    "results-path",
)


def get_input(env: Mapping[str, str], name: str) -> str | None:
    for key in (f"INPUT_{name.upper()}", f"INPUT_{name.upper().replace('-', '_')}"):
        value = env.get(key)
        if value is not None and value.strip() != "":
            return value.strip()
    return None


def _list(value: str | None) -> list[str]:
    if not value:
        return []
    return [item.strip() for line in value.splitlines() for item in line.split(",") if item.strip()]


def _words(value: str | None) -> list[str]:
    return [] if not value else value.split()


def _number(env: Mapping[str, str], name: str, kind: type, low: float) -> float | int | None:
    value = get_input(env, name)
    if value is None:
        return None
    try:
        number = kind(value)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise InputError(f"input {name}: {value!r} is not {what}") from None
    if number < low:
        raise InputError(f"input {name}: must be at least {low:g}")
    return number


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = get_input(env, name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in ("true", "yes", "1", "on"):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    raise InputError(f"input {name}: {value!r} is not true or false")


def settings_from(env: Mapping[str, str]) -> tuple[RunSettings, ReportSettings]:
    config = get_input(env, "config")
    settings = load_config(Path(config) if config else find_config(), required=config is not None)
    direct = {
        "paths": _words(get_input(env, "paths")),
        "include": _list(get_input(env, "include")),
        "exclude": _list(get_input(env, "exclude")),
        "metric": _list(get_input(env, "metrics")),
        "num_runs": _number(env, "num-runs", int, 1),
        "min_pass": _number(env, "min-pass", int, 1),
        "concurrency": _number(env, "concurrency", int, 1),
        "timeout": _number(env, "timeout", float, 0.001),
        "retries": _number(env, "retries", int, 0),
        "tolerance": _number(env, "tolerance", float, 0),
        "baseline": get_input(env, "baseline"),
        "baseline_ref": get_input(env, "baseline-ref"),
        "fail_on": _list(get_input(env, "fail-on")),
        "shard": get_input(env, "shard"),
        "template_dir": get_input(env, "template-dir"),
    }
    for key, value in direct.items():
        if value not in (None, []):
            setattr(settings, key, value)
    agent = {
        "kind": get_input(env, "agent"),
        "url": get_input(env, "agent-url"),
        "app_name": get_input(env, "app-name"),
        "user_id": get_input(env, "user-id"),
        "command": get_input(env, "agent-command"),
        "module": get_input(env, "agent-module"),
        "replay": _list(get_input(env, "replay")) or None,
    }
    for key, value in agent.items():
        if value is not None:
            setattr(settings.agent, key, value)
    settings.results = get_input(env, "results") or settings.results or "ci-eval-results.json"
    settings.junit = get_input(env, "junit") or settings.junit or "ci-eval-junit.xml"
    report = ReportSettings(
        junit=settings.junit,
        summary=settings.summary,
        results=settings.results,
        adk_results=settings.adk_results,
        comment=_bool(env, "comment", True),
        comment_id=get_input(env, "comment-id"),
        template_dir=settings.template_dir,
    )
    return settings, report


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """The job's environment for the reporters: the token input becomes GITHUB_TOKEN, and the
    job summary can be switched off."""
    out = dict(env)
    token = get_input(env, "github-token")
    if token:
        out["GITHUB_TOKEN"] = token
    if not _bool(env, "job-summary", True):
        out.pop("GITHUB_STEP_SUMMARY", None)
    return out


def workdir(env: Mapping[str, str]) -> Path:
    base = Path(env.get("GITHUB_WORKSPACE") or ".")
    sub = get_input(env, "working-directory")
    path = (base / sub) if sub else base
    if not path.is_dir():
        raise InputError(f"input working-directory: {path} is not a directory")
    return path


def run_action(
    env: Mapping[str, str],
    stop: threading.Event | None = None,
) -> tuple[pipeline.Outcome, ReportSettings, dict[str, str]]:
    os.chdir(workdir(env))
    settings, report = settings_from(env)
    if not settings.agent.kind:
        raise InputError(
            "input agent is required (adk-http, adk, http, command or replay), "
            "or [agent] kind in ci-eval.toml"
        )
    return pipeline.run(settings, stop), report, environment(env)
