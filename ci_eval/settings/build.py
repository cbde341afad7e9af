"""The one path every command's settings are built by: the settings table's defaults, then
ci-eval.toml (in a pull request with the bar as the merge base places it,
:mod:`ci_eval.settings.bar`), then the flags or the action's inputs, then the action's own
defaults for what none of them set — and frozen. `run`, `compare`, `report`, `baseline update`
and the action read them one way, so each gives the same verdict on the same results; the
check (:mod:`ci_eval.settings.check`) reads what this returns, and no stage sets a setting
after it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ci_eval.settings.bar import hold
from ci_eval.settings.model import RunSettings, Source, Value, setting_target
from ci_eval.settings.toml import find_config, load_config

Given = Mapping[str, Value | Path | list[Path]]


def build(
    given: Given,
    env: Mapping[str, str],
    *,
    config: Path | None = None,
    source: Source = "cli",
    trust: bool = False,
    defaults: Mapping[str, Value] | None = None,
) -> RunSettings:
    """The run's settings, frozen: ci-eval.toml (``config``, else found as `run` finds it) with
    the bar held at the merge base unless the workflow trusts the pull request (``trust``),
    ``given`` (the flags or inputs, by setting key; None leaves a setting as it is) over it,
    then ``defaults`` for the settings nobody gave."""
    found = config or find_config()
    settings = load_config(found, required=config is not None)
    if not trust:
        hold(settings, found, env)
    settings.names.source = source
    settings.overlay(given)
    for key, value in (defaults or {}).items():
        if not settings.given(key):
            target, name = setting_target(settings, key)
            setattr(target, name, value)
    return settings.freeze()
