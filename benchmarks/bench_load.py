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

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure
import bench_scale


def _rss_mb(key: str = "VmRSS") -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return 0.0


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def child(step: str, folder: Path) -> None:
    """One step, timed in this process; its figures as JSON on stdout."""
    from ci_eval.connectors.replay import ReplayConnector
    from ci_eval.discover import discover
    from ci_eval.load import LoadedEvalSet, load_all

    try:
        from ci_eval.io.jsonfast import paused_gc
    except ImportError:  # a revision from before it: its pipeline did not pause the collector
        paused_gc = contextlib.nullcontext  # type: ignore[assignment]

    gc.set_threshold(50_000, 20, 100)  # as the command line sets it
    gc.collect()
    before, cpu, wall = _rss_mb(), _cpu(), time.perf_counter()
    if step == "load":
        with paused_gc():
            outcomes = load_all(discover([folder / "scale.evalset.json"]))
            gc.freeze()
        assert isinstance(outcomes[0], LoadedEvalSet), outcomes
    else:
        connector = ReplayConnector([folder / "recorded" / "scale.evalset_result.json"])
        assert connector.recordings
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "held": _rss_mb() - before,
                "peak": _rss_mb("VmHWM"),
            }
        )
    )


def measure(
    step: str, folder: Path, repeat: int, trees: list[Path | None]
) -> list[dict[str, float]]:
    """The step in each tree (None: this one), in turns; per tree the median run (by wall
    time) and the largest peak."""
    runs: list[list[dict[str, float]]] = [[] for _ in trees]
    for _ in range(repeat):
        for i, tree in enumerate(trees):
            env = dict(bench_scale.ENV)
            if tree is not None:
                env["PYTHONPATH"] = str(tree)
            out = subprocess.run(
                [sys.executable, __file__, "--child", step, str(folder)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            runs[i].append(json.loads(out.stdout.splitlines()[-1]))
    summaries = []
    for tree_runs in runs:
        median = statistics.median_low(r["wall"] for r in tree_runs)
        chosen = next(r for r in tree_runs if r["wall"] == median)
        summaries.append({**chosen, "peak": max(r["peak"] for r in tree_runs), "n": repeat})
    return summaries


def _shown(r: dict[str, float]) -> str:
    return (
        f"{r['wall']:.2f} s (median of {r['n']:.0f}; cpu {r['cpu']:.2f} s), "
        f"{r['held']:.0f} MB held after, process peak {r['peak']:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also time ci_eval at this revision")
    parser.add_argument("--child", nargs=2, metavar=("STEP", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
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
        trees: list[Path | None] = [None]
        if args.against:
            ref = folder / "ref"
            ref.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(_measure.ROOT), "archive", args.against, "ci_eval"],
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(ref)], input=archive, check=True)
            trees.append(ref)
        bench_scale.write_inputs(folder, args.cases)
        for step, (name, before) in names.items():
            ours, *theirs = measure(step, folder, args.repeat, trees)
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
