"""Rendering, at scale: the report stage of ``ci-eval run`` and ``ci-eval report`` — the terminal
summary, the redaction scrub of every case, the JUnit XML and the Markdown summary, written to
files — on the results of 20,000 replayed one-turn cases (the inputs ``bench_scale`` builds).

The stage runs in a fresh process on the results file read back (reading is not timed; the
collector frozen after it, as the command line does), and prints its wall and CPU time, then
the CPU time of each part on its own. The target: the whole stage <= 1.5 s at 20,000 cases
(before #17's second session: JUnit ~3 s and the summary ~2.5 s on a quiet machine). The files
it writes are compared byte for byte with the reference's when there is one.

    python benchmarks/bench_render.py [--cases N] [--repeat N] [--against REV]

``--against REV`` runs the same stage with ci_eval as it was at git revision REV (its
``ci_eval/`` and ``templates/`` from ``git archive``), in turns with this tree's.
"""

from __future__ import annotations

import contextlib
import filecmp
import gc
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure
import bench_scale


def child(results_file: Path, out: Path) -> None:
    """The report stage, timed in this process; its figures as JSON on stdout."""
    from ci_eval.cli.common import say
    from ci_eval.publish import report
    from ci_eval.report.junit import to_junit
    from ci_eval.report.markdown import render_summary
    from ci_eval.report.terminal import summary_lines
    from ci_eval.results.file import CaseRecord, read_results
    from ci_eval.settings import ReportSettings
    from ci_eval.text import redact

    gc.set_threshold(50_000, 20, 100)  # as the command line sets it
    results = read_results(results_file)
    gc.freeze()
    settings = ReportSettings(
        junit=str(out / "junit.xml"), summary=str(out / "summary.md"), results=str(results_file)
    )
    figures: dict[str, float] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        cpu, wall = _measure.cpu_s(), time.perf_counter()
        report(results, settings, {}, say)
        figures["wall"], figures["cpu"] = time.perf_counter() - wall, _measure.cpu_s() - cpu
    # each part again on its own (the scrub finds nothing left to redact: the same work)
    parts = {
        "terminal": lambda: [say(line) for line in summary_lines(results)],
        "scrub": lambda: redact.current().scrub(results, units=(CaseRecord,)),
        "junit": lambda: to_junit(results),
        "summary": lambda: render_summary(results, artifact=str(results_file), problems=[]),
    }
    with contextlib.redirect_stdout(io.StringIO()):
        for name, part in parts.items():
            cpu = _measure.cpu_s()
            part()
            figures[name] = _measure.cpu_s() - cpu
    print(json.dumps(figures))


def _shown(r: dict[str, float]) -> str:
    return (
        f"{r['wall']:.2f} s (cpu {r['cpu']:.2f} s, median of {r['n']:.0f}; parts' cpu: "
        f"terminal {r['terminal']:.2f}, scrub {r['scrub']:.2f}, JUnit {r['junit']:.2f}, "
        f"summary {r['summary']:.2f})"
    )


def main() -> None:
    args = _measure.step_arguments(("RESULTS", "OUT"))
    if args.child:
        # each tree renders the results file its own ci_eval wrote (its schema), in its folder
        own = Path(args.child[1]) / "results.json"
        child(own if own.exists() else Path(args.child[0]), Path(args.child[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = _measure.reference_trees(args.against, folder, ("ci_eval", "templates"))
        for i, tree in enumerate(trees):
            (own := folder / f"out{i}").mkdir()
            results_file = _measure.replayed_results(own, args.cases, own / "results.json", tree)
        ours, *theirs = _measure.child_runs(
            __file__,
            [str(results_file)],
            args.repeat,
            trees,
            bench_scale.ENV,
            by="cpu",
            out=folder / "out",
        )
        reference = "before #17's second session: JUnit ~3 s, summary ~2.5 s (quiet machine)"
        if theirs:
            same = all(
                filecmp.cmp(folder / "out0" / name, folder / "out1" / name, shallow=False)
                for name in ("junit.xml", "summary.md")
            )
            reference = f"at {args.against}: {_shown(theirs[0])}; files identical: {same}"
        _measure.figure(
            f"report stage (terminal, scrub, JUnit, summary) on {args.cases:,} cases",
            _shown(ours),
            reference,
            "<= 1.5 s",
            ours["wall"] <= 1.5,
            "python benchmarks/run.py render"
            + (f" (bench_render.py --against {args.against})" if args.against else ""),
        )


if __name__ == "__main__":
    main()
