"""``ci-eval history``: main's history as a static site (:mod:`ci_eval.report.history_site`)."""

# no `from __future__ import annotations`: typer evaluates the annotations (see cli.results)

from pathlib import Path
from typing import Annotated

import typer

from ci_eval.cli.common import environment, fail, say
from ci_eval.cli.options import BaselineBranchOpt, BaselineOpt, BaselineRefOpt
from ci_eval.errors import InputError
from ci_eval.settings.flags import from_flags

SiteOpt = Annotated[
    Path,
    typer.Option(
        "-o",
        "--output",
        metavar="DIR",
        help="The folder the site is written to [default: ci-eval-history].",
        show_default=False,
    ),
]


def history(
    output: SiteOpt = Path("ci-eval-history"),
    baseline: BaselineOpt = None,
    baseline_ref: BaselineRefOpt = None,
    baseline_branch: BaselineBranchOpt = None,
) -> None:
    """Draw main's history as a static site of trend pages.

    One page for the suite (each eval set's pass rate per push with its 95 % interval, the
    cases that flip most, tokens, cost and p95 run latency per push) and one per case (its
    runs): plain HTML with SVG charts, no JavaScript, no network. It reads the whole baseline
    (main's last 50 pushes), from the file, a git ref or the data branch.

    Example: ci-eval history --baseline-branch ci-eval-data -o site
    """
    from ci_eval.gate.main_history import read_history
    from ci_eval.report.history_site.site import INDEX, render_site, write_site
    from ci_eval.settings.build import build
    from ci_eval.text.plural import plural

    given = from_flags(locals())
    try:
        settings = build(given, environment())  # type: ignore[arg-type]
        data, where, notices = read_history(settings)
        for notice in notices:
            say(notice, err=True)
        pages = render_site(data, where)
        write_site(pages, output)
    except InputError as exc:
        fail(exc)
    except OSError as exc:
        fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(output)))
    say(
        f"history written to {output / INDEX}: {plural(len(data.pushes), 'push', 'pushes')}, "
        f"{plural(len(pages) - 1, 'case page')}"
    )
