"""ci-eval.toml: found as the CLI finds it (the working directory, then each parent up to the
repository root), read over the defaults of :class:`~ci_eval.settings.model.RunSettings`, paths
relative to the file; what a pull request may not set there is refused."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import tomltext
from ci_eval.io.readfile import read_regular_file
from ci_eval.settings.model import (
    CONFIG_NAME,
    NOT_IN_TOML,
    SETTINGS,
    RunSettings,
)
from ci_eval.text import redact

# --- ci-eval.toml ------------------------------------------------------------------------------

_TABLES = ("run", "agent", "judge", "simulator", "metrics", "custom_metrics")
# settings whose default is None but take a number
_NUMBER_OR_NONE = {"min_pass", "max_turns", "retries", "timeout", "temperature"}


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
        if redact.withheld(str(name)):
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
    from ci_eval.io.files import repo_root

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
