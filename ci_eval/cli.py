"""The ``ci-eval`` command: a thin layer that parses options and calls the pipeline.

Each command imports what it needs when it runs: ``ci-eval --help`` and ``--version`` load
typer and nothing else of weight.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ci_eval import __version__, deadline, redact
from ci_eval.config import AGENT_KINDS, CONFIG_NAME
from ci_eval.deadline import Cancellation
from ci_eval.discover import DEFAULT_INCLUDE
from ci_eval.errors import InputError, ValidationFailed
from ci_eval.gate import EXIT_INPUT, EXIT_OK
from ci_eval.inert import inert, inert_json
from ci_eval.text import scrub

if TYPE_CHECKING:
    from ci_eval.publish import ReportSettings
    from ci_eval.results import RunResults

app = typer.Typer(
    name="ci-eval",
    help=(
        "Replay AI-agent eval sets in CI and report them where people look.\n\n"
        "Reads Google ADK (.evalset.json, legacy .test.json), adk-rs, trpc-agent-go and watsonx "
        "Orchestrate eval sets into one model (ADK's EvalSet).\n\n"
        "Exit codes: 0 passed, 1 quality gate failed, 2 usage or input error, "
        "3 infrastructure errors kept cases from being scored."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ci-eval {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """ci-eval: eval sets in, JUnit, Markdown and a baseline gate out."""
    _install_redactor(os.environ)


def _install_redactor(env: Mapping[str, str]) -> None:
    """One redactor for the process, built before anything is printed: under GitHub Actions
    each secret is masked in the log (``::add-mask::``) the moment it becomes known."""
    workflow = None
    if env.get("GITHUB_ACTIONS") == "true":
        from ci_eval.publish.github import Workflow

        workflow = Workflow()
    redact.install(redact.Redactor(on_new=workflow.mask if workflow else None))
    redact.current().add(*redact.env_secrets(env))


PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Files or directories to search (default: the current directory).", show_default=False
    ),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        metavar="GLOB",
        help=(
            "Only files matching GLOB (repeatable). A pattern without '/' matches the "
            "file name at any depth; '**' crosses folders. Default: "
            + ", ".join(DEFAULT_INCLUDE)
            + ". Orchestrate datasets have no naming "
            "convention: add --include '*.json' for them."
        ),
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Skip files matching GLOB (repeatable).",
        show_default=False,
    ),
]


JunitOpt = Annotated[
    Path | None,
    typer.Option("--junit", metavar="FILE", help="Write JUnit XML here.", show_default=False),
]
SummaryOpt = Annotated[
    Path | None,
    typer.Option(
        "--summary",
        metavar="FILE",
        help="Write the Markdown summary here (on GitHub Actions it also goes to the job summary).",
        show_default=False,
    ),
]
AdkResultsOpt = Annotated[
    Path | None,
    typer.Option(
        "--adk-results",
        metavar="DIR",
        help="Write one ADK .evalset_result.json per eval set here.",
        show_default=False,
    ),
]
CommentOpt = Annotated[
    bool | None,
    typer.Option(
        "--comment/--no-comment",
        help="Upsert the PR comment (GitHub; needs a token with "
        "pull-requests: write) [default: no].",
        show_default=False,
    ),
]
CommentIdOpt = Annotated[
    str | None,
    typer.Option(
        "--comment-id",
        metavar="ID",
        help="Tell this job's comment apart, e.g. per matrix leg [default: workflow/job].",
        show_default=False,
    ),
]


BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="FILE",
        help="The stored baseline [default: .ci-eval/baseline.json; "
        "a missing baseline means thresholds only].",
        show_default=False,
    ),
]
BaselineRefOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline-ref",
        metavar="REF",
        help="Read the baseline as it is at this git ref "
        "[default in a pull request: the merge base with the base branch].",
        show_default=False,
    ),
]
ToleranceOpt = Annotated[
    float | None,
    typer.Option(
        "--tolerance",
        metavar="X",
        help="A metric's mean may drop by this much before it counts as a regression [default: 0].",
        show_default=False,
    ),
]
SignificanceOpt = Annotated[
    float | None,
    typer.Option(
        "--significance",
        metavar="P",
        help="With repeated runs on both sides, a drop must be "
        "significant at this level [default: 0.05].",
        show_default=False,
    ),
]
FailOnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        metavar="failure,regression,error,not-evaluated",
        help="What fails the gate [default: regression,error,not-evaluated with a baseline; "
        "failure,error,not-evaluated without]. A run where nothing was evaluated always fails.",
        show_default=False,
    ),
]
MinHistoryOpt = Annotated[
    int | None,
    typer.Option(
        "--min-history",
        metavar="N",
        help="Runs on main a case needs before its history judges it; with fewer, the simple "
        "rule (passed every run on main, fails most runs now) [default: 5].",
        show_default=False,
    ),
]
AcceptOpt = Annotated[
    Path | None,
    typer.Option(
        "--accept",
        metavar="FILE",
        help="Regressions this pull request accepts, with reasons [default: "
        ".ci-eval/accept.toml when present].",
        show_default=False,
    ),
]
WindowOpt = Annotated[
    int | None,
    typer.Option(
        "--window",
        metavar="N",
        help="Runs of history the baseline keeps per case and metric [default: 20].",
        show_default=False,
    ),
]
MaxAgeOpt = Annotated[
    float | None,
    typer.Option(
        "--baseline-max-age",
        metavar="DAYS",
        help="Warn when the baseline is older [default: 30].",
        show_default=False,
    ),
]


def _say(line: str, err: bool = False) -> None:
    """Every line ci-eval prints may carry agent or eval-file text: it goes out inert (no
    ANSI or controls, no GitHub/Azure/TeamCity command prefixes). ci-eval's own workflow
    commands go through ``github.Workflow`` instead."""
    # lone surrogates → U+FFFD first; no secret reaches the terminal
    typer.echo(inert(redact.text(scrub(line))), err=err)


EvalConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--eval-config",
        metavar="FILE",
        help="Use this ADK eval config (test_config.json shape; or a trpc-agent-go metrics "
        "list) for every eval set, like `adk eval --config_file_path` [default: per set, "
        "test_config.json/eval_config.json beside it, else the nearest one above it up to the "
        "repository root, else ADK's default criteria].",
        show_default=False,
    ),
]


@app.command()
def validate(
    paths: PathsArg = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    eval_config: EvalConfigOpt = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v", "--verbose", help="List every JSON file skipped or not read, with the reason."
        ),
    ] = False,
) -> None:
    """Check eval sets and their metric sidecars without running anything.

    Prints one line per file: path, dialect, cases, invocations and the metrics that apply
    (with the config file they come from). Each problem is one line
    'path:line:col: json.path: message'. JSON that is not an eval set is counted (listed with
    -v). Exits 0 when every eval set is valid, 2 otherwise.

    Example: ci-eval validate tests/eval -v
    """
    from ci_eval import pipeline
    from ci_eval.config import find_config, load_config
    from ci_eval.discover import discover_all
    from ci_eval.load import Failed, LoadedEvalSet, LoadedSidecar, Skipped, load_all
    from ci_eval.validate import validate_counts, validate_lines

    try:
        found = discover_all(list(paths or []), include, exclude)
        outcomes = load_all(found.candidates, eval_config)
    except ValidationFailed as exc:
        for problem in exc.problems:
            _say(str(problem), err=True)
        raise typer.Exit(EXIT_INPUT) from None
    except InputError as exc:
        _fail(exc)
    try:
        settings = load_config(find_config(), required=False)
        pipeline.register_metrics(settings)
    except InputError as exc:
        _fail(exc)
    outcomes = _with_metric_names_checked(outcomes)
    for line in validate_lines(outcomes, found.ignored, verbose):
        _say(line)
    if not any(isinstance(o, LoadedEvalSet | LoadedSidecar | Failed) for o in outcomes):
        _say(
            "no eval sets found (searched for "
            + ", ".join(include or DEFAULT_INCLUDE)
            + (", and any *.json in folders named eval*" if not include else "")
            + ")",
            err=True,
        )
        skipped = sum(isinstance(o, Skipped) for o in outcomes) + len(found.ignored)
        if skipped and not verbose:
            _say(f"{skipped} JSON file(s) skipped or not read; -v lists them", err=True)
        raise typer.Exit(EXIT_INPUT)
    _say(validate_counts(outcomes, found.ignored, verbose), err=True)
    invalid = any(isinstance(o, Failed) for o in outcomes)
    raise typer.Exit(EXIT_INPUT if invalid else EXIT_OK)


def _with_metric_names_checked(outcomes: list) -> list:
    """An eval set or sidecar naming a metric no registry knows is invalid (as in `run`)."""
    from ci_eval import pipeline
    from ci_eval.load import Failed, LoadedEvalSet, LoadedSidecar

    out = []
    reported: set[str] = set()
    for outcome in outcomes:
        config = (
            outcome.metrics
            if isinstance(outcome, LoadedEvalSet) and outcome.metrics.source != "default"
            else outcome.config
            if isinstance(outcome, LoadedSidecar)
            else None
        )
        problems = pipeline.unknown_metrics(config, outcome.path) if config else []
        if problems and config.source in reported:
            problems = [
                InputError(
                    f"its metrics come from {config.source}, which names unknown metrics",
                    path=outcome.path,
                )
            ]
        elif problems:
            reported.add(config.source)
        out.append(Failed(outcome.path, ValidationFailed(problems)) if problems else outcome)
    return out


@app.command()
def convert(
    file: Annotated[
        Path, typer.Argument(help="An eval set in any dialect ci-eval reads.", show_default=False)
    ],
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="DIALECT",
            help="Target dialect: adk (ADK EvalSet, snake_case) or trpc "
            "(trpc-agent-go, current generation).",
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="OUT",
            help="Write here instead of standard output.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write an eval set in another dialect.

    What the target cannot represent is said on standard error, one line each.

    Example: ci-eval convert evals/weather.test.json --to adk -o evals/weather.evalset.json
    """
    from ci_eval.dialects import WRITERS
    from ci_eval.discover import discover
    from ci_eval.load import Failed, LoadedEvalSet, load_all

    writer = WRITERS.get(to)
    if writer is None:
        _fail(InputError(f"unknown target dialect {to!r}; choose one of: " + ", ".join(WRITERS)))
    if not file.is_file():
        _fail(InputError("no such file", path=str(file)))
    [outcome] = load_all(discover([file]))
    if isinstance(outcome, Failed):
        _fail(outcome.error)
    if not isinstance(outcome, LoadedEvalSet):
        _fail(InputError("not an eval set (it is a metrics sidecar)", path=str(file)))
    data, warnings = writer.dump(outcome.eval_set)
    for warning in warnings:
        _say(f"ci-eval: convert to {to}: {warning}", err=True)
    text = inert_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
    if output is None:
        sys.stdout.write(redact.text(text))
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))


@app.command()
def run(
    paths: PathsArg = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            metavar="KIND",
            help="How to reach the agent: "
            + ", ".join(AGENT_KINDS)
            + ". Default: [agent] kind in ci-eval.toml.",
            show_default=False,
        ),
    ] = None,
    agent_url: Annotated[
        str | None,
        typer.Option(
            "--agent-url",
            metavar="URL",
            help="adk-http: the api_server's base URL; http: the endpoint that takes one turn.",
            show_default=False,
        ),
    ] = None,
    app_name: Annotated[
        str | None,
        typer.Option(
            "--app-name",
            metavar="NAME",
            help="ADK app name (default: each case's session_input.app_name).",
            show_default=False,
        ),
    ] = None,
    user_id: Annotated[
        str | None,
        typer.Option(
            "--user-id",
            metavar="ID",
            help="ADK user id (default: session_input.user_id, else test_user_id as ADK).",
            show_default=False,
        ),
    ] = None,
    agent_command: Annotated[
        str | None,
        typer.Option(
            "--agent-command",
            metavar="CMD",
            help="command: the program speaking JSON lines.",
            show_default=False,
        ),
    ] = None,
    agent_module: Annotated[
        str | None,
        typer.Option(
            "--agent-module",
            metavar="PATH_OR_MODULE",
            help="adk: an agent directory or module with root_agent.",
            show_default=False,
        ),
    ] = None,
    replay: Annotated[
        list[str] | None,
        typer.Option(
            "--replay",
            metavar="FILE",
            help="replay: recorded results (ADK .evalset_result.json, "
            "trpc-agent-go results, ci-eval results); repeatable, or a directory.",
            show_default=False,
        ),
    ] = None,
    replay_pick: Annotated[
        str | None,
        typer.Option(
            "--replay-pick",
            metavar="newest|oldest|all",
            help="replay: which recording of a case to replay when several files (ADK's "
            ".adk/eval_history) hold one, by each file's own timestamp; all = one run per "
            "recording, newest first [default: newest].",
            show_default=False,
        ),
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(
            "--agent-token-env",
            metavar="VAR",
            help="Send the token in environment variable VAR "
            "as 'Authorization: Bearer …' (never printed).",
            show_default=False,
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            metavar="NAME=VALUE",
            help="An extra HTTP header for the agent (repeatable).",
            show_default=False,
        ),
    ] = None,
    agent_env: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-env",
            metavar="NAME",
            help="Pass environment variable NAME to a command agent although ci-eval "
            "withholds it by default (GITHUB_TOKEN, INPUT_*, the Actions runtime's tokens, the "
            "judge's key, the agent's token); repeatable.",
            show_default=False,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help=f"Settings file (default: {CONFIG_NAME} in the working directory or the "
            "nearest parent up to the repository root).",
            show_default=False,
        ),
    ] = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    eval_config: EvalConfigOpt = None,
    case: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            metavar="SET_ID:CASE_ID",
            help="Run only these cases (repeatable; SET_ID alone for a whole set).",
            show_default=False,
        ),
    ] = None,
    num_runs: Annotated[
        int | None,
        typer.Option(
            "--num-runs",
            metavar="N",
            help="Run each case N times, each in a fresh session [default: 1].",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", metavar="N", help="Cases run at once [default: 4].", show_default=False
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Per turn [default: 60].", show_default=False
        ),
    ] = None,
    retries: Annotated[
        int | None,
        typer.Option(
            "--retries",
            metavar="N",
            help="Retries for connection errors, 5xx and 429, with "
            "backoff and jitter, honouring Retry-After [default: 2].",
            show_default=False,
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            metavar="FILE",
            help="Write the full results JSON here.",
            show_default=False,
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            metavar="NAME[=THRESHOLD]",
            help="Score with these metrics instead of the "
            "eval sets' own (repeatable); a sidecar metric of the same name keeps its criterion. "
            "See `ci-eval metrics`.",
            show_default=False,
        ),
    ] = None,
    min_pass: Annotated[
        int | None,
        typer.Option(
            "--min-pass",
            metavar="K",
            help="With --num-runs N: a case passes when at least K of "
            "its runs pass (default: ADK's rule, the mean over runs against the threshold).",
            show_default=False,
        ),
    ] = None,
    judge_url: Annotated[
        str | None,
        typer.Option(
            "--judge-url",
            metavar="URL",
            help="OpenAI-compatible base URL for LLM-judged metrics (…/v1).",
            show_default=False,
        ),
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model", metavar="MODEL", help="The judge's model name.", show_default=False
        ),
    ] = None,
    judge_key_env: Annotated[
        str | None,
        typer.Option(
            "--judge-key-env",
            metavar="VAR",
            help="Environment variable holding the judge's API key (never printed).",
            show_default=False,
        ),
    ] = None,
    simulator_url: Annotated[
        str | None,
        typer.Option(
            "--simulator-url",
            metavar="URL",
            help="OpenAI-compatible base URL of the simulated user's LLM, for ADK "
            "conversation_scenario cases and Orchestrate stories [default: the judge's].",
            show_default=False,
        ),
    ] = None,
    simulator_model: Annotated[
        str | None,
        typer.Option(
            "--simulator-model",
            metavar="MODEL",
            help="The simulated user's model [default: the judge's].",
            show_default=False,
        ),
    ] = None,
    simulator_key_env: Annotated[
        str | None,
        typer.Option(
            "--simulator-key-env",
            metavar="VAR",
            help="Environment variable holding the simulator's API key (never printed).",
            show_default=False,
        ),
    ] = None,
    template_dir: Annotated[
        Path | None,
        typer.Option(
            "--template-dir",
            metavar="DIR",
            help="Override ci-eval's Jinja templates (judge "
            "prompts; reports) with files of the same name here.",
            show_default=False,
        ),
    ] = None,
    junit: JunitOpt = None,
    summary: SummaryOpt = None,
    adk_results: AdkResultsOpt = None,
    comment: CommentOpt = None,
    comment_id: CommentIdOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            help="Run only shard I of N (a stable hash of set and case "
            "id), for matrix jobs; join them with `ci-eval merge`.",
            show_default=False,
        ),
    ] = None,
    baseline: BaselineOpt = None,
    baseline_ref: BaselineRefOpt = None,
    update_baseline: Annotated[
        bool | None,
        typer.Option(
            "--update-baseline/--no-update-baseline",
            help="Write the baseline from this run.",
            show_default=False,
        ),
    ] = None,
    tolerance: ToleranceOpt = None,
    significance: SignificanceOpt = None,
    fail_on: FailOnOpt = None,
    baseline_max_age: MaxAgeOpt = None,
    min_history: MinHistoryOpt = None,
    accept: AcceptOpt = None,
    window: WindowOpt = None,
) -> None:
    """Replay eval sets against the agent and write what it did.

    Each case runs in a fresh agent session, turns in order; cases run concurrently. An agent
    that fails makes its case ERROR with the reason, never the whole run. Ctrl-C stops new
    cases and keeps what finished. Then every case is scored with its eval set's metrics.
    Exits 0 when every case passed, 1 when a case failed, 2 on bad input, 3 when
    infrastructure errors kept cases from being scored.

    Example: ci-eval run samples --agent command --agent-command
    "python samples/agents/weather_agent/command_agent.py" --results results.json
    """
    from ci_eval import pipeline
    from ci_eval.config import find_config, load_config
    from ci_eval.publish import ReportSettings

    try:
        settings = load_config(config or find_config(), required=config is not None)
        overrides = {
            "paths": [str(p) for p in paths] if paths else None,
            "eval_config": str(eval_config) if eval_config else None,
            "include": include,
            "exclude": exclude,
            "cases": case,
            "num_runs": num_runs,
            "concurrency": concurrency,
            "timeout": timeout,
            "retries": retries,
            "results": str(results) if results else None,
            "metric": metric,
            "min_pass": min_pass,
            "template_dir": str(template_dir) if template_dir else None,
            "junit": str(junit) if junit else None,
            "summary": str(summary) if summary else None,
            "adk_results": str(adk_results) if adk_results else None,
            "comment": comment,
            "comment_id": comment_id,
            "shard": shard,
            "baseline": str(baseline) if baseline else None,
            "baseline_ref": baseline_ref,
            "update_baseline": update_baseline,
            "tolerance": tolerance,
            "significance": significance,
            "fail_on": fail_on,
            "baseline_max_age": baseline_max_age,
            "min_history": min_history,
            "accept": str(accept) if accept else None,
            "baseline_window": window,
        }
        for key, value in overrides.items():
            if value is not None:
                setattr(settings, key, value)
        agent_overrides = {
            "kind": agent,
            "url": agent_url,
            "app_name": app_name,
            "user_id": user_id,
            "command": agent_command,
            "module": agent_module,
            "replay": replay,
            "replay_pick": replay_pick,
            "token_env": token_env,
            "env": agent_env,
        }
        for key, value in agent_overrides.items():
            if value is not None:
                setattr(settings.agent, key, value)
        judge_overrides = {
            "base_url": judge_url,
            "model": judge_model,
            "api_key_env": judge_key_env,
        }
        for key, value in judge_overrides.items():
            if value is not None:
                setattr(settings.judge, key, value)
        for key, value in (
            ("base_url", simulator_url),
            ("model", simulator_model),
            ("api_key_env", simulator_key_env),
        ):
            if value is not None:
                setattr(settings.simulator, key, value)
        for item in header or []:
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise InputError(f"--header {item!r}: expected NAME=VALUE")
            settings.agent.headers[name.strip()] = value
        stop = Cancellation(deadline.grace_from(os.environ))
    except InputError as exc:
        _fail(exc)
    with _stop_on_signals(stop):
        try:
            outcome = pipeline.run(settings, stop)
        except ValidationFailed as exc:
            for problem in exc.problems:
                _say(str(problem), err=True)
            raise typer.Exit(EXIT_INPUT) from None
        except InputError as exc:
            _fail(exc)
        for notice in outcome.problems:
            _say(f"ci-eval: {notice}", err=True)
        _report(
            outcome.results,
            ReportSettings(
                settings.junit,
                settings.summary,
                settings.results,
                settings.adk_results,
                settings.comment,
                settings.comment_id,
                settings.template_dir,
            ),
        )
    raise typer.Exit(outcome.exit_code)


def _report(results: RunResults, report: ReportSettings, env: dict[str, str] | None = None) -> None:
    """The terminal summary, then files and GitHub. Agent text in the log cannot issue
    workflow commands."""
    from ci_eval.publish import publish
    from ci_eval.publish.github import Workflow
    from ci_eval.report.terminal import summary_lines

    env = dict(os.environ) if env is None else env
    workflow = Workflow()
    lines = summary_lines(results)
    if env.get("GITHUB_ACTIONS") == "true":
        with workflow.untrusted():
            for line in lines:
                _say(line)
    else:
        for line in lines:
            _say(line)
    try:
        for warning in publish(results, report, env=env, workflow=workflow):
            _say(f"ci-eval: warning: {warning}", err=True)
    except OSError as exc:
        _fail(
            InputError(
                f"cannot write a report: {exc.strerror or exc}", path=getattr(exc, "filename", None)
            )
        )


@app.command()
def report(
    results_file: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help="A results file from `ci-eval run --results`.",
            show_default=False,
        ),
    ],
    junit: JunitOpt = None,
    summary: SummaryOpt = None,
    adk_results: AdkResultsOpt = None,
    comment: CommentOpt = None,
    comment_id: CommentIdOpt = None,
    template_dir: Annotated[
        Path | None,
        typer.Option(
            "--template-dir",
            metavar="DIR",
            help="Your own summary.md.j2 / comment.md.j2.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Render reports from saved results without running anything again.

    Prints the summary, writes the files asked for and, on GitHub Actions, the job summary,
    outputs and annotations; --comment upserts the PR comment. Exits like the run did: 0
    passed, 1 a case failed, 3 errors kept cases from being scored; 2 for a bad file.

    Example: ci-eval report results.json --junit junit.xml --summary summary.md --comment
    """
    from ci_eval import preflight
    from ci_eval.gate import gate
    from ci_eval.publish import ReportSettings
    from ci_eval.results import read_results

    try:
        preflight.output_file(junit, "--junit")
        preflight.output_file(summary, "--summary")
        preflight.output_dir(adk_results, "--adk-results")
        results = read_results(results_file)
    except InputError as exc:
        _fail(exc)
    gc.freeze()  # as in `run`: what was read lives to the end
    _report(
        results,
        ReportSettings(
            str(junit) if junit else None,
            str(summary) if summary else None,
            str(results_file),
            str(adk_results) if adk_results else None,
            bool(comment),
            comment_id,
            str(template_dir) if template_dir else None,
        ),
    )
    raise typer.Exit(gate(results))


class _stop_on_signals:
    """First SIGINT/SIGTERM: no new turn starts; running turns get a grace period, then end as
    cancelled, and the reports are written. Second: stop waiting at once and write them.
    Installed for the run and its reporting, so no signal can lose the reports."""

    def __init__(self, stop: Cancellation) -> None:
        self.stop = stop
        self.previous: dict[int, object] = {}
        self._installed = deadline.installed(stop)

    def _handle(self, signum: int, frame: object) -> None:
        if self.stop.abandoned.is_set():
            return
        if self.stop.is_set():
            _say("ci-eval: stopping now: cancelling running turns, writing the reports", err=True)
            self.stop.abandon()
            return
        self.stop.set()
        _say(
            f"ci-eval: stopping: no new turn starts; running turns get {self.stop.grace:g} s, "
            "then are cancelled (signal again to cancel them now)",
            err=True,
        )

    def __enter__(self) -> None:
        self._installed.__enter__()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._installed.__exit__(*exc)


@app.command("metrics")
def list_metrics() -> None:
    """List the metrics ci-eval computes: name, whose numbers it reproduces, value range,
    default threshold, whether it needs an LLM judge, and what it measures.

    Example: ci-eval metrics
    """
    from ci_eval.metrics import REGISTRY

    for key, m in REGISTRY.items():
        flags = [m.origin, m.value_range]
        if m.default_threshold is not None:
            flags.append(f"default threshold {m.default_threshold:g}")
        if m.needs_llm:
            flags.append("needs an LLM judge")
        if m.informational:
            flags.append("informational")
        name = f"{key.split('/')[1]} ({key.split('/')[0]} criteria)" if "/" in key else key
        _say(f"{name}  [{'; '.join(flags)}]")
        _say(f"    {m.description}")


@app.command("compare")
def compare_command(
    results_file: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help="A results file from `ci-eval run --results`.",
            show_default=False,
        ),
    ],
    baseline: BaselineOpt = None,
    baseline_ref: BaselineRefOpt = None,
    tolerance: ToleranceOpt = None,
    significance: SignificanceOpt = None,
    fail_on: FailOnOpt = None,
    baseline_max_age: MaxAgeOpt = None,
    min_history: MinHistoryOpt = None,
    accept: AcceptOpt = None,
    junit: JunitOpt = None,
    summary: SummaryOpt = None,
    comment: CommentOpt = None,
    comment_id: CommentIdOpt = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="Write the results with the comparison here.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Compare saved results with the baseline's history and gate on regressions.

    Each case is judged against its own recent runs on main: how likely are this run's
    failures given how often the case failed there (beta-binomial, Jeffreys prior), with
    Benjamini-Hochberg across cases and a suite-wide test for a broad drop. Cases with less
    than --min-history runs on main use the simple rule, and the output says so. Exits 1 when
    the gate fails (per --fail-on), 0 when not, 2 on bad input.

    Example: ci-eval compare results.json --baseline .ci-eval/baseline.json
    """
    from ci_eval import pipeline, preflight
    from ci_eval.config import RunSettings
    from ci_eval.gate import gate
    from ci_eval.publish import ReportSettings
    from ci_eval.results import read_results, write_results

    settings = RunSettings()
    for key, value in {
        "baseline": str(baseline) if baseline else None,
        "baseline_ref": baseline_ref,
        "tolerance": tolerance,
        "significance": significance,
        "fail_on": fail_on,
        "baseline_max_age": baseline_max_age,
        "min_history": min_history,
        "accept": str(accept) if accept else None,
    }.items():
        if value is not None:
            setattr(settings, key, value)
    try:
        preflight.gate_options(settings)
        preflight.output_file(output, "-o")
        preflight.output_file(junit, "--junit")
        preflight.output_file(summary, "--summary")
        results = read_results(results_file)
        for notice in pipeline.apply_baseline(results, settings):
            _say(f"ci-eval: {notice}", err=True)
        if output:
            write_results(output, results)
    except InputError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))
    _report(
        results,
        ReportSettings(
            str(junit) if junit else None,
            str(summary) if summary else None,
            str(output or results_file),
            None,
            bool(comment),
            comment_id,
            None,
        ),
    )
    raise typer.Exit(gate(results))


baseline_app = typer.Typer(
    help="Keep the stored baseline.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("update")
def baseline_update(
    results_file: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help="A results file from `ci-eval run --results`.",
            show_default=False,
        ),
    ],
    baseline: BaselineOpt = None,
    window: WindowOpt = None,
) -> None:
    """Append saved results to the baseline's history (the last --window runs per case).

    Cases the results did not measure (errors, skipped, not started, another shard) keep their
    history: an interrupted run never shrinks the baseline. Run it on main after each run (the
    README shows a workflow that keeps the history on a data branch, without hand commits).

    Example: ci-eval baseline update results.json
    """
    from ci_eval import pipeline, preflight
    from ci_eval.baseline import DEFAULT_PATH as baseline_default_path
    from ci_eval.config import RunSettings
    from ci_eval.results import read_results

    settings = RunSettings()
    if baseline:
        settings.baseline = str(baseline)
    if window is not None:
        settings.baseline_window = window
    try:
        preflight.output_file(settings.baseline or baseline_default_path, "--baseline")
        results = read_results(results_file)
        if settings.baseline_window < 1:
            raise InputError("--window must be at least 1")
        line = pipeline.update_baseline(results, settings)
    except InputError as exc:
        _fail(exc)
    _say(line)


@app.command()
def merge(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="RESULTS...", help="Results files of the shards.", show_default=False
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "-o", "--output", metavar="FILE", help="The merged results file.", show_default=False
        ),
    ],
) -> None:
    """Join shard results (matrix jobs run with --shard I/N) into one results file.

    `report` and `compare` then work on it as on a single run.

    Example: ci-eval merge shard-*/results.json -o results.json
    """
    from ci_eval import preflight
    from ci_eval.merge import merge as merge_results
    from ci_eval.results import write_results

    try:
        preflight.output_file(output, "-o")
        merged = merge_results(list(files))
        write_results(output, merged)
    except InputError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))
    _say(f"merged {len(files)} results files: {len(merged.cases())} cases in {output}")


@app.command()
def action() -> None:
    """The GitHub Action's entrypoint: reads INPUT_* and the job's environment, runs the
    pipeline in $GITHUB_WORKSPACE and reports (JUnit, job summary, outputs, annotations, PR
    comment). Exit codes as for `run`.
    """
    from ci_eval.action import run_action
    from ci_eval.publish.github import Workflow

    try:
        stop = Cancellation(deadline.grace_from(os.environ))
    except InputError as exc:
        Workflow().command("error", str(exc), title="ci-eval")
        _fail(exc)
    with _stop_on_signals(stop):
        try:
            outcome, report_settings, env = run_action(os.environ, stop)
        except ValidationFailed as exc:
            for problem in exc.problems:
                _say(str(problem))  # to the log, where the action's user looks
            raise typer.Exit(EXIT_INPUT) from None
        except InputError as exc:
            Workflow().command("error", str(exc), title="ci-eval")
            _fail(exc)
        for notice in outcome.problems:
            _say(f"ci-eval: {notice}", err=True)
        _report(outcome.results, report_settings, env)
    raise typer.Exit(outcome.exit_code)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _fail(error: InputError) -> None:
    _say(f"ci-eval: {error}", err=True)
    raise typer.Exit(EXIT_INPUT)


def _terminate(signum: int, frame: object) -> None:
    # an exception, not the default sudden death: writers remove their temp files on the way out
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Run ``ci-eval ARGV`` (default: the process's arguments) and return its exit code, exactly
    the code the process exits with. ``env`` (default: the process's environment) replaces the
    environment for the run. Whatever the run changes in the process (redactor, signal
    handlers, metric registry, import path) is put back on return, so runs in one process do not
    leak into each other."""
    command = _command()
    with _process_state(env):
        # collect young garbage less often: big runs allocate millions of long-lived objects
        gc.set_threshold(50_000, 20, 100)
        for name in ("SIGTERM", "SIGHUP"):  # no SIGHUP on Windows
            if hasattr(signal, name) and threading.current_thread() is threading.main_thread():
                signal.signal(getattr(signal, name), _terminate)
        try:
            # standalone mode: usage errors, aborts and exits are shown and coded by click
            # exactly as for the process; its sys.exit is caught here and becomes the result
            command.main(
                args=argv, prog_name=_PROG if argv is not None else None, standalone_mode=True
            )
        except SystemExit as exc:
            return _exit_code(exc.code)
        except KeyboardInterrupt:
            _say("ci-eval: interrupted", err=True)
            return 130
        except Exception as exc:  # last line of defence: one line, never a traceback
            if os.environ.get("CI_EVAL_DEBUG"):
                raise
            _say(
                f"ci-eval: internal error: {type(exc).__name__}: {exc} "
                "(set CI_EVAL_DEBUG=1 for a traceback, and please report it)",
                err=True,
            )
            return EXIT_INPUT
    return EXIT_OK


def _exit_code(code: object) -> int:
    """The status the interpreter exits with for ``SystemExit(code)``."""
    if code is None:
        return EXIT_OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


_PROG = "ci-eval"  # in-process; the process names itself as it was started (python -m ci_eval)


@functools.cache
def _command():  # typer's click command (click is typer's own, vendored or not): built once
    return typer.main.get_command(app)


@contextlib.contextmanager
def _process_state(env: Mapping[str, str] | None) -> Iterator[None]:
    """Process-wide state one run may change, restored when it ends."""
    saved_env = dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    names = ("SIGINT", "SIGTERM", "SIGHUP")  # no SIGHUP on Windows
    handlers = {
        sig: signal.getsignal(sig)
        for sig in (getattr(signal, n) for n in names if hasattr(signal, n))
    }
    gc_threshold = gc.get_threshold()
    frozen = gc.get_freeze_count()
    redactor = redact.current()
    path = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = path
        redact.install(redactor)
        gc.set_threshold(*gc_threshold)
        if not frozen:
            gc.unfreeze()  # the run froze what it loaded: collectable again once it is done
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                if handler is not None:
                    signal.signal(sig, handler)
        metrics = sys.modules.get("ci_eval.metrics")
        if metrics is not None:
            metrics.reset()  # custom metrics are the run's own
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)
