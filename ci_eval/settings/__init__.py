"""One settings object for a run, from one path (:func:`build`): ``ci-eval.toml`` (so a
repository says once how its agent is reached), then the action's inputs or the command's flags
over it, frozen, checked once (:func:`check`) before the first agent call.

``model`` holds the object and how each setting is spelled in each source; ``check`` checks
it and parses it into the frozen :class:`Plan` the stages read;
``toml`` reads ci-eval.toml, ``inputs`` the action's inputs, ``bar`` holds the bar's settings
at the merge base in a pull request, and ``parse`` parses the settings that have a grammar."""

from ci_eval.settings.build import build
from ci_eval.settings.check import Plan, check, check_gate, check_number
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
    "build",
    "check",
    "check_gate",
    "check_number",
    "find_config",
    "from_inputs",
    "get_input",
    "github_token",
    "input_flag",
    "load_config",
]
