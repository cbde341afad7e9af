"""Options more than one command takes, declared once."""

# no `from __future__ import annotations`: typer would compile and evaluate every option's
# annotation string at each start (a cost even `ci-eval --help` pays)

from pathlib import Path
from typing import Annotated

import typer

from ci_eval.cli.help import GATE, GITHUB, REPORTS, SCORING, SELECTION
from ci_eval.load.patterns import DEFAULT_INCLUDE
from ci_eval.settings.model import default

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
        rich_help_panel=SELECTION,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Skip files matching GLOB (repeatable).",
        show_default=False,
        rich_help_panel=SELECTION,
    ),
]


JunitOpt = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        metavar="FILE",
        help="Write JUnit XML here.",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]
SummaryOpt = Annotated[
    Path | None,
    typer.Option(
        "--summary",
        metavar="FILE",
        help="Write the Markdown summary here (on GitHub Actions it also goes to the job summary).",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]
AdkResultsOpt = Annotated[
    Path | None,
    typer.Option(
        "--adk-results",
        metavar="DIR",
        help="Write one ADK .evalset_result.json per eval set here.",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]
AdkRsReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--adk-rs-report",
        metavar="DIR",
        help="Write one adk-rs EvalReport JSON per eval set here (as adk-rs's eval prints it).",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]
TrpcResultsOpt = Annotated[
    Path | None,
    typer.Option(
        "--trpc-results",
        metavar="DIR",
        help="Write trpc-agent-go's result file (EvalSetResult, with its summary) per "
        "trpc-agent-go eval set here, as trpc's evaluation writes them.",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]
CommentOpt = Annotated[
    bool | None,
    typer.Option(
        "--comment/--no-comment",
        help="Upsert the PR comment (GitHub; needs a token with "
        "pull-requests: write) [default: no].",
        show_default=False,
        rich_help_panel=GITHUB,
    ),
]
CommentIdOpt = Annotated[
    str | None,
    typer.Option(
        "--comment-id",
        metavar="ID",
        help="Tell this job's comment apart, e.g. per matrix leg [default: workflow/job].",
        show_default=False,
        rich_help_panel=GITHUB,
    ),
]
CheckRunOpt = Annotated[
    bool | None,
    typer.Option(
        "--check-run/--no-check-run",
        help="Post a check run of its own: the verdict as title, the summary, each listed case "
        "annotated at its line; in the comment's place unless --comment (GitHub; needs "
        "checks: write, else the comment and annotations) [default: no].",
        show_default=False,
        rich_help_panel=GITHUB,
    ),
]
HistoryUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--history-url",
        metavar="URL",
        help="Where the `ci-eval history` site is published: the PR comment links the cases "
        "it names to their pages.",
        show_default=False,
        rich_help_panel=GITHUB,
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
        rich_help_panel=GATE,
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
        rich_help_panel=GATE,
    ),
]
ToleranceOpt = Annotated[
    float | None,
    typer.Option(
        "--tolerance",
        metavar="X",
        help="A metric's mean may drop by this much before it counts as a regression "
        f"[default: {default('tolerance'):g}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
SignificanceOpt = Annotated[
    float | None,
    typer.Option(
        "--significance",
        metavar="P",
        help="With repeated runs on both sides, a drop must be "
        "significant at this level "
        f"[default: {default('significance'):g}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
FailOnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        metavar="failure,regression,error,not-evaluated,usage,judging-changed",
        help="What fails the gate [default: regression,error,not-evaluated with a baseline; "
        "failure,error,not-evaluated without]; usage: a case's tokens or latency risen beyond "
        "its history; judging-changed: a change to how cases are judged (a metric's options, "
        "a threshold, an expected conversation) that no [[accept]] entry accepts. A run where "
        "nothing was evaluated always fails.",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
MinHistoryOpt = Annotated[
    int | None,
    typer.Option(
        "--min-history",
        metavar="N",
        help="Runs on main a case needs before its history judges it; with fewer, a case "
        "blocks only when it fails every run, reruns included, where main never failed it "
        f"[default: {default('min_history')}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
ConfirmRunsOpt = Annotated[
    int | None,
    typer.Option(
        "--confirm-runs",
        metavar="K",
        help="Confirmation reruns a failing case may get, one at a time, before the gate "
        "decides: a case that fails every run where main did not (or that is new) is run "
        "again until it passes or has failed 5 runs; 0 turns them off "
        f"[default: {default('confirm_runs')}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
ControlOpt = Annotated[
    str | None,
    typer.Option(
        "--control",
        metavar="REF",
        help="A same-day control: also run the agent as it is at the merge base with REF "
        "('base': the pull request's base branch) on the same cases in this job, and judge "
        "the difference — a provider's bad day moves both. Doubles the agent runs. 'auto': "
        "only when a broad drop alone fails the gate, on up to 40 cases × 5 runs. Command "
        "and replay agents run from a git worktree; http agents need --control-url.",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
BaselineBranchOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline-branch",
        metavar="BRANCH",
        help="Read main's history from this data branch through git (fetched from origin; "
        "its file is --baseline, at the branch's root, default baseline.json): never a folder "
        "a pull request could write.",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
MaxRemovedOpt = Annotated[
    int | None,
    typer.Option(
        "--max-removed",
        metavar="N",
        help="Cases of main's history a run may no longer find before the gate fails, unless "
        "an [[accept]] entry accepts their removal "
        f"[default: {default('max_removed')}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
TrustPrConfigOpt = Annotated[
    bool,
    typer.Option(
        "--trust-pr-config",
        help="In a pull request, apply its ci-eval.toml's gate settings (baseline, fail_on, "
        "significance, which cases run, templates, the judge's endpoint...) instead of the "
        "merge base's, and run custom metric code it added or changed. Only for repositories "
        "that trust every pull request's config.",
        rich_help_panel=GATE,
    ),
]
ControlUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--control-url",
        metavar="URL",
        help="Where the control's agent (the merge base's) is served, for http and adk-http.",
        show_default=False,
        rich_help_panel=GATE,
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
        rich_help_panel=GATE,
    ),
]
WindowOpt = Annotated[
    int | None,
    typer.Option(
        "--window",
        metavar="N",
        help="Runs of history the baseline keeps per case and metric "
        f"[default: {default('baseline_window')}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]
MaxAgeOpt = Annotated[
    float | None,
    typer.Option(
        "--baseline-max-age",
        metavar="DAYS",
        help=f"Warn when the baseline is older [default: {default('baseline_max_age'):g}].",
        show_default=False,
        rich_help_panel=GATE,
    ),
]


SelectOpt = Annotated[
    str | None,
    typer.Option(
        "--select",
        metavar="all|changed",
        help="changed: in a pull request, re-run only the cases whose eval set or config "
        "changed since the merge base, and new ones; the rest carry main's latest result, "
        "said as not re-run. Everything runs when the agent's inputs (--watch) changed "
        "[default: all].",
        show_default=False,
        rich_help_panel=SELECTION,
    ),
]
WatchOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--watch",
        metavar="GLOB",
        help="What the agent reads, for --select changed (repeatable; from ci-eval.toml's "
        "folder) [default: every file but eval files and their sidecars, README*, "
        "CHANGELOG*, LICENSE*, docs/ and .ci-eval/].",
        show_default=False,
        rich_help_panel=SELECTION,
    ),
]
CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        metavar="DIR",
        help="Keep the judge's and the user simulator's answers in DIR, keyed by endpoint, "
        "model, prompt, sampling parameters, run and sample: an identical job asks them "
        "nothing (the agent is never cached; --update-baseline asks afresh).",
        show_default=False,
        rich_help_panel=SCORING,
    ),
]
CacheTtlOpt = Annotated[
    str | None,
    typer.Option(
        "--cache-ttl",
        metavar="DURATION",
        help="How long a cached answer is used: seconds, or 90m, 12h, 7d, 2w [default: 7d].",
        show_default=False,
        rich_help_panel=SCORING,
    ),
]
CacheSignKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--cache-sign-key-env",
        metavar="VAR",
        help="Environment variable holding main's Ed25519 private key (PEM or base64; a secret "
        "of an environment limited to main): the cache entries this job writes are signed, "
        "so pull requests can trust them (never printed, never an agent's).",
        show_default=False,
        rich_help_panel=SCORING,
    ),
]
CachePublicKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--cache-public-key",
        metavar="FILE_OR_KEY",
        help="The Ed25519 public key (a file, PEM or base64) whose signed cache entries are "
        "trusted; without it the cache is used within the job only.",
        show_default=False,
        rich_help_panel=SCORING,
    ),
]
DialectOpt = Annotated[
    str | None,
    typer.Option(
        "--dialect",
        metavar="adk-rs",
        help="Read eval sets in ADK's shape as adk-rs's and score them as adk-rs does (its "
        "metrics; a metric fails when any turn does). adk-rs's current files look like ADK's "
        "[default: each file's dialect as its content says].",
        show_default=False,
        rich_help_panel=SELECTION,
    ),
]
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
        rich_help_panel=SCORING,
    ),
]


TemplateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--template-dir",
        metavar="DIR",
        help="Your own summary.md.j2 / comment.md.j2.",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]
ResultsArg = Annotated[
    Path,
    typer.Argument(
        metavar="RESULTS",
        help="A results file from `ci-eval run --results`.",
        show_default=False,
    ),
]
