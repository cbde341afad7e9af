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
    suggested = _quarantine_candidates(data)
    if suggested:
        path = output / SUGGESTIONS
        try:
            path.write_text(suggested, encoding="utf-8")
        except OSError as exc:
            fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(path)))
        say(
            f"flaky on main, candidates for quarantine.toml (also in {path}; "
            "set each owner and check each reason):"
        )
        for line in suggested.rstrip("\n").splitlines():
            say(line)


SUGGESTIONS = "quarantine-suggestions.toml"


def _quarantine_candidates(data: object) -> str:
    """``[[quarantine]]`` entries for the cases that flip most on main (gate.quarantine's
    rule), less those quarantine.toml here holds already."""
    from datetime import UTC, datetime

    from ci_eval.gate import quarantine
    from ci_eval.gate.main_history import quarantine_path
    from ci_eval.report.history_site.data import flip_rates

    held: list[str] = []
    path = quarantine_path()
    if path.is_file():
        try:
            held = [e.case for e in quarantine.read_entries(path.read_text("utf-8"), str(path))]
        except (InputError, OSError, UnicodeDecodeError):
            held = []  # `run` says what is wrong with it; the suggestions stand without it
    rates = [
        quarantine.FlipRate(f.set_id, f.case_id, f.runs, f.flips)
        for f in flip_rates(data)  # type: ignore[arg-type]
    ]
    return quarantine.suggest(rates, datetime.now(UTC).date(), quarantined=held)
