"""ci-eval.toml: found as the CLI finds it (the working directory, then each parent up to the
repository root), read over the defaults of :class:`~ci_eval.settings.model.RunSettings`, paths
relative to the file; what a pull request may not set there is refused."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.io import tomltext
from ci_eval.io.readfile import read_regular_file
from ci_eval.settings.model import (
    CONFIG_NAME,
    NOT_IN_TOML,
    SETTINGS,
    RunSettings,
    from_folder,
)
from ci_eval.text import redact
from ci_eval.text.suggest import did_you_mean

# --- ci-eval.toml ------------------------------------------------------------------------------

_TABLES = (
    "run", "agent", "judge", "simulator", "metrics", "custom_metrics", "prices", "budget",
)  # fmt: skip
# settings whose default is None but take a number
_NUMBER_OR_NONE = {"min_pass", "max_turns", "retries", "timeout", "temperature"}


def _type_ok(current: object, value: object, name: str) -> bool:
    if name == "cache_ttl":  # seconds, or a duration's text ("7d")
        return isinstance(value, str | int | float) and not isinstance(value, bool)
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


def _wanted(current: object, name: str) -> str:
    """What :func:`_type_ok` accepts for a setting, in words."""
    if name == "command":
        return "a string or an array of strings"
    if name == "cache_ttl":
        return 'seconds or a duration like "7d"'
    if name in _NUMBER_OR_NONE and current is None:
        return "a whole number" if name in ("min_pass", "max_turns", "retries") else "a number"
    if isinstance(current, bool):
        return "true or false"
    if isinstance(current, list):
        return "an array"
    if isinstance(current, dict):
        return "a table"
    if isinstance(current, int):
        return "a whole number"
    if isinstance(current, float):
        return "a number"
    return "a string"


def _apply(
    settings: RunSettings,
    table: dict[str, object],
    where: str,
    path: str,
    problems: list[InputError],
) -> None:
    """Set the table's settings; each bad key is a problem of ``problems``, and the others
    are still read, so that one run names them all."""
    target = settings if where == "run" else getattr(settings, where)
    known = {f.name for f in fields(target)} - {*_TABLES, "names", "bar_changes"}
    for key, value in table.items():
        name = key.replace("-", "_")
        qualified = name if where == "run" else f"{where}.{name}"
        if qualified in NOT_IN_TOML:
            flag = next(s.flag for s in SETTINGS if s.key == qualified)
            problems.append(
                InputError(
                    f"[{where}] {key} is not a ci-eval.toml setting: the pull request controls "
                    f"this file; set it in the workflow (flag {flag} or the action's input)",
                    path=path,
                )
            )
            continue
        if name not in known:
            settable = {
                k for k in known if (k if where == "run" else f"{where}.{k}") not in NOT_IN_TOML
            }
            hint = did_you_mean(name, settable)
            problems.append(
                InputError(
                    f"unknown key [{where}] {key}"
                    + (hint or f"; [{where}] has: " + ", ".join(sorted(settable))),
                    path=path,
                )
            )
            continue
        if not _type_ok(getattr(target, name), value, name):
            problems.append(
                InputError(
                    f"[{where}] {key}: wrong type ({type(value).__name__}); expected "
                    + _wanted(getattr(target, name), name),
                    path=path,
                )
            )
            continue
        if qualified == "agent.env":
            try:
                _no_credentials(value, path)  # type: ignore[arg-type]
            except InputError as exc:
                problems.append(exc)
                continue
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
    # every problem of the file at once, one line each (a single one: as any input error)
    problems: list[InputError] = []
    for table in sorted(set(data) - set(_TABLES)):
        hint = did_you_mean(table, _TABLES, n=1)
        problems.append(
            InputError(
                f"unknown table [{table}]"
                + hint.replace("mean ", "mean [").replace("?)", "]?)")
                + "; ci-eval.toml has "
                + ", ".join(f"[{t}]" for t in _TABLES),
                path=str(path),
            )
        )
    for table in _TABLES:
        value = data.get(table, {})
        if not isinstance(value, dict):
            problems.append(InputError(f"[{table}] must be a table", path=str(path)))
        elif table in ("metrics", "custom_metrics"):
            setattr(settings, table, value)
        elif table in ("prices", "budget"):
            from ci_eval.settings.usage import check_budget, check_prices

            check_table = check_prices if table == "prices" else check_budget
            problems += check_table(value, str(path))
            setattr(settings, table, value)
        else:
            _apply(settings, value, table, str(path), problems)
    if problems:
        raise problems[0] if len(problems) == 1 else ValidationFailed(problems)
    _from_the_config(settings, path.parent)
    settings.root = from_folder(path.parent, ".")
    return settings


# the settings that name a file or folder (a data branch's baseline is a path on that branch)
_PATHS = ("eval_config", "accept", "results", "junit", "summary", "adk_results", "adk_rs_report",
          "trpc_results", "template_dir", "cache")  # fmt: skip


def _from_the_config(settings: RunSettings, base: Path) -> None:
    """One rule for paths: those ci-eval.toml gives, and the defaults it implies, are relative
    to its folder, not to wherever ci-eval runs — the same verdict from any subfolder. (A
    flag's path is the cwd's: the overlay comes later. The baseline is worked out where it is
    read, :meth:`RunSettings.baseline_file`: on a data branch it is a path on that branch.)"""
    settings.paths = [from_folder(base, p) for p in settings.paths]
    settings.agent.replay = [from_folder(base, p) for p in settings.agent.replay]
    for key in _PATHS:
        value = getattr(settings, key)
        if value:
            setattr(settings, key, from_folder(base, value))
    module = settings.agent.module
    if module and (("/" in module or "\\" in module) or (base / module).is_dir()):
        settings.agent.module = from_folder(base, module)  # an agent folder, not an import name
    if settings.agent.command and from_folder(base, ".") != ".":
        settings.agent.cwd = from_folder(base, ".")  # its paths are the config's too: it runs there


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
