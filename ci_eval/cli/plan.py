"""``ci-eval plan``: the runs a pull request needs to catch a drop, from main's history."""

# no `from __future__ import annotations`: typer evaluates the options' annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ci_eval.cli.common import environment, fail, say
from ci_eval.cli.options import (
    BaselineBranchOpt,
    BaselineOpt,
    BaselineRefOpt,
    MinHistoryOpt,
    SignificanceOpt,
)
from ci_eval.errors import InputError
from ci_eval.settings.flags import from_flags

if TYPE_CHECKING:
    from ci_eval.gate.power import Target

DetectOpt = Annotated[
    str,
    typer.Option(
        "--detect",
        metavar="FROM:TO",
        help="The drop to catch: a case passing at least FROM of its runs on main falling to TO.",
    ),
]
PowerOpt = Annotated[
    float,
    typer.Option(
        "--power",
        metavar="P",
        help="The chance of catching it wanted (on average over the cases that pass FROM).",
    ),
]
MaxRunsOpt = Annotated[
    int, typer.Option("--max-runs", metavar="N", help="The most runs a case to try.")
]


def _target(detect: str, power: float) -> "Target":
    from ci_eval.gate.power import Target

    start, sep, end = detect.partition(":")
    try:
        low, high = float(start), float(end)
    except ValueError:
        low = high = -1.0
    if not sep or not 0 < high < low <= 1:
        raise InputError(
            f"--detect {detect!r}: expected FROM:TO, two pass rates with 0 < TO < FROM ≤ 1 "
            "(e.g. 0.95:0.6)"
        )
    if not 0 < power < 1:
        raise InputError(f"--power {power:g}: expected a probability between 0 and 1 (e.g. 0.9)")
    return Target(low, high, power)


def plan(
    detect: DetectOpt = "0.95:0.6",
    power: PowerOpt = 0.9,
    max_runs: MaxRunsOpt = 10,
    baseline: BaselineOpt = None,
    baseline_ref: BaselineRefOpt = None,
    baseline_branch: BaselineBranchOpt = None,
    significance: SignificanceOpt = None,
    min_history: MinHistoryOpt = None,
) -> None:
    """Say the runs a PR needs to catch a drop.

    For each number of runs a case (with the confirmation reruns that lead up to five), the
    gate's own model says how likely a pull request is to name a case that fell from FROM to
    TO, and the drop of every case the suite-wide test catches; then the cheapest setting
    that reaches --power, and its cost in agent runs per pull request. Exits 0, or 2 when
    there is no history to plan from.

    Example: ci-eval plan --detect 0.95:0.6 --power 0.9 --baseline-branch ci-eval-data
    """
    given = {
        k: v for k, v in from_flags(locals()).items() if k not in ("detect", "power", "max_runs")
    }
    from ci_eval.gate import main_history
    from ci_eval.gate import plan as planner
    from ci_eval.settings import check_gate
    from ci_eval.settings.build import build

    env = environment()
    try:
        settings = build(given, env)  # type: ignore[arg-type]
        target = _target(detect, power)
        if not 1 <= max_runs <= 20:
            raise InputError(f"--max-runs {max_runs}: expected 1 to 20")
        gate_settings = check_gate(settings)
        loaded = main_history.load_baseline(settings, env)
    except InputError as exc:
        fail(exc)
    for notice in loaded.notices:
        say(notice, err=True)
    data = loaded.data
    if data is None and loaded.unread:  # the data branch's fetch failed: there may be one
        fail(InputError(f"no history to plan from at {loaded.where}: {loaded.unread}"))
    if data is None or not data.pushes:
        fail(
            InputError(
                f"no history to plan from at {loaded.where or 'the baseline'}: record main's "
                "pushes with `ci-eval baseline update RESULTS` first"
            )
        )
    found = planner.options(data, gate_settings, target, max_runs)  # type: ignore[arg-type]
    for line in planner.lines(data, loaded.where, found, target):  # type: ignore[arg-type]
        say(line)
