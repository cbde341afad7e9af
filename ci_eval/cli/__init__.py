"""The ``ci-eval`` command: thin commands that build the settings and call the pipeline's
stages. ``common`` holds the app and what the commands share, ``options`` the options more than
one command takes; one module per group of commands.

Each command imports what it needs when it runs: ``ci-eval --help`` and ``--version`` load
typer and nothing else of weight.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Mapping

import typer

from ci_eval.cli.action import action
from ci_eval.cli.common import app, say, using_environment
from ci_eval.cli.files import convert, list_metrics, validate
from ci_eval.cli.results import baseline_update, compare_command, merge, report_command
from ci_eval.cli.run import run
from ci_eval.gate import EXIT_INPUT

__all__ = ["app", "main"]

# the commands, in the order `ci-eval --help` lists them
app.command()(validate)
app.command()(convert)
app.command()(run)
app.command("report")(report_command)
app.command("metrics")(list_metrics)
app.command("compare")(compare_command)
baseline_app = typer.Typer(
    help="Keep the stored baseline.", no_args_is_help=True, rich_markup_mode=None
)
baseline_app.command("update")(baseline_update)
app.add_typer(baseline_app, name="baseline")
app.command()(merge)
app.command()(action)


def _terminate(signum: int, frame: object) -> None:
    # an exception, not the default sudden death: writers remove their temp files on the way out
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    # collect young garbage less often: big runs allocate millions of long-lived objects
    gc.set_threshold(50_000, 20, 100)
    for name in ("SIGTERM", "SIGHUP"):  # no SIGHUP on Windows
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _terminate)
    with using_environment(env):
        try:
            app(args=argv)
        except KeyboardInterrupt:
            say("ci-eval: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # last line of defence: one line, never a traceback
            if os.environ.get("CI_EVAL_DEBUG"):
                raise
            say(
                f"ci-eval: internal error: {type(exc).__name__}: {exc} "
                "(set CI_EVAL_DEBUG=1 for a traceback, and please report it)",
                err=True,
            )
            sys.exit(EXIT_INPUT)
    return 0
