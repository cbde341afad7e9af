"""``ci-eval run``: the flags over ci-eval.toml, then the pipeline and the report stage."""

# no `from __future__ import annotations`: typer would compile and evaluate every option's
# annotation string at each start (a cost even `ci-eval --help` pays)

from pathlib import Path
from typing import Annotated

import typer

from ci_eval.cli.common import environment, exit_code, fail, report, stop_on_signals
from ci_eval.cli.help import AGENT, GATE, OTHER, REPORTS, RUNNING, SCORING, SELECTION
from ci_eval.cli.options import (
    AcceptOpt,
    AdkResultsOpt,
    AdkRsReportOpt,
    BaselineBranchOpt,
    BaselineOpt,
    BaselineRefOpt,
    CacheOpt,
    CachePublicKeyOpt,
    CacheSignKeyEnvOpt,
    CacheTtlOpt,
    CheckRunOpt,
    CommentIdOpt,
    CommentOpt,
    ConfirmRunsOpt,
    ControlOpt,
    ControlUrlOpt,
    DialectOpt,
    EvalConfigOpt,
    ExcludeOpt,
    FailOnOpt,
    HistoryUrlOpt,
    IncludeOpt,
    JunitOpt,
    MaxAgeOpt,
    MaxRemovedOpt,
    MinHistoryOpt,
    PathsArg,
    SelectOpt,
    SignificanceOpt,
    SummaryOpt,
    ToleranceOpt,
    TrpcResultsOpt,
    TrustPrConfigOpt,
    WatchOpt,
    WindowOpt,
)
from ci_eval.errors import InputError
from ci_eval.settings import AGENT_KINDS, CONFIG_NAME
from ci_eval.settings.flags import from_flags


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
            rich_help_panel=AGENT,
        ),
    ] = None,
    agent_url: Annotated[
        str | None,
        typer.Option(
            "--agent-url",
            metavar="URL",
            help="adk-http: the api_server's base URL; http: the endpoint that takes one turn.",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    app_name: Annotated[
        str | None,
        typer.Option(
            "--app-name",
            metavar="NAME",
            help="ADK app name (default: each case's session_input.app_name).",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    user_id: Annotated[
        str | None,
        typer.Option(
            "--user-id",
            metavar="ID",
            help="ADK user id (default: session_input.user_id, else test_user_id as ADK).",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    agent_command: Annotated[
        str | None,
        typer.Option(
            "--agent-command",
            metavar="CMD",
            help="command: the program speaking JSON lines.",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    agent_module: Annotated[
        str | None,
        typer.Option(
            "--agent-module",
            metavar="PATH_OR_MODULE",
            help="adk: an agent directory or module with root_agent.",
            show_default=False,
            rich_help_panel=AGENT,
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
            rich_help_panel=AGENT,
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
            rich_help_panel=AGENT,
        ),
    ] = None,
    agent_token_env: Annotated[
        str | None,
        typer.Option(
            "--agent-token-env",
            metavar="VAR",
            help="Send the token in environment variable VAR "
            "as 'Authorization: Bearer …' (never printed).",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            metavar="NAME=VALUE",
            help="An extra HTTP header for the agent (repeatable).",
            show_default=False,
            rich_help_panel=AGENT,
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
            rich_help_panel=AGENT,
        ),
    ] = None,
    agent_user: Annotated[
        str | None,
        typer.Option(
            "--agent-user",
            metavar="USER",
            help="The user a command agent runs as: auto (nobody when ci-eval runs as root, "
            "as in the Docker action, so the agent cannot read the job's secrets), keep "
            "(ci-eval's own user) or a user name or uid. Not a ci-eval.toml setting.",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    otlp: Annotated[
        bool | None,
        typer.Option(
            "--otlp/--no-otlp",
            help="Listen for the agent's OpenTelemetry spans (OTLP/HTTP, protobuf or JSON) "
            "during the run and take a turn's tool calls from them where its reply has none; "
            "each turn is sent W3C trace context (the traceparent header, or the request's "
            "traceparent field for a command agent, which also gets "
            "OTEL_EXPORTER_OTLP_ENDPOINT) [default: no].",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    otlp_port: Annotated[
        int | None,
        typer.Option(
            "--otlp-port",
            metavar="PORT",
            help="The port --otlp listens on (127.0.0.1; a server agent started before the run "
            "exports to it) [default: 0, a free port].",
            show_default=False,
            rich_help_panel=AGENT,
        ),
    ] = None,
    otlp_wait: Annotated[
        float | None,
        typer.Option(
            "--otlp-wait",
            metavar="SECONDS",
            help="How long a turn waits after its reply for the agent's top span of the turn "
            "(--otlp) [default: 2].",
            show_default=False,
            rich_help_panel=AGENT,
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
            rich_help_panel=OTHER,
        ),
    ] = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    eval_config: EvalConfigOpt = None,
    dialect: DialectOpt = None,
    select: SelectOpt = None,
    watch: WatchOpt = None,
    case: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            metavar="SET_ID:CASE_ID",
            help="Run only these cases (repeatable; SET_ID alone for a whole set).",
            show_default=False,
            rich_help_panel=SELECTION,
        ),
    ] = None,
    num_runs: Annotated[
        int | None,
        typer.Option(
            "--num-runs",
            metavar="N",
            help="Run each case N times, each in a fresh session [default: 1].",
            show_default=False,
            rich_help_panel=RUNNING,
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            metavar="N",
            help="Cases run at once [default: 4].",
            show_default=False,
            rich_help_panel=RUNNING,
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            help="Per turn [default: 60].",
            show_default=False,
            rich_help_panel=RUNNING,
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
            rich_help_panel=RUNNING,
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            metavar="FILE",
            help="Write the full results JSON here.",
            show_default=False,
            rich_help_panel=REPORTS,
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
            rich_help_panel=SCORING,
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
            rich_help_panel=SCORING,
        ),
    ] = None,
    judge_url: Annotated[
        str | None,
        typer.Option(
            "--judge-url",
            metavar="URL",
            help="OpenAI-compatible base URL for LLM-judged metrics (…/v1).",
            show_default=False,
            rich_help_panel=SCORING,
        ),
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model",
            metavar="MODEL",
            help="The judge's model name.",
            show_default=False,
            rich_help_panel=SCORING,
        ),
    ] = None,
    judge_key_env: Annotated[
        str | None,
        typer.Option(
            "--judge-key-env",
            metavar="VAR",
            help="Environment variable holding the judge's API key (never printed).",
            show_default=False,
            rich_help_panel=SCORING,
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
            rich_help_panel=SCORING,
        ),
    ] = None,
    simulator_model: Annotated[
        str | None,
        typer.Option(
            "--simulator-model",
            metavar="MODEL",
            help="The simulated user's model [default: the judge's].",
            show_default=False,
            rich_help_panel=SCORING,
        ),
    ] = None,
    simulator_key_env: Annotated[
        str | None,
        typer.Option(
            "--simulator-key-env",
            metavar="VAR",
            help="Environment variable holding the simulator's API key (never printed).",
            show_default=False,
            rich_help_panel=SCORING,
        ),
    ] = None,
    cache: CacheOpt = None,
    cache_ttl: CacheTtlOpt = None,
    cache_sign_key_env: CacheSignKeyEnvOpt = None,
    cache_public_key: CachePublicKeyOpt = None,
    template_dir: Annotated[
        Path | None,
        typer.Option(
            "--template-dir",
            metavar="DIR",
            help="Override ci-eval's Jinja templates (judge "
            "prompts; reports) with files of the same name here.",
            show_default=False,
            rich_help_panel=REPORTS,
        ),
    ] = None,
    junit: JunitOpt = None,
    summary: SummaryOpt = None,
    adk_results: AdkResultsOpt = None,
    adk_rs_report: AdkRsReportOpt = None,
    trpc_results: TrpcResultsOpt = None,
    comment: CommentOpt = None,
    comment_id: CommentIdOpt = None,
    check_run: CheckRunOpt = None,
    history_url: HistoryUrlOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            help="Run only shard I of N (a stable hash of set and case "
            "id), for matrix jobs; join them with `ci-eval merge`.",
            show_default=False,
            rich_help_panel=SELECTION,
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
            rich_help_panel=GATE,
        ),
    ] = None,
    tolerance: ToleranceOpt = None,
    significance: SignificanceOpt = None,
    fail_on: FailOnOpt = None,
    baseline_max_age: MaxAgeOpt = None,
    min_history: MinHistoryOpt = None,
    confirm_runs: ConfirmRunsOpt = None,
    control: ControlOpt = None,
    control_url: ControlUrlOpt = None,
    trust_pr_config: TrustPrConfigOpt = False,
    max_removed: MaxRemovedOpt = None,
    baseline_branch: BaselineBranchOpt = None,
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
    given = from_flags(locals())  # first, while the parameters are all it holds
    from ci_eval import pipeline
    from ci_eval.net import deadline
    from ci_eval.net.deadline import Cancellation
    from ci_eval.settings.build import build

    env = environment()
    try:
        # the bar as the merge base's ci-eval.toml places it, unless the workflow trusts the PR;
        # each flag is the setting the settings table names it for
        settings = build(
            {**given, "paths": paths or None, "trust_pr_config": trust_pr_config or None},
            env,
            config=config,
            trust=trust_pr_config,
        )
        stop = Cancellation(deadline.grace_from(env))
    except InputError as exc:
        fail(exc)
    with stop_on_signals(stop):
        try:
            outcome = pipeline.run(settings, stop, env)
        except InputError as exc:
            fail(exc)
        written = report(outcome.results, settings.report(env), outcome.problems)
    raise typer.Exit(exit_code(outcome.exit_code, written and outcome.results_written))
