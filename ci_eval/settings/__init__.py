"""One settings object for a run, from one path (``settings.build.build``): ``ci-eval.toml`` (so a
repository says once how its agent is reached), then the action's inputs or the command's flags
over it, frozen, checked once (``settings.check.check``) before the first agent call.

``model`` holds the object and how each setting is spelled in each source; ``check`` checks
it and parses it into the frozen :class:`Plan` the stages read;
``toml`` reads ci-eval.toml, ``inputs`` the action's inputs, ``bar`` holds the bar's settings
at the merge base in a pull request, and ``parse`` parses the settings that have a grammar."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each name is imported on first use (PEP 562): `ci-eval --help` reads the settings table
# (``settings.model``) and must not build the pydantic models the checks use. ``build`` and
# ``check`` are imported from their modules, whose names they share.
_WHERE = {
    "ACTION_DEFAULTS": "ci_eval.settings.inputs",
    "ACTION_ONLY": "ci_eval.settings.inputs",
    "AGENT_KINDS": "ci_eval.settings.model",
    "AgentSettings": "ci_eval.settings.model",
    "CONFIG_NAME": "ci_eval.settings.model",
    "GateSettings": "ci_eval.settings.gate",
    "INPUTS": "ci_eval.settings.inputs",
    "JudgeConfig": "ci_eval.settings.model",
    "Names": "ci_eval.settings.model",
    "Plan": "ci_eval.settings.check",
    "ReportSettings": "ci_eval.settings.model",
    "RunSettings": "ci_eval.settings.model",
    "SETTINGS": "ci_eval.settings.model",
    "Setting": "ci_eval.settings.model",
    "SimulatorConfig": "ci_eval.settings.model",
    "api_key": "ci_eval.settings.model",
    "check_gate": "ci_eval.settings.check",
    "check_number": "ci_eval.settings.check",
    "find_config": "ci_eval.settings.toml",
    "from_inputs": "ci_eval.settings.inputs",
    "get_input": "ci_eval.settings.inputs",
    "github_token": "ci_eval.settings.model",
    "input_flag": "ci_eval.settings.inputs",
    "load_config": "ci_eval.settings.toml",
}

if TYPE_CHECKING:
    from ci_eval.settings.check import Plan, check_gate, check_number
    from ci_eval.settings.gate import GateSettings
    from ci_eval.settings.inputs import (
        ACTION_DEFAULTS,
        ACTION_ONLY,
        INPUTS,
        from_inputs,
        get_input,
        input_flag,
    )
    from ci_eval.settings.model import (
        AGENT_KINDS,
        CONFIG_NAME,
        SETTINGS,
        AgentSettings,
        JudgeConfig,
        Names,
        ReportSettings,
        RunSettings,
        Setting,
        SimulatorConfig,
        api_key,
        github_token,
    )
    from ci_eval.settings.toml import find_config, load_config


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


__all__ = [
    "ACTION_DEFAULTS",
    "ACTION_ONLY",
    "AGENT_KINDS",
    "CONFIG_NAME",
    "INPUTS",
    "SETTINGS",
    "AgentSettings",
    "GateSettings",
    "JudgeConfig",
    "Names",
    "Plan",
    "ReportSettings",
    "RunSettings",
    "Setting",
    "SimulatorConfig",
    "api_key",
    "check_gate",
    "check_number",
    "find_config",
    "from_inputs",
    "get_input",
    "github_token",
    "input_flag",
    "load_config",
]
