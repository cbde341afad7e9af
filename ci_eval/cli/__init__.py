"""The ``ci-eval`` command: thin commands that build the settings and call the pipeline's
stages. ``common`` holds the app and what the commands share, ``options`` the options more than
one command takes; ``run``, ``results`` (report, compare, baseline update, merge), ``files``
(validate, convert, metrics) and ``action`` the commands.

Each command imports what it needs when it runs: ``ci-eval --help`` and ``--version`` load
typer and nothing else of weight.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping

import typer

from ci_eval.cli.action import action
from ci_eval.cli.common import app, say, using_environment
from ci_eval.cli.files import convert, list_metrics, validate
from ci_eval.cli.help import ActionCommand, Group, GroupedCommand
from ci_eval.cli.history import history
from ci_eval.cli.init import init
from ci_eval.cli.plan import plan
from ci_eval.cli.results import baseline_update, compare_command, merge, report_command
from ci_eval.cli.run import run
from ci_eval.errors import EXIT_INPUT, EXIT_OK

__all__ = ["app", "main"]

# the commands, in the order `ci-eval --help` lists them; their options by panel (cli.help)
app.command(cls=GroupedCommand)(init)
app.command(cls=GroupedCommand)(validate)
app.command(cls=GroupedCommand)(convert)
app.command(cls=GroupedCommand)(run)
app.command("report", cls=GroupedCommand)(report_command)
app.command("metrics", cls=GroupedCommand)(list_metrics)
app.command("compare", cls=GroupedCommand)(compare_command)
baseline_app = typer.Typer(
    help="Keep the stored baseline.", no_args_is_help=True, rich_markup_mode=None, cls=Group
)
baseline_app.command("update", cls=GroupedCommand)(baseline_update)
app.add_typer(baseline_app, name="baseline")
app.command(cls=GroupedCommand)(history)
app.command(cls=GroupedCommand)(merge)
app.command(cls=GroupedCommand)(plan)
app.command(cls=ActionCommand)(action)


def _terminate(signum: int, frame: object) -> None:
    # an exception, not the default sudden death: writers remove their temp files on the way out
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Run ``ci-eval ARGV`` (default: the process's arguments) and return its exit code, exactly
    the code the process exits with. ``env`` (default: the process's environment) is the run's
    environment: the commands read their settings, tokens and GitHub's variables from it
    (``common.environment``). Whatever the run changes in the process (redactor, signal
    handlers, metric registry, import path) is put back on return, so runs in one process do not
    leak into each other."""
    if argv is None:
        from ci_eval.io import reaper

        reaper.become_subreaper()  # an agent's orphans are ours to find at exit
    code = _main(argv, env)
    if argv is None:
        from ci_eval.io import reaper

        reaper.kill_adopted()  # nothing an agent started outlives ci-eval
        # the process's own run (the console script, python -m ci_eval), about to exit: what it
        # built is kept out of the collector's sight, or the interpreter's last collection at
        # exit walks all of it, a cost that grows with the run
        gc.freeze()
    return code


def _main(argv: list[str] | None, env: Mapping[str, str] | None) -> int:
    if argv is None:
        # the process's own run: `python -m ci_eval` from the repository put the workspace
        # first on the import path; no module this process imports may come from there
        from ci_eval.worker.workspace import scrub_sys_path

        scrub_sys_path()
    command = _command()
    with _process_state(env), using_environment(env):
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
            say("ci-eval: interrupted", err=True)
            return 130
        except Exception as exc:  # last line of defence: one line, never a traceback
            if os.environ.get("CI_EVAL_DEBUG"):
                raise
            say(
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
    """Process-wide state one run may change, restored when it ends. ``env`` also replaces
    ``os.environ`` for the run: the few readers outside the settings path (git's own
    environment, ``CI_EVAL_*`` tuning variables) see the run's environment too."""
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
    # the redactor is saved only when redact is loaded: `--help` must not import it (with
    # pydantic_core); a run that loads it first leaves a fresh one, as the module starts with
    loaded = sys.modules.get("ci_eval.text.redact")
    redactor = loaded.current() if loaded is not None else None
    path = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = path
        redact = sys.modules.get("ci_eval.text.redact")
        if redact is not None:
            redact.install(redactor if redactor is not None else redact.Redactor())
        gc.set_threshold(*gc_threshold)
        if not frozen:
            gc.unfreeze()  # the run froze what it loaded: collectable again once it is done
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                if handler is not None:
                    signal.signal(sig, handler)
        workers = sys.modules.get("ci_eval.worker.processes")
        if workers is not None:
            workers.close()  # the run's metrics worker is the run's own
        metrics = sys.modules.get("ci_eval.metrics")
        if metrics is not None:
            metrics.reset()  # custom metrics are the run's own
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)
