"""How ``--help`` reads in a plain terminal: a command's options in panels (typer's
``rich_help_panel``, which typer itself shows only through rich), and ``ci-eval action --help``
listing the action's inputs and the environment it reads.

Loaded by every start (``--help`` included): it imports typer only, and the settings' table
when ``action --help`` lists the inputs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # typer's own click (vendored in recent typer): for the annotations only
    from typer import _click as click

# the panels of the options, in the order help shows them
AGENT = "Agent"
SELECTION = "Selection"
RUNNING = "Running"
SCORING = "Scoring"
GATE = "Gate & baseline"
REPORTS = "Reports"
GITHUB = "GitHub"
OTHER = "Other"  # options without a panel, --help among them
PANELS = (AGENT, SELECTION, RUNNING, SCORING, GATE, REPORTS, GITHUB, OTHER)
HELP_OPTION_NAMES = ["-h", "--help"]
# what the root's callback leaves for the command to do once its arguments parsed (click's
# shared ``ctx.meta``): help and a usage error end at parsing and need none of it
BEFORE_RUN = "ci_eval.before_run"


class GroupedCommand(TyperCommand):
    """A command whose options are listed by panel, without rich. A command whose options name
    no panel lists them under "Options" as click does."""

    def invoke(self, ctx: click.Context) -> Any:
        for before in ctx.meta.get(BEFORE_RUN, ()):
            before()
        return super().invoke(ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        arguments: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
            else:
                panel = getattr(param, "rich_help_panel", None) or OTHER
                panels.setdefault(panel, []).append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if set(panels) == {OTHER}:
            with formatter.section("Options"):
                formatter.write_dl(panels[OTHER])
            return
        order = {name: i for i, name in enumerate(PANELS)}
        for name in sorted(panels, key=lambda n: order.get(n, len(PANELS) - 1)):
            with formatter.section(name):
                formatter.write_dl(panels[name])


class Group(TyperGroup):
    """A command group whose ``--help``, when not given, is False: typer (0.29) coerces an
    option's None through a pydantic adapter, so `ci-eval run --help` would load pydantic for
    the group's own unused help flag."""

    def get_help_option(self, ctx: click.Context) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option


class ActionCommand(GroupedCommand):
    """``ci-eval action``: its help lists the action's inputs by panel (each with the ``run``
    option it stands for, whose help it shows) and the environment variables it reads."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_paragraph()
        formatter.write_text(
            "Inputs arrive as INPUT_<NAME> (the runner sets them from the step's `with:`); "
            "each is the `run` option named in brackets."
        )
        for panel, rows in action_inputs(_run_command(ctx)).items():
            with formatter.section(f"Inputs: {panel}"):
                formatter.write_dl(rows)
        with formatter.section("Environment"):
            formatter.write_dl(ENVIRONMENT)
        super().format_epilog(ctx, formatter)


def _run_command(ctx: click.Context) -> click.Command | None:
    root = ctx.find_root()
    get_command = getattr(root.command, "get_command", None)  # None: `action` run on its own
    return get_command(root, "run") if get_command is not None else None


# what an input's text is, by the setting's kind (ci_eval.settings.inputs reads it so)
_KIND_NOTE = {
    "list": "one per line or comma-separated",
    "lines": "one per line",
    "bool": "true or false",
    "command": "a command line, or one argument per line",
}
# the inputs that are no run setting (ci_eval.settings.ACTION_ONLY)
_ACTION_ONLY_HELP = {
    "config": "Settings file [default: ci-eval.toml in the working directory or the nearest "
    "parent up to the repository root].",
    "job-summary": "Write the Markdown summary to the job summary; true or false [default: true].",
    "github-token": "The token for the PR comment [default: $GITHUB_TOKEN].",
    "working-directory": "Where to run, relative to $GITHUB_WORKSPACE [default: the workspace].",
}


def action_inputs(run: click.Command | None) -> dict[str, list[tuple[str, str]]]:
    """The action's inputs by panel: each input's name and what it is, from the help of the
    ``run`` option it stands for (``paths`` is run's argument), in that option's panel."""
    from ci_eval.settings import ACTION_DEFAULTS, ACTION_ONLY, SETTINGS

    params = {}
    for param in run.params if run is not None else []:
        for name in (*param.opts, param.name or ""):
            params[name] = param
    panels: dict[str, list[tuple[str, str]]] = {name: [] for name in PANELS}
    for setting in SETTINGS:
        if setting.input is None:
            continue
        param = params.get(setting.flag or setting.key)
        text = _brief(getattr(param, "help", None) or "")
        panel = getattr(param, "rich_help_panel", None) or (SELECTION if param else OTHER)
        notes = _input_notes(setting, ACTION_DEFAULTS)
        panels[panel].append((setting.input, f"{text} [{'; '.join(notes)}]".strip()))
    panels[OTHER] += [(name, _ACTION_ONLY_HELP.get(name, "")) for name in ACTION_ONLY]
    return {name: rows for name, rows in panels.items() if rows}


def _input_notes(setting: Any, defaults: Mapping[str, Any]) -> list[str]:
    """An input's notes: the flag it stands for, what its text is, the action's default."""
    notes = [setting.flag] if setting.flag else []
    if setting.kind in _KIND_NOTE:
        notes.append(_KIND_NOTE[setting.kind])
    if setting.key in defaults:
        default = defaults[setting.key]
        notes.append(f"action default: {'true' if default is True else default}")
    return notes


def _brief(text: str) -> str:
    """An option's help for an input: its first sentence, and its default when that comes
    later."""
    first, *rest = re.split(r"(?<=\.) (?=[A-Z])", text, maxsplit=1)
    later = rest[0] if rest else ""
    default = later[later.find("[default:") :].split("]")[0] + "]" if "[default:" in later else ""
    return " ".join(p for p in (first, default) if p)


ENVIRONMENT = [
    (
        "INPUT_<NAME>",
        "The inputs above, hyphens kept (INPUT_NUM-RUNS), as the runner sets a Docker action's; "
        "with CI_EVAL_ACTION=setup (the composite action) only INPUT_NUM_RUNS. Empty is unset.",
    ),
    ("GITHUB_WORKSPACE", "The checkout; the run starts there (or in working-directory)."),
    ("GITHUB_TOKEN", "The PR comment's token when github-token is empty."),
    ("GITHUB_ACTIONS", "'true': annotations, secret masking and the job summary."),
    (
        "GITHUB_EVENT_PATH, GITHUB_REF, GITHUB_BASE_REF",
        "The pull request and its base branch: the baseline and the bar at the merge base.",
    ),
    (
        "GITHUB_REPOSITORY, GITHUB_API_URL",
        "Where the PR comment goes.",
    ),
    (
        "GITHUB_SERVER_URL, GITHUB_RUN_ID, GITHUB_SHA",
        "Links to the run; the commit a baseline records.",
    ),
    ("GITHUB_WORKFLOW, GITHUB_JOB", "The PR comment's default id (workflow/job)."),
    ("GITHUB_STEP_SUMMARY, GITHUB_OUTPUT", "The job summary and the step's outputs."),
    (
        "GITHUB_ENV, GITHUB_PATH, GITHUB_STATE",
        "Never read, never passed to an agent or worker (nor GITHUB_OUTPUT, GITHUB_STEP_SUMMARY).",
    ),
    (
        "GH_TOKEN, GITHUB_ENTERPRISE_TOKEN, ACTIONS_*, RUNNER_*",
        "The job's credentials: withheld from agents and workers, never an API key.",
    ),
    (
        "the variables --judge-key-env, --simulator-key-env, --agent-token-env name",
        "Their keys, read by ci-eval alone: withheld from agents and workers.",
    ),
    ("PATH", "Where an agent's program is found."),
    ("NETRC, HOME", "Whether requests would send a .netrc's credentials (ci-eval says so)."),
    ("CI_EVAL_ACTION", "'setup': the composite action (its inputs' spelling; what to install)."),
    ("CI_EVAL_IMAGE", "The Docker image's variant ('slim', 'adk'): what to use instead."),
    ("CI_EVAL_JUDGE_PROMPTS", "'ci-eval': ci-eval's own simulator prompts even with google-adk."),
    ("CI_EVAL_CANCEL_GRACE", "Seconds running turns get after a cancel [default: 3]."),
    ("CI_EVAL_MAX_FILE_MB", "Size limit of a JSON file read [default: 50]."),
    ("CI_EVAL_RUNS_IN_MEMORY", "Case runs kept in memory before spilling [default: 25000]."),
    ("CI_EVAL_DEBUG", "Set: a traceback instead of the one-line internal error."),
]


def context_settings() -> dict[str, Any]:
    """The app's context settings, which its commands inherit: ``-h`` as ``--help``."""
    return {"help_option_names": HELP_OPTION_NAMES}
