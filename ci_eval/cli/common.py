"""What every command shares: the ``ci-eval`` app, the environment of this run, how a line is
printed and an input error ends the command, and the signal handling of a run."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ci_eval import __version__
from ci_eval.cli.help import BEFORE_RUN, Group, context_settings
from ci_eval.errors import EXIT_OK, InputError, ValidationFailed

if TYPE_CHECKING:
    from pathlib import Path

    from ci_eval.net.deadline import Cancellation
    from ci_eval.results.file import RunResults
    from ci_eval.settings import ReportSettings

app = typer.Typer(
    name="ci-eval",
    cls=Group,
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
    # plain help (no rich): the options' panels are ci_eval.cli.help's
    rich_markup_mode=None,
    context_settings=context_settings(),
)

# the environment this run reads (``main(argv, env)``; default: the process's)
_ENV: ContextVar[Mapping[str, str] | None] = ContextVar("ci_eval_env", default=None)


def environment() -> Mapping[str, str]:
    env = _ENV.get()
    return os.environ if env is None else env


@contextmanager
def using_environment(env: Mapping[str, str] | None) -> Iterator[None]:
    token = _ENV.set(env)
    try:
        yield
    finally:
        _ENV.reset(token)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ci-eval {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """ci-eval: eval sets in, JUnit, Markdown and a baseline gate out."""
    # built when the command runs: `run --help` and a wrong option need no redactor (whose
    # module loads pydantic-core), and say nothing secret
    ctx.meta.setdefault(BEFORE_RUN, []).append(lambda: install_redactor(environment()))


def install_redactor(env: Mapping[str, str]) -> None:
    """One redactor for the process, built before anything is printed: under GitHub Actions
    each secret is masked in the log (``::add-mask::``) the moment it becomes known."""
    from ci_eval.text import redact

    workflow = None
    if env.get("GITHUB_ACTIONS") == "true":
        from ci_eval.publish.github import Workflow

        workflow = Workflow()
    redact.install(redact.Redactor(on_new=workflow.mask if workflow else None))
    redact.current().add(*redact.env_secrets(env))


def say(line: str, err: bool = False) -> None:
    """Every line ci-eval prints may carry agent or eval-file text: it goes out inert (no
    ANSI or controls, no GitHub/Azure/TeamCity command prefixes). ci-eval's own workflow
    commands go through ``github.Workflow`` instead."""
    from ci_eval.text import redact
    from ci_eval.text.inert import inert
    from ci_eval.text.surrogates import scrub

    # lone surrogates → U+FFFD first; no secret reaches the terminal
    typer.echo(inert(redact.text(scrub(line))), err=err)


def fail(error: InputError, *, each_problem: bool = True, to_log: bool = False) -> NoReturn:
    """End the command with exit 2 (3 for an agent that did not answer,
    :class:`ci_eval.errors.Unreachable`): each problem of a file on its own line (on standard
    output with ``to_log``: the action's log), else one line."""
    if isinstance(error, ValidationFailed) and each_problem:
        for problem in error.problems:
            say(str(problem), err=not to_log)
    else:
        say(f"ci-eval: {error}", err=True)
    raise typer.Exit(error.exit_code)


def report(
    results: RunResults,
    settings: ReportSettings,
    notices: list[str] = (),
    source: Path | None = None,
) -> bool:
    """The run's notices, then the report stage (terminal summary, files, GitHub). Results
    read from ``source`` name it in an error found while reporting (an invocation there is
    checked when a report first reads it). False when a report file the user asked for could
    not be written."""
    from ci_eval.publish import report as report_stage

    env = environment()
    for notice in notices:
        say(f"ci-eval: {notice}", err=True)
    try:
        return report_stage(results, settings, env, say)
    except InputError as exc:
        if exc.path is None and source is not None:
            exc.path = str(source)
        fail(exc)


class stop_on_signals:
    """First SIGINT/SIGTERM: no new turn starts; running turns get a grace period, then end as
    cancelled, and the reports are written. Second: stop waiting at once and write them.
    Installed for the run and its reporting, so no signal can lose the reports."""

    def __init__(self, stop: Cancellation) -> None:
        from ci_eval.net import deadline

        self.stop = stop
        self.previous: dict[int, object] = {}
        self._installed = deadline.installed(stop)

    def _handle(self, signum: int, frame: object) -> None:
        if self.stop.abandoned.is_set():
            return
        if self.stop.is_set():
            say("ci-eval: stopping now: cancelling running turns, writing the reports", err=True)
            self.stop.abandon()
            return
        self.stop.set()
        say(
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


def exit_code(gate_code: int, reports_written: bool) -> int:
    """The gate's exit code; 3 when a report file the user asked for is missing (said above):
    a run whose reports are not all there is not a clean pass."""
    from ci_eval.errors import EXIT_INFRA

    return gate_code if reports_written else max(gate_code, EXIT_INFRA)
