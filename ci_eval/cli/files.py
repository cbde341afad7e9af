"""Commands over eval files and the metric registry: ``validate``, ``convert``, ``metrics``."""

# no `from __future__ import annotations`: typer would compile and evaluate every option's
# annotation string at each start (a cost even `ci-eval --help` pays)

import sys
from pathlib import Path
from typing import Annotated

import typer

from ci_eval.cli.common import fail, say
from ci_eval.cli.options import EvalConfigOpt, ExcludeOpt, IncludeOpt, PathsArg
from ci_eval.errors import EXIT_INPUT, EXIT_OK, InputError


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
    """Check eval sets and their sidecars without running anything.

    Reads the eval sets and their metric sidecars as `run` would. Prints one line per file:
    path, dialect, cases, invocations and the metrics that apply (with the config file they
    come from). Each problem is one line 'path:line:col: json.path: message'. JSON that is not
    an eval set is counted (listed with -v). Exits 0 when every eval set is valid, 2 otherwise.

    Example: ci-eval validate tests/eval -v
    """
    from ci_eval.cli.validate import validate as validate_stage

    try:
        checked = validate_stage(list(paths or []), include, exclude, eval_config, verbose)
    except InputError as exc:
        fail(exc)
    for line in checked.lines:
        say(line)
    for line in checked.notes:
        say(line, err=True)
    raise typer.Exit(EXIT_OK if checked.valid else EXIT_INPUT)


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
    from ci_eval.load.convert import convert as convert_stage

    try:
        text, warnings = convert_stage(file, to)
    except InputError as exc:
        fail(exc, each_problem=False)
    for warning in warnings:
        say(f"ci-eval: convert to {to}: {warning}", err=True)
    if output is None:
        from ci_eval.text import redact

        sys.stdout.write(redact.text(text))
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))


def list_metrics() -> None:
    """List the metrics ci-eval computes.

    For each: its name, whose numbers it reproduces, value range, default threshold, whether
    it needs an LLM judge, and what it measures.

    Example: ci-eval metrics
    """
    from ci_eval.metrics.registry import REGISTRY, display_name

    for key, m in REGISTRY.items():
        flags = [m.origin, m.value_range]
        if m.default_threshold is not None:
            flags.append(f"default threshold {m.default_threshold:g}")
        if m.needs_llm:
            flags.append("needs an LLM judge")
        if m.informational:
            flags.append("informational")
        say(f"{display_name(key)}  [{'; '.join(flags)}]")
        say(f"    {m.description}")
