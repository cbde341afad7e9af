"""Where the settings come from: ``ci-eval.toml`` (found as the CLI finds it, paths relative to
the file) and the GitHub Action's inputs (``INPUT_<NAME>``), each over the defaults of
:class:`~ci_eval.settings.model.RunSettings`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import tomltext
from ci_eval.io.readfile import read_regular_file
from ci_eval.settings.model import (
    CI_CREDENTIALS,
    CONFIG_NAME,
    NOT_IN_TOML,
    SETTINGS,
    ReportSettings,
    RunSettings,
    Value,
)

# --- ci-eval.toml ------------------------------------------------------------------------------

_TABLES = ("run", "agent", "judge", "simulator", "metrics", "custom_metrics")
# settings whose default is None but take a number
_NUMBER_OR_NONE = {"min_pass", "max_turns", "retries", "timeout", "temperature"}

# the job's credentials ci-eval withholds from agents (the runner's own GITHUB_* names are not)
_WITHHELD = ("ACTIONS_", "INPUT_")


def _type_ok(current: object, value: object, name: str) -> bool:
    if name == "command":  # [agent] command: a command line, or an array of its arguments
        return isinstance(value, str) or (
            isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
        )
    if name in _NUMBER_OR_NONE and current is None:
        wanted = int if name in ("min_pass", "max_turns", "retries") else int | float
        return isinstance(value, wanted) and not isinstance(value, bool)
    if isinstance(current, bool):
        return isinstance(value, bool)
    if isinstance(current, list):
        return isinstance(value, list)
    if isinstance(current, dict):
        return isinstance(value, dict)
    if isinstance(current, int) and not isinstance(current, bool):  # a count: whole numbers
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(current, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def _apply(settings: RunSettings, table: dict[str, object], where: str, path: str) -> None:
    target = settings if where == "run" else getattr(settings, where)
    known = {f.name for f in fields(target)} - {*_TABLES, "names", "bar_changes"}
    for key, value in table.items():
        name = key.replace("-", "_")
        qualified = name if where == "run" else f"{where}.{name}"
        if qualified in NOT_IN_TOML:
            flag = next(s.flag for s in SETTINGS if s.key == qualified)
            raise InputError(
                f"[{where}] {key} is not a ci-eval.toml setting: the pull request controls this "
                f"file; set it in the workflow (flag {flag} or the action's input)",
                path=path,
            )
        if name not in known:
            raise InputError(
                f"unknown setting {key!r} in [{where}]; known: " + ", ".join(sorted(known)),
                path=path,
            )
        if not _type_ok(getattr(target, name), value, name):
            raise InputError(
                f"[{where}] {key} has the wrong type ({type(value).__name__})", path=path
            )
        if qualified == "agent.env":
            _no_credentials(value, path)  # type: ignore[arg-type]
        setattr(target, name, value)
        settings.names.given[name if where == "run" else f"{where}.{name}"] = (
            f"[{where}] {key}",
            path,
        )


def _no_credentials(names: list[str], path: str) -> None:
    # the pull request controls ci-eval.toml: its agent would hand itself the job's token
    for name in names:
        if name in CI_CREDENTIALS or str(name).startswith(_WITHHELD):
            raise InputError(
                f"[agent] env names {name}, a CI credential: only the workflow passes one to "
                "the agent (flag --agent-env or the action's input agent-env)",
                path=path,
            )


def load_config(path: Path | None, required: bool, text: str | None = None) -> RunSettings:
    """The settings of ``path`` (``text``: its content as another commit has it, read as if it
    were at ``path``)."""
    settings = RunSettings()
    if path is None:
        return settings
    if text is None and not path.is_file():
        if required:
            raise InputError("no such config file", path=str(path))
        return settings
    try:
        raw = text if text is not None else read_regular_file(path, str(path)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(path)) from None
    data = tomltext.parse(raw, str(path))
    unknown = set(data) - set(_TABLES)
    if unknown:
        raise InputError(
            f"unknown table(s) {sorted(unknown)}; ci-eval.toml has "
            + ", ".join(f"[{t}]" for t in _TABLES),
            path=str(path),
        )
    for table in ("run", "agent", "judge", "simulator"):
        _apply(settings, data.get(table, {}), table, str(path))
    for table in ("metrics", "custom_metrics"):
        value = data.get(table, {})
        if not isinstance(value, dict):
            raise InputError(f"[{table}] must be a table", path=str(path))
        setattr(settings, table, value)
    base = path.parent
    # paths in the config are relative to the config file, not to wherever ci-eval runs
    settings.paths = [_rel(base, p) for p in settings.paths]
    settings.agent.replay = [_rel(base, p) for p in settings.agent.replay]
    if settings.eval_config:
        settings.eval_config = _rel(base, settings.eval_config)
    return settings


def find_config(start: Path | None = None) -> Path | None:
    """``ci-eval.toml`` in the working directory or the nearest parent up to the repository
    root (outside a repository, only the working directory), so that ci-eval run from a
    subfolder of the repository reads the same settings."""
    from ci_eval.discover import repo_root

    here = (start or Path.cwd()).resolve()
    root = repo_root(here)
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            found = folder / CONFIG_NAME
            try:  # shown as the user would type it
                return Path(os.path.relpath(found))
            except ValueError:
                return found
        if root is None or folder == root:
            return None
    return None


def _rel(base: Path, value: str) -> str:
    path = Path(value)
    if path.is_absolute():
        return value
    joined = base / path
    try:
        return joined.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return joined.as_posix()


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
    """``INPUT_<NAME>`` with hyphens kept (as the runner sets it), or with underscores."""
    return _raw_input(env, name).strip() or None


def _raw_input(env: Mapping[str, str], name: str) -> str:
    for key in (f"INPUT_{name.upper()}", f"INPUT_{name.upper().replace('-', '_')}"):
        if (env.get(key) or "").strip():
            return env[key]
    return ""


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
    from ci_eval.settings.bar import hold

    config = get_input(env, "config")
    found = Path(config) if config else find_config()
    settings = load_config(found, required=config is not None)
    if not input_flag(env, "trust-pr-config", False):  # the bar as the merge base places it
        hold(settings, found, env)
    settings.names.source = "action"
    settings.overlay(
        {s.key: _input_value(env, s.input, s.kind) for s in SETTINGS if s.input is not None}
    )
    for key, value in ACTION_DEFAULTS.items():
        if not settings.given(key):
            setattr(settings, key, value)
    return settings, settings.report(env, job_summary=input_flag(env, "job-summary", True))
