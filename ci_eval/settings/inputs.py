"""The GitHub Action's inputs (``INPUT_<NAME>``) over ci-eval.toml, the bar's settings as the
merge base has them (:mod:`ci_eval.settings.bar`), then the action's own defaults."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.settings.model import SETTINGS, ReportSettings, RunSettings, Value, input_variable

# --- the action's inputs -----------------------------------------------------------------------

# inputs that are no run setting: where the settings file is, where to run, GitHub's token and
# whether the job summary is written
ACTION_ONLY = ("config", "job-summary", "github-token", "working-directory")
INPUTS = tuple(s.input for s in SETTINGS if s.input) + ACTION_ONLY
# what the action does when neither an input nor ci-eval.toml says
ACTION_DEFAULTS: dict[str, Value] = {
    "results": "ci-eval-results.json",
    "junit": "ci-eval-junit.xml",
    "comment": True,
}


def get_input(env: Mapping[str, str], name: str) -> str | None:
    """The input ``name``, read one way (:func:`input_variable`); empty is unset."""
    return _raw_input(env, name).strip() or None


def _raw_input(env: Mapping[str, str], name: str) -> str:
    return env.get(input_variable(env, name)) or ""


def _input_value(env: Mapping[str, str], name: str, kind: str) -> Value:
    text = get_input(env, name)
    if text is None:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # a block (`paths: |`) ends in a line break even with one line; a plain value does not
    block = "\n" in _raw_input(env, name)
    if kind == "lines":  # one per line, so a path may hold spaces; a plain value: words
        return lines if block else text.split()
    if kind == "command":  # one argument per line, or one command line
        return lines if len(lines) > 1 else text
    if kind == "list":
        items = [i.strip() for line in text.splitlines() for i in line.split(",") if i.strip()]
        return items or None
    if kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "yes", "1", "on"):
            return True
        if lowered in ("false", "no", "0", "off"):
            return False
        raise InputError(f"input {name}: {text!r} is not true or false")
    if kind in ("int", "float"):
        try:
            return int(text) if kind == "int" else float(text)
        except ValueError:
            what = "an integer" if kind == "int" else "a number"
            raise InputError(f"input {name}: {text!r} is not {what}") from None
    return text


def input_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = _input_value(env, name, "bool")
    return default if value is None else bool(value)


def from_inputs(env: Mapping[str, str]) -> tuple[RunSettings, ReportSettings]:
    """The action's settings: ci-eval.toml (the ``config`` input, else found as the CLI finds
    it), the inputs over it, then the action's own defaults for what neither sets."""
    # here, not at the top: `action --help` lists the inputs and needs none of the building
    from ci_eval.settings.build import build

    config = get_input(env, "config")
    settings = build(
        {s.key: _input_value(env, s.input, s.kind) for s in SETTINGS if s.input is not None},
        env,
        config=Path(config) if config else None,
        source="action",
        # the bar as the merge base places it, unless the workflow trusts the pull request
        trust=input_flag(env, "trust-pr-config", False),
        defaults=ACTION_DEFAULTS,
    )
    return settings, settings.report(env, job_summary=input_flag(env, "job-summary", True))
