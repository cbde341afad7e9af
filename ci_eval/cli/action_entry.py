"""The GitHub Action's entrypoint (``ci-eval action``): the inputs become the run's settings
(:func:`ci_eval.settings.from_inputs`, the same path as the CLI's flags), then the pipeline runs
in the workspace.

Inputs arrive as ``INPUT_<NAME>`` with hyphens kept (``INPUT_NUM-RUNS``), which shells cannot
read but Python can; the underscore form is accepted too, for running the same entrypoint from a
plain environment. The runner does not enforce ``required``; values are checked with the rest of
the settings, and a bad one is a one-line error naming the input.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from ci_eval import pipeline
from ci_eval.errors import InputError
from ci_eval.settings import INPUTS, ReportSettings, from_inputs, get_input

__all__ = ["INPUTS", "OUTPUTS", "get_input", "run_action", "workdir"]

OUTPUTS = (
    "verdict",
    "gate",
    "blocking",
    "not-blocking",
    "improved",
    "new",
    "removed",
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
    "summary-path",
    "tokens",
    "cost",
    "p95-latency-s",
)


def workdir(env: Mapping[str, str]) -> Path:
    base = Path(env.get("GITHUB_WORKSPACE") or ".")
    sub = get_input(env, "working-directory")
    path = (base / sub) if sub else base
    if not path.is_dir():
        raise InputError(f"input working-directory: {path} is not a directory")
    return path


def run_action(
    env: Mapping[str, str], stop: threading.Event | None = None
) -> tuple[pipeline.RunOutcome, ReportSettings]:
    from ci_eval.connectors import no_agent_message

    os.chdir(workdir(env))
    settings, report = from_inputs(env)
    if not settings.agent.kind:  # before the eval sets are read: the first thing to fix
        raise InputError(no_agent_message(settings.agent))
    return pipeline.run(settings, stop, env), report
