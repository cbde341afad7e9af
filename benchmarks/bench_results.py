"""The results file, at scale: writing it (``write_results``, as a run does after scoring, its
cases compacted) and reading it back (``read_results``, what ``report``, ``compare`` and
``merge`` start with), each timed in a fresh process on the results of a ``ci-eval run
--agent replay`` of the 20,000 one-turn cases ``bench_scale`` builds.

Each prints wall and CPU time of the step alone (imports excluded); for reading, what the
process holds afterwards beyond what it held before, and its peak RSS. Before #17's second
session: writing 4.1 s (a 133 MB file), reading 11.2 s of ``report``'s 11.5 s and 559 MB.

    python benchmarks/bench_results.py [--cases N] [--repeat N] [--against REV]

``--against REV`` times the same steps with ci_eval as it was at git revision REV (its
``ci_eval/`` from ``git archive``), in turns with this tree's, as the reference.
"""

from __future__ import annotations

import gc
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure
import bench_scale


def child(step: str, results: Path) -> None:
    """One step, timed in this process; its figures as JSON on stdout."""
    from ci_eval.results.file import read_results, write_results

    gc.set_threshold(50_000, 20, 100)  # as the command line sets it
    if step == "write":
        loaded = read_results(results)
        for _, case in loaded.cases():
            getattr(case, "compact", lambda: None)()  # as a run holds its scored cases
        gc.freeze()
    with _measure.timed() as figures:
        if step == "write":
            write_results(results.with_name("again.json"), loaded)
        else:
            read = read_results(results)
            assert read.cases()
    if step == "write":
        figures["mb"] = results.with_name("again.json").stat().st_size / 1e6
    print(json.dumps(figures))


def _shown(step: str, r: dict[str, float]) -> str:
    timed = f"{r['wall']:.2f} s (median of {r['n']:.0f}; cpu {r['cpu']:.2f} s)"
    if step == "write":
        return f"{timed}, a {r['mb']:.0f} MB file"
    return f"{timed}, {r['held']:.0f} MB held after, process peak {r['peak']:.0f} MB"


def main() -> None:
    args = _measure.step_arguments(("STEP", "FILE"))
    if args.child:
        # each tree reads and writes the file its own ci_eval wrote, in the folder it is given
        folder = args.child[2:]
        results = Path(folder[0]) / "results.json" if folder else Path(args.child[1])
        child(args.child[0], results)
        return
    steps = {
        "write": (
            f"writing the results file of {args.cases:,} cases",
            "4.1 s, 133 MB",
            "well under 1.5 s",
            1.5,
        ),
        "read": (
            f"reading the results file of {args.cases:,} cases",
            "11.2 s, 559 MB peak (report)",
            "report <= 5 s whole process, far less memory",
            None,
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = _measure.reference_trees(args.against, folder)
        out = folder / "tree"
        for i, tree in enumerate(trees):
            (own := out.with_name(f"{out.name}{i}")).mkdir()
            results = _measure.replayed_results(own, args.cases, own / "results.json", tree)
        for step, (name, before, target, limit) in steps.items():
            ours, *theirs = _measure.child_runs(
                __file__, [step, str(results)], args.repeat, trees, bench_scale.ENV, out=out
            )
            reference = (
                f"at {args.against}: {_shown(step, theirs[0])}"
                if theirs
                else f"before: {before} (quiet machine)"
            )
            _measure.figure(
                name,
                _shown(step, ours),
                reference,
                target,
                None if limit is None else ours["wall"] < limit,
                "python benchmarks/run.py results"
                + (f" (bench_results.py --against {args.against})" if args.against else ""),
            )


if __name__ == "__main__":
    main()
