"""``ci-eval action``: the GitHub Action's entrypoint, on the same path as ``ci-eval run``."""

# no `from __future__ import annotations`: typer would compile and evaluate every option's
# annotation string at each start (a cost even `ci-eval --help` pays)

import typer

from ci_eval.cli.common import environment, exit_code, fail, report, stop_on_signals
from ci_eval.errors import InputError, ValidationFailed


def action() -> None:
    """Run as the GitHub Action: the inputs come from INPUT_*.

    The GitHub Action's entrypoint: reads the inputs and the job's environment (listed below),
    runs the pipeline in $GITHUB_WORKSPACE and reports (JUnit, job summary, outputs,
    annotations, PR comment). Exit codes as for `run`.
    """
    from ci_eval.cli.action_entry import run_action
    from ci_eval.net import deadline
    from ci_eval.net.deadline import Cancellation
    from ci_eval.publish.github import Workflow

    env = environment()
    try:
        stop = Cancellation(deadline.grace_from(env))
    except InputError as exc:
        Workflow().command("error", str(exc), title="ci-eval")
        fail(exc)
    with stop_on_signals(stop):
        try:
            outcome, report_settings = run_action(env, stop)
        except ValidationFailed as exc:
            fail(exc, to_log=True)  # each problem to the log, where the action's user looks
        except InputError as exc:
            Workflow().command("error", str(exc), title="ci-eval")
            fail(exc)
        written = report(outcome.results, report_settings, outcome.problems)
    raise typer.Exit(exit_code(outcome.exit_code, written and outcome.results_written))
