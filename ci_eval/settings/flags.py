"""A command's parameters as settings, by the settings table alone: every command reads its
flags through it, `--help` included, so it imports nothing but the table."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ci_eval.settings.model import SETTINGS, Value


def from_flags(values: Mapping[str, object]) -> dict[str, Value | Path | list[Path]]:
    """A command's parameters as settings, by the settings table: each setting with a flag is
    the parameter named for it (``--agent-url`` → ``agent_url``); the command's other
    parameters are none of the settings'."""
    out: dict[str, Value | Path | list[Path]] = {}
    for setting in SETTINGS:
        name = flag_parameter(setting.flag)
        if name is not None and name in values:
            out[setting.key] = values[name]  # type: ignore[assignment]
    return out


def flag_parameter(flag: str | None) -> str | None:
    """The Python parameter a command names a flag by: ``--agent-url`` → ``agent_url``."""
    return None if flag is None else flag.lstrip("-").replace("-", "_")
