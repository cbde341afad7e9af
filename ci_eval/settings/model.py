"""The settings object of a run and its one check: every setting knows how the user spelled it
(``[run] timeout``, ``input timeout``, ``--timeout``), and a message names the setting in the
source it came from, so the action's users never read a flag they cannot pass."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Self

from ci_eval.errors import InputError
from ci_eval.model.gate_words import DEFAULT_MIN_HISTORY, DEFAULT_SIGNIFICANCE

CONFIG_NAME = "ci-eval.toml"
DEFAULT_BASELINE = ".ci-eval/baseline.json"  # main's history, where none is named
# the connectors' kinds (ci_eval.connectors.CONNECTORS registers one factory each), here for the
# CLI's help, which must not import the connectors
AGENT_KINDS = ("adk-http", "adk", "http", "command", "replay")
Source = Literal["cli", "action"]
# a setting's value as ci-eval.toml, the action's inputs or the flags give it
Value = str | int | float | bool | list[str] | dict[str, object] | None


def from_folder(base: Path, value: str) -> str:
    """``value``, a path relative to ``base``, as a path from the working directory."""
    path = Path(value)
    if path.is_absolute():
        return value
    joined = base / path
    try:
        return joined.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return joined.as_posix()


@dataclass(frozen=True)
class Setting:
    """One setting and its spelling in each source: ``key`` is the attribute (``agent.url``
    for a table's), ``flag`` the ``ci-eval run`` option, ``input`` the action's input."""

    key: str
    flag: str | None = None
    input: str | None = None
    # how an input's text is read: str, int, float, bool, list (one per line or comma-separated),
    # lines (one per line; a single line split at spaces), command (a line, or an argument a line)
    kind: str = "str"
    # it decides where the bar is: in a pull request, ci-eval.toml's value is the merge base's
    # (ci_eval.settings.bar), and a value the PR changed is said, not applied
    bar: bool = False
    # the value where no source gives one (written here only: the settings object, the
    # frozen gate settings and the help read it)
    default: Value = None


SETTINGS = (
    Setting("paths", None, "paths", "lines", bar=True),
    Setting("include", "--include", "include", "list", bar=True),
    Setting("exclude", "--exclude", "exclude", "list", bar=True),
    Setting("eval_config", "--eval-config", "eval-config", bar=True),
    Setting("dialect", "--dialect", "dialect", bar=True),
    Setting("cases", "--case", bar=True),
    Setting("select", "--select", "select", bar=True),
    Setting("metric", "--metric", "metrics", "list", bar=True),
    Setting("num_runs", "--num-runs", "num-runs", "int", bar=True),
    Setting("min_pass", "--min-pass", "min-pass", "int", bar=True),
    Setting("concurrency", "--concurrency", "concurrency", "int"),
    Setting("timeout", "--timeout", "timeout", "float"),
    Setting("retries", "--retries", "retries", "int"),
    Setting("shard", "--shard", "shard", bar=True),
    Setting("baseline", "--baseline", "baseline", bar=True),
    Setting("baseline_ref", "--baseline-ref", "baseline-ref", bar=True),
    Setting("baseline_branch", "--baseline-branch", "baseline-branch", bar=True),
    Setting("update_baseline", "--update-baseline"),
    Setting("fail_on", "--fail-on", "fail-on", "list", bar=True),
    Setting("tolerance", "--tolerance", "tolerance", "float", bar=True, default=0.0),
    Setting("significance", "--significance", bar=True, default=DEFAULT_SIGNIFICANCE),
    Setting("baseline_max_age", "--baseline-max-age", bar=True, default=30.0),
    Setting("baseline_window", "--window", "window", "int", bar=True, default=20),
    Setting(
        "min_history", "--min-history", "min-history", "int", bar=True, default=DEFAULT_MIN_HISTORY
    ),
    Setting("confirm_runs", "--confirm-runs", "confirm-runs", "int", bar=True, default=4),
    Setting("control", "--control", "control", bar=True),
    Setting("control_url", "--control-url", "control-url", bar=True),
    Setting("accept", "--accept", "accept", bar=True),
    Setting("max_removed", "--max-removed", "max-removed", "int", bar=True, default=0),
    Setting("results", "--results", "results"),
    Setting("junit", "--junit", "junit"),
    Setting("summary", "--summary"),
    Setting("adk_results", "--adk-results"),
    Setting("adk_rs_report", "--adk-rs-report"),
    Setting("trpc_results", "--trpc-results", "trpc-results"),
    Setting("comment", "--comment", "comment", "bool"),
    Setting("comment_id", "--comment-id", "comment-id"),
    # ci-eval's own check run (ci_eval.publish.check_run), in the comment's place
    Setting("check_run", "--check-run", "check-run", "bool"),
    # where `ci-eval history`'s site is published: the comment links the cases it names there
    Setting("history_url", "--history-url", "history-url"),
    Setting("template_dir", "--template-dir", "template-dir", bar=True),
    # the judge's and simulator's answers kept across jobs: a folder the PR's config cannot move
    Setting("cache", "--cache", "cache", bar=True),
    Setting("cache_ttl", "--cache-ttl", "cache-ttl", bar=True),
    # main's key signs the entries; the base branch's public key says which are main's
    Setting("cache_sign_key_env", "--cache-sign-key-env", "cache-sign-key-env"),
    Setting("cache_public_key", "--cache-public-key", "cache-public-key", bar=True),
    Setting("agent.kind", "--agent", "agent"),
    Setting("agent.url", "--agent-url", "agent-url"),
    Setting("agent.app_name", "--app-name", "app-name"),
    Setting("agent.user_id", "--user-id", "user-id"),
    Setting("agent.command", "--agent-command", "agent-command", "command"),
    Setting("agent.module", "--agent-module", "agent-module"),
    Setting("agent.replay", "--replay", "replay", "list"),
    Setting("agent.replay_pick", "--replay-pick", "replay-pick"),
    Setting("agent.token_env", "--agent-token-env"),
    Setting("agent.headers", "--header"),
    Setting("agent.env", "--agent-env", "agent-env", "list"),
    Setting("agent.user", "--agent-user", "agent-user"),
    Setting("agent.watch", "--watch", "watch", "list", bar=True),
    # the agent's OpenTelemetry spans received during the run (ci_eval.connectors.live_spans)
    Setting("agent.otlp", "--otlp", "otlp", "bool"),
    Setting("agent.otlp_port", "--otlp-port", "otlp-port", "int", default=0),
    Setting("agent.otlp_wait", "--otlp-wait", "otlp-wait", "float", default=2.0),
    Setting("judge.base_url", "--judge-url", bar=True),
    Setting("judge.model", "--judge-model", bar=True),
    Setting("judge.api_key_env", "--judge-key-env", bar=True),
    Setting("simulator.base_url", "--simulator-url", bar=True),
    Setting("simulator.model", "--simulator-model", bar=True),
    Setting("simulator.api_key_env", "--simulator-key-env", bar=True),
    # the workflow file's word only (never ci-eval.toml's, which the pull request controls)
    Setting("trust_pr_config", "--trust-pr-config", "trust-pr-config", "bool"),
)
BAR = tuple(s.key for s in SETTINGS if s.bar)
# tables of ci-eval.toml that place the bar as a whole: metric thresholds
BAR_TABLES = ("metrics", "custom_metrics", "prices", "budget")
NOT_IN_TOML = ("trust_pr_config", "agent.user")
_BY_KEY = {s.key: s for s in SETTINGS}


def default(key: str) -> Value:
    """The setting's default, as its row of :data:`SETTINGS` gives it."""
    return _BY_KEY[key].default


class Frozen:
    """Settings built by one path (:func:`ci_eval.settings.build.build`), then frozen
    (:meth:`freeze`): after, setting one raises, and its lists are tuples, its tables
    read-only. Not a frozen dataclass: ci-eval.toml, the merge base and the flags are laid
    over each other while it is built."""

    _frozen = False

    def __setattr__(self, name: str, value: object) -> None:
        if self._frozen:
            raise dataclasses.FrozenInstanceError(
                f"cannot set {type(self).__name__}.{name}: settings are frozen once built"
            )
        object.__setattr__(self, name, value)

    def freeze(self) -> Self:
        """This object, its fields and the settings objects in them frozen; returns it."""
        if self._frozen:
            return self
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Frozen):
                value.freeze()
            elif isinstance(value, list):
                object.__setattr__(self, f.name, tuple(value))
            elif isinstance(value, dict):
                object.__setattr__(self, f.name, MappingProxyType(value))
        object.__setattr__(self, "_frozen", True)
        return self


@dataclass
class Names(Frozen):
    """How each setting is named in messages: as the user gave it, else in the run's own
    source (a flag on the command line, an input in the action), else as ci-eval.toml spells
    it."""

    source: Source = "cli"
    given: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # key → (name, file)

    def name(self, key: str) -> str:
        if key in self.given:
            return self.given[key][0]
        setting = _BY_KEY.get(key)
        if setting is not None:
            if self.source == "cli" and setting.flag:
                return setting.flag
            if self.source == "action" and setting.input:
                return f"input {setting.input}"
        table, _, name = key.rpartition(".")
        return f"[{table or 'run'}] {name}"

    def error(self, key: str, message: str) -> InputError:
        """``message`` about the setting, e.g. ``error("timeout", "must be > 0")``."""
        return InputError(f"{self.name(key)} {message}", path=self.given.get(key, ("", None))[1])


@dataclass
class AgentSettings(Frozen):
    kind: str | None = None
    url: str | None = None
    app_name: str | None = None
    user_id: str | None = None
    # one command line, split as the platform splits it, or one argument per item
    command: str | list[str] | None = None
    module: str | None = None
    replay: list[str] = field(default_factory=list)
    replay_pick: str = "newest"  # newest | oldest | all recordings of a case
    token_env: str | None = None  # name of the environment variable holding a bearer token
    headers: dict[str, str] = field(default_factory=dict)
    # environment variables passed to a command agent although ci-eval withholds them by
    # default (GITHUB_TOKEN, INPUT_*, the judge's key, the agent's token)
    env: list[str] = field(default_factory=list)
    cwd: str | None = None  # the folder a command agent runs in (a control's worktree)
    # the user a command agent runs as: auto (nobody when ci-eval is root), keep, or a user
    user: str | None = None
    # what the agent reads, as globs from ci-eval.toml's folder (--select changed); empty: the
    # whole repository but eval files, Markdown, docs/ and .ci-eval/
    watch: list[str] = field(default_factory=list)
    # --otlp: listen for the agent's OTLP/HTTP spans on this port (0: a free one) and give each
    # turn this many seconds after its reply for them
    otlp: bool = False
    otlp_port: int = default("agent.otlp_port")  # type: ignore[assignment]
    otlp_wait: float = default("agent.otlp_wait")  # type: ignore[assignment]
    names: Names = field(default_factory=Names, repr=False, compare=False)

    def name(self, key: str) -> str:
        """How the user names this agent setting (``--agent-url``, ``input agent-url``...)."""
        return self.names.name(f"agent.{key}")


@dataclass
class JudgeConfig(Frozen):
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    retries: int = 3
    temperature: float = 0.0


@dataclass
class SimulatorConfig(Frozen):
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
class ReportSettings:
    """Where the reports go, built once from the run's settings (:meth:`RunSettings.report`)."""

    junit: str | None = None
    summary: str | None = None
    results: str | None = None  # where the results JSON is (for outputs and pointers)
    adk_results: str | None = None
    comment: bool = False
    comment_id: str | None = None
    template_dir: str | None = None
    token: str | None = field(default=None, repr=False)  # GitHub's, for the PR comment
    job_summary: bool = True  # on GitHub Actions, the Markdown summary goes to the job summary
    trust_pr_config: bool = False  # a pull request's own templates are used
    files: dict[str, str] = field(default_factory=dict)  # more reports: reporter name -> path
    check_run: bool = False  # ci-eval's own check run (ci_eval.publish.check_run)
    history_url: str | None = None  # `ci-eval history`'s site: the comment links cases there
    # the comment posted where the check run cannot be made (its place otherwise)
    comment_fallback: bool = False

    def report_files(self) -> dict[str, str]:
        """Every report to write, by reporter name (``ci_eval.publish.REPORTERS``): JUnit's,
        the summary, the ADK results' folder, then the others named in ``files``."""
        given = {"junit": self.junit, "summary": self.summary, "adk-results": self.adk_results}
        return {**{name: path for name, path in given.items() if path}, **self.files}


@dataclass
class RunSettings(Frozen):
    paths: list[str] = field(default_factory=list)
    eval_config: str | None = None  # one ADK eval config (or trpc metrics) for every set
    # "adk-rs": the eval sets in ADK's shape are adk-rs's, scored as adk-rs scores them (its
    # current files are ADK's shape); None: each file's dialect as its content says
    dialect: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    # "changed": a pull request re-runs only the cases it could have changed (gate.changed)
    select: str = "all"
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 2
    num_runs: int = 1
    results: str | None = None
    shard: str | None = None
    baseline: str | None = None
    baseline_ref: str | None = None
    # main's history on a data branch, read through git (its file: --baseline, at its root)
    baseline_branch: str | None = None
    update_baseline: bool = False
    tolerance: float = default("tolerance")  # type: ignore[assignment]
    significance: float = default("significance")  # type: ignore[assignment]
    fail_on: list[str] = field(default_factory=list)
    baseline_max_age: float = default("baseline_max_age")  # type: ignore[assignment]
    # runs of history kept per case and metric
    baseline_window: int = default("baseline_window")  # type: ignore[assignment]
    # runs on main a case needs before its history judges it
    min_history: int = default("min_history")  # type: ignore[assignment]
    # confirmation reruns a failing case may get before the gate decides (0: none)
    confirm_runs: int = default("confirm_runs")  # type: ignore[assignment]
    # a same-day control: run the agent of this git ref's merge base ("base": the pull
    # request's base branch) on the same cases in the same job (ci_eval.run.control)
    control: str | None = None
    control_url: str | None = None  # where the control's agent is served (http, adk-http)
    accept: str | None = None  # the acceptance file [default: .ci-eval/accept.toml]
    # cases of main's history this run may not find before the gate fails (accepted ones aside)
    max_removed: int = default("max_removed")  # type: ignore[assignment]
    junit: str | None = None
    summary: str | None = None
    adk_results: str | None = None
    adk_rs_report: str | None = None  # a folder: one adk-rs EvalReport per eval set
    trpc_results: str | None = None  # a folder: trpc-agent-go's EvalSetResult per trpc set
    comment: bool = False
    comment_id: str | None = None
    check_run: bool = False
    history_url: str | None = None
    metric: list[str] = field(default_factory=list)  # --metric NAME[=THRESHOLD]
    min_pass: int | None = None
    template_dir: str | None = None
    # the judge's and simulator's response cache (ci_eval.net.llm_cache): a folder, and how long
    # an answer is used (seconds, or "12h", "7d"; default 7 days)
    cache: str | None = None
    cache_ttl: str | float | None = None
    cache_sign_key_env: str | None = None  # the variable holding main's Ed25519 private key
    cache_public_key: str | None = None  # a file (or the key) that verifies main's entries
    agent: AgentSettings = field(default_factory=AgentSettings)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    simulator: SimulatorConfig = field(default_factory=SimulatorConfig)
    metrics: dict[str, object] = field(default_factory=dict)  # [metrics]: name → threshold/table
    custom_metrics: dict[str, str] = field(default_factory=dict)  # name → "module:function"
    # [prices]: model → {input, output} in $ per million tokens; [budget]: opt-in limits
    # (ci_eval.settings.usage)
    prices: dict[str, object] = field(default_factory=dict)
    budget: dict[str, object] = field(default_factory=dict)
    # the pull request's ci-eval.toml is trusted to move the bar (a flag or input only)
    trust_pr_config: bool = False
    # what the pull request's ci-eval.toml changed of the bar, not applied (ci_eval.settings.bar)
    bar_changes: list[str] = field(default_factory=list)
    # the folder of the ci-eval.toml read (None: none): the files reports name are relative to it
    root: str | None = None
    names: Names = field(default_factory=Names, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.agent.names is not self.names:  # a copy (dataclasses.replace) shares both
            self.agent.names = self.names

    def baseline_file(self) -> str:
        """The baseline in the working tree: as a flag names it (from the cwd), as ci-eval.toml
        names it or by default (.ci-eval/baseline.json) from ci-eval.toml's folder."""
        in_toml = self.names.given.get("baseline", ("", None))[1] is not None
        if self.root and (self.baseline is None or in_toml):
            return from_folder(Path(self.root), self.baseline or DEFAULT_BASELINE)
        return self.baseline or DEFAULT_BASELINE

    def given(self, key: str) -> bool:
        """Whether the user set this setting (in ci-eval.toml, an input or a flag)."""
        return key in self.names.given

    def overlay(self, values: Mapping[str, Value | Path | list[Path]]) -> RunSettings:
        """Set what the run's source (flags or inputs) gives; None leaves a setting as it is."""
        for key, value in values.items():
            if value is None:
                continue
            setting = _BY_KEY[key]
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, list):
                value = [str(v) for v in value]
            target, name = setting_target(self, key)
            if key == "agent.command":
                self.agent.cwd = None  # a flag's command runs where ci-eval runs
            if key == "agent.headers":
                value = {**self.agent.headers, **_headers(value, self.names.name(key))}
            setattr(target, name, value)
            spelled = setting.flag if self.names.source == "cli" else f"input {setting.input}"
            self.names.given[key] = (spelled or key, None)
        return self

    def report(self, env: Mapping[str, str], job_summary: bool = True) -> ReportSettings:
        # a shard posts no comment unless told to (not by the action's default): the job that
        # merges the shards posts it; a check run takes the comment's place unless it is asked
        comment = self.comment and (self.given("comment") or not self.shard)
        return ReportSettings(
            self.junit,
            self.summary,
            self.results,
            self.adk_results,
            comment and (self.given("comment") or not self.check_run),
            self.comment_id,
            self.template_dir,
            github_token(env),
            job_summary,
            trust_pr_config=self.trust_pr_config,
            files={
                name: path
                for name, path in (
                    ("adk-rs-report", self.adk_rs_report),
                    ("trpc-results", self.trpc_results),
                )
                if path
            },
            check_run=self.check_run,
            comment_fallback=comment,
            history_url=self.history_url,
        )


def setting_target(settings: RunSettings, key: str) -> tuple[object, str]:
    table, _, name = key.rpartition(".")
    return (getattr(settings, table) if table else settings), name


def _headers(items: object, name: str) -> dict[str, str]:
    out = {}
    for item in items if isinstance(items, list) else []:
        header, sep, value = str(item).partition("=")
        if not sep or not header.strip():
            raise InputError(f"{name} {item!r}: expected NAME=VALUE")
        out[header.strip()] = value
    return out


def input_variable(env: Mapping[str, str], name: str) -> str:
    """The one variable the action's input ``name`` arrives in: the composite action
    (``CI_EVAL_ACTION=setup``) sets ``INPUT_NUM_RUNS`` for each of its inputs; the runner sets
    a Docker action's as ``INPUT_NUM-RUNS``. The other spelling is never read: a step earlier
    in the job could have set it (``$GITHUB_ENV``), and the first non-empty would decide."""
    variable = f"INPUT_{name.upper()}"
    return variable.replace("-", "_") if env.get("CI_EVAL_ACTION") == "setup" else variable


def github_token(env: Mapping[str, str]) -> str | None:
    """The token for GitHub: the action's ``github-token`` input, else ``GITHUB_TOKEN``."""
    for name in (input_variable(env, "github-token"), "GITHUB_TOKEN"):
        if env.get(name):
            return env[name]
    return None


# the job's own credentials: never sent to an endpoint as an API key
CI_CREDENTIALS = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "CI_JOB_TOKEN",
    "SYSTEM_ACCESSTOKEN",
)
CI_CREDENTIAL_PREFIXES = ("ACTIONS_", "INPUT_", "RUNNER_", "GITHUB_")


def ci_credential(name: str) -> bool:
    """Whether the variable ``name`` holds, or may hold, the job's own credentials."""
    return name in CI_CREDENTIALS or name.startswith(CI_CREDENTIAL_PREFIXES)


def api_key(env: Mapping[str, str], name: str | None, whose: str) -> str | None:
    """The value of the environment variable ``name`` (None when no variable is named); a named
    one that is unset or empty stops the run before it starts, saying which."""
    if not name:
        return None
    if ci_credential(name):
        raise InputError(
            f"{whose} API key variable is {name}, a CI credential: a judge or simulator never "
            "gets the job's token (its endpoint could be anyone's); name the variable that "
            "holds the provider's key"
        )
    key = env.get(name)
    if not key:
        raise InputError(f"the environment variable {name} ({whose} API key) is not set")
    return key
