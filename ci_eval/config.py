"""Settings for a run: ``ci-eval.toml`` (so a repo says once how its agent is reached) overlaid
by command-line options."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError
from ci_eval.io.jsonpos import read_regular_file

CONFIG_NAME = "ci-eval.toml"
AGENT_KINDS = ("adk-http", "adk", "http", "command", "replay")


@dataclass
class AgentSettings:
    kind: str | None = None
    url: str | None = None
    app_name: str | None = None
    user_id: str | None = None
    command: str | None = None
    module: str | None = None
    replay: list[str] = field(default_factory=list)
    replay_pick: str = "newest"  # newest | oldest | all recordings of a case
    token_env: str | None = None  # name of the environment variable holding a bearer token
    headers: dict[str, str] = field(default_factory=dict)
    # environment variables passed to a command agent although ci-eval withholds them by
    # default (GITHUB_TOKEN, INPUT_*, the judge's key, the agent's token)
    env: list[str] = field(default_factory=list)


@dataclass
class JudgeConfig:
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    retries: int = 3
    temperature: float = 0.0


@dataclass
class SimulatorConfig:
    """The simulated user's LLM ([simulator]); unset fields fall back to the judge's."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float | None = None
    retries: int | None = None
    temperature: float | None = None
    # ADK: used when the eval config's user_simulator_config sets no max_allowed_invocations;
    # Orchestrate: when the dataset sets no max_user_turns
    max_turns: int | None = None

    def resolved(self, judge: JudgeConfig) -> SimulatorConfig:
        """This table with the judge's endpoint filled in where it says nothing."""
        own_endpoint = bool(self.base_url)
        return SimulatorConfig(
            self.base_url or judge.base_url,
            self.model or judge.model,
            self.api_key_env if own_endpoint else (self.api_key_env or judge.api_key_env),
            judge.timeout if self.timeout is None else self.timeout,
            judge.retries if self.retries is None else self.retries,
            judge.temperature if self.temperature is None else self.temperature,
            self.max_turns,
        )


@dataclass
class RunSettings:
    paths: list[str] = field(default_factory=list)
    eval_config: str | None = None  # one ADK eval config (or trpc metrics) for every set
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 2
    num_runs: int = 1
    results: str | None = None
    shard: str | None = None
    baseline: str | None = None
    baseline_ref: str | None = None
    update_baseline: bool = False
    tolerance: float = 0.0
    significance: float = 0.05
    fail_on: list[str] = field(default_factory=list)
    baseline_max_age: float = 30.0
    baseline_window: int = 20  # runs of history kept per case and metric
    min_history: int = 5  # runs on main a case needs before its history judges it
    accept: str | None = None  # the acceptance file [default: .ci-eval/accept.toml]
    junit: str | None = None
    summary: str | None = None
    adk_results: str | None = None
    comment: bool = False
    comment_id: str | None = None
    metric: list[str] = field(default_factory=list)  # --metric NAME[=THRESHOLD]
    min_pass: int | None = None
    template_dir: str | None = None
    agent: AgentSettings = field(default_factory=AgentSettings)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    simulator: SimulatorConfig = field(default_factory=SimulatorConfig)
    metrics: dict[str, Any] = field(default_factory=dict)  # [metrics]: name → threshold/table
    custom_metrics: dict[str, str] = field(default_factory=dict)  # name → "module:function"


_TABLES = ("run", "agent", "judge", "simulator", "metrics", "custom_metrics")


# settings whose default is None but take a number
_NUMBER_OR_NONE = {"min_pass", "max_turns", "retries", "timeout", "temperature"}


def _type_ok(current: Any, value: Any, name: str) -> bool:
    if name in _NUMBER_OR_NONE and current is None:
        wanted = int if name in ("min_pass", "max_turns", "retries") else int | float
        return isinstance(value, wanted) and not isinstance(value, bool)
    if isinstance(current, bool):
        return isinstance(value, bool)
    if isinstance(current, list):
        return isinstance(value, list)
    if isinstance(current, dict):
        return isinstance(value, dict)
    if isinstance(current, int | float) and not isinstance(current, bool):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def _apply(target: Any, table: dict[str, Any], where: str, path: str) -> None:
    known = {f.name for f in fields(target)} - set(_TABLES)
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in known:
            raise InputError(
                f"unknown setting {key!r} in [{where}]; known: " + ", ".join(sorted(known)),
                path=path,
            )
        if not _type_ok(getattr(target, name), value, name):
            raise InputError(
                f"[{where}] {key} has the wrong type ({type(value).__name__})", path=path
            )
        setattr(target, name, value)


def load_config(path: Path | None, required: bool) -> RunSettings:
    settings = RunSettings()
    if path is None:
        return settings
    if not path.is_file():
        if required:
            raise InputError("no such config file", path=str(path))
        return settings
    try:
        data = tomllib.loads(read_regular_file(path, str(path)).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(path)) from None
    unknown = set(data) - set(_TABLES)
    if unknown:
        raise InputError(
            f"unknown table(s) {sorted(unknown)}; ci-eval.toml has "
            + ", ".join(f"[{t}]" for t in _TABLES),
            path=str(path),
        )
    _apply(settings, data.get("run", {}), "run", str(path))
    _apply(settings.agent, data.get("agent", {}), "agent", str(path))
    _apply(settings.judge, data.get("judge", {}), "judge", str(path))
    _apply(settings.simulator, data.get("simulator", {}), "simulator", str(path))
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
