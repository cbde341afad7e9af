"""Commands over saved results: ``report``, ``compare``, ``baseline update`` and ``merge``."""

# no `from __future__ import annotations`: typer would compile and evaluate every option's
# annotation string at each start (a cost even `ci-eval --help` pays)

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ci_eval.cli.common import environment, exit_code, fail, report, say
from ci_eval.cli.options import (
    AcceptOpt,
    AdkResultsOpt,
    AdkRsReportOpt,
    BaselineOpt,
    BaselineRefOpt,
    CheckRunOpt,
    CommentIdOpt,
    CommentOpt,
    FailOnOpt,
    HistoryUrlOpt,
    JunitOpt,
    MaxAgeOpt,
    MinHistoryOpt,
    ResultsArg,
    SignificanceOpt,
    SummaryOpt,
    TemplateDirOpt,
    ToleranceOpt,
    WindowOpt,
)
from ci_eval.errors import InputError
from ci_eval.settings.flags import from_flags

if TYPE_CHECKING:
    from ci_eval.settings import RunSettings

OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--output",
        metavar="FILE",
        help="Write the results with the comparison here.",
        show_default=False,
    ),
]


def _settings(given: Mapping[str, object], env: Mapping[str, str]) -> "RunSettings":
    """The command's flags over ci-eval.toml, the bar as the merge base places it: the one
    path `run` builds its settings by (:func:`ci_eval.settings.build.build`)."""
    from ci_eval.settings.build import build

    try:
        return build(given, env)  # type: ignore[arg-type]
    except InputError as exc:
        fail(exc)


def report_command(
    results_file: ResultsArg,
    junit: JunitOpt = None,
    summary: SummaryOpt = None,
    adk_results: AdkResultsOpt = None,
    adk_rs_report: AdkRsReportOpt = None,
    comment: CommentOpt = None,
    comment_id: CommentIdOpt = None,
    check_run: CheckRunOpt = None,
    history_url: HistoryUrlOpt = None,
    template_dir: TemplateDirOpt = None,
) -> None:
    """Render the reports of saved results without running again.

    Prints the summary, writes the files asked for and, on GitHub Actions, the job summary,
    outputs and annotations; --comment upserts the PR comment. Exits like the run did: 0
    passed, 1 a case failed, 3 errors kept cases from being scored; 2 for a bad file.

    Example: ci-eval report results.json --junit junit.xml --summary summary.md --comment
    """
    given = from_flags(locals())  # first, while the parameters are all it holds
    import gc

    from ci_eval import preflight
    from ci_eval.gate.decision import gate
    from ci_eval.results.file import read_results
    from ci_eval.results.spill import PastLimit

    settings = _settings({**given, "results": results_file}, environment())
    try:
        preflight.output_file(junit, "--junit")
        preflight.output_file(summary, "--summary")
        preflight.output_dir(adk_results, "--adk-results")
        preflight.output_dir(adk_rs_report, "--adk-rs-report")
        # a file of many cases: their runs in a temporary file until the reports read them
        results = read_results(results_file, keep=PastLimit(environment()))
    except InputError as exc:
        fail(exc)
    gc.freeze()  # as in `run`: what was read lives to the end
    written = report(results, settings.report(environment()), source=results_file)
    raise typer.Exit(exit_code(gate(results), written))


def compare_command(
    results_file: ResultsArg,
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
    check_run: CheckRunOpt = None,
    history_url: HistoryUrlOpt = None,
    output: OutputOpt = None,
) -> None:
    """Gate saved results on the baseline's history.

    Compares them with main's recent runs and fails on regressions.
    Each case is judged against its own recent runs on main: how likely are this run's
    failures given how often the case failed there (beta-binomial, Jeffreys prior), with
    Benjamini-Hochberg across cases and a suite-wide test for a broad drop. Cases with less
    than --min-history runs on main use the simple rule, and the output says so. Exits 1 when
    the gate fails (per --fail-on), 0 when not, 2 on bad input.

    Example: ci-eval compare results.json --baseline .ci-eval/baseline.json
    """
    given = from_flags(locals())  # first, while the parameters are all it holds
    from ci_eval import preflight
    from ci_eval.gate import main_history
    from ci_eval.gate.decision import gate
    from ci_eval.results.file import read_results, write_results
    from ci_eval.results.spill import PastLimit
    from ci_eval.settings import check_gate

    env = environment()
    settings = _settings({**given, "results": output or results_file}, env)
    notices: list[str] = []
    try:
        gate_settings = check_gate(settings)
        preflight.output_file(output, "-o")
        preflight.output_file(junit, "--junit")
        preflight.output_file(summary, "--summary")
        results = read_results(results_file, keep=PastLimit(env))
        notices = main_history.apply_baseline(results, settings, env, gate_settings)
        if results.comparison is not None:
            notices.append(
                "compare calls no agent: no confirmation reruns here; failing cases are judged "
                "on the runs the results file holds"
            )
        if output:
            from ci_eval.gate.set_lines import pass_rates

            results.pass_rates = pass_rates(results)
            write_results(output, results)
    except InputError as exc:
        fail(exc)
    except OSError as exc:
        fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))
    written = report(results, settings.report(env), notices, source=results_file)
    raise typer.Exit(exit_code(gate(results), written))


def baseline_update(
    results_file: ResultsArg,
    baseline: BaselineOpt = None,
    window: WindowOpt = None,
) -> None:
    """Append saved results to the baseline's history.

    It keeps the last --window runs per case.
    Cases the results did not measure (errors, skipped, not started, another shard) keep their
    history: an interrupted run never shrinks the baseline. Run it on main after each run (the
    README shows a workflow that keeps the history on a data branch, without hand commits).

    Example: ci-eval baseline update results.json
    """
    from ci_eval import preflight
    from ci_eval.gate import main_history
    from ci_eval.results.file import read_results
    from ci_eval.settings import check_gate

    # ci-eval.toml's [baseline] window and the baseline beside it, as `run` reads them
    settings = _settings(from_flags(locals()), environment())
    try:
        check_gate(settings)  # the window, as every command checks it
        preflight.output_file(settings.baseline_file(), "--baseline")
        results = read_results(results_file)
        line = main_history.update_baseline(results, settings)
    except InputError as exc:
        fail(exc)
    say(line)


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
    """Join the results of shards into one results file.

    Shards are matrix jobs run with --shard I/N.
    `report` and `compare` then work on it as on a single run.

    Example: ci-eval merge shard-*/results.json -o results.json
    """
    from ci_eval import preflight
    from ci_eval.gate.set_lines import pass_rates
    from ci_eval.results.file import write_results
    from ci_eval.results.merge import merge as merge_results
    from ci_eval.results.spill import PastLimit
    from ci_eval.text.plural import plural

    try:
        preflight.output_file(output, "-o")
        merged = merge_results(list(files), keep=PastLimit(environment()))
        merged.pass_rates = pass_rates(merged)
        write_results(output, merged)
    except InputError as exc:
        fail(exc)
    except OSError as exc:
        fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))
    say(
        f"merged {plural(len(files), 'results file')}: "
        f"{plural(len(merged.cases()), 'case')} in {output}"
    )
