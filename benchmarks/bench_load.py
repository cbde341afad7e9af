"""Loading, at scale: the two steps of ``ci-eval run --agent replay`` before the first case runs,
each timed in a fresh process on the inputs ``bench_scale`` builds (20,000 one-turn cases):

- loading the eval set (discover, parse, validate; as the pipeline does it, the collector
  paused and what was loaded frozen);
- building the replay connector (reading the 23 MB ADK result file into recordings).

Each prints wall and CPU time of the step alone (imports excluded), what the process holds
afterwards beyond what it held before, and its peak RSS; the target is each well under 0.7 s
with far less memory than before (1.9 s and 1.5 s, 221 MB after loading, 100 MB of recordings).

    python benchmarks/bench_load.py [--cases N] [--repeat N] [--against REV]

``--against REV`` times the same steps with ci_eval as it was at git revision REV (its
``ci_eval/`` from ``git archive``), in turns with this tree's, as the reference.
"""

from __future__ import annotations

import contextlib
import gc
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure
import bench_scale


def child(step: str, folder: Path) -> None:
    """One step, timed in this process; its figures as JSON on stdout."""
    from ci_eval.connectors.replay import ReplayConnector
    from ci_eval.load.discover import discover
    from ci_eval.load.evalsets import LoadedEvalSet, load_all

    try:
        from ci_eval.io.jsonfast import paused_gc
    except ImportError:  # a revision from before it: its pipeline did not pause the collector
        paused_gc = contextlib.nullcontext  # type: ignore[assignment]

    gc.set_threshold(50_000, 20, 100)  # as the command line sets it
    with _measure.timed() as figures:
        if step == "load":
            with paused_gc():
                outcomes = load_all(discover([folder / "scale.evalset.json"]))
                gc.freeze()
            assert isinstance(outcomes[0], LoadedEvalSet), outcomes
        else:
            connector = ReplayConnector([folder / "recorded" / "scale.evalset_result.json"])
            assert connector.recordings
    print(json.dumps(figures))


def _shown(r: dict[str, float]) -> str:
    return (
        f"{r['wall']:.2f} s (median of {r['n']:.0f}; cpu {r['cpu']:.2f} s), "
        f"{r['held']:.0f} MB held after, process peak {r['peak']:.0f} MB"
    )


def main() -> None:
    args = _measure.step_arguments(("STEP", "FOLDER"))
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    names = {
        "load": (f"loading the eval set of {args.cases:,} cases", "1.9 s, 221 MB held"),
        "replay": (
            f"building the replay connector ({args.cases:,} recorded cases)",
            "1.5 s, ~100 MB of recordings held",
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = _measure.reference_trees(args.against, folder)
        bench_scale.write_inputs(folder, args.cases)
        for step, (name, before) in names.items():
            ours, *theirs = _measure.child_runs(
                __file__, [step, str(folder)], args.repeat, trees, bench_scale.ENV
            )
            reference = (
                f"at {args.against}: {_shown(theirs[0])}"
                if theirs
                else f"before #17: {before} (quiet machine)"
            )
            _measure.figure(
                name,
                _shown(ours),
                reference,
                "well under 0.7 s, far less memory",
                ours["wall"] < 0.7,
                "python benchmarks/run.py load"
                + (f" (bench_load.py --against {args.against})" if args.against else ""),
            )


if __name__ == "__main__":
    main()
