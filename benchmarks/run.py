"""Run the benchmarks and print each figure beside its reference: ``python benchmarks/run.py``.

    python benchmarks/run.py                 # all of them (several minutes on a quiet machine)
    python benchmarks/run.py startup http    # only these
    python benchmarks/run.py --skip scale    # all but these
    python benchmarks/run.py --list
    python benchmarks/run.py --against d2bab55 scale http startup   # beside that commit's

Each benchmark is ``bench_NAME.py`` here and runs in its own process; it prints its figures as
it goes, and at the end this prints them all in one table (Markdown, as the README shows it)
with the machine and its load. Timings are whole-process medians where the issue asks so; a
figure and its reference are measured in turns in the same run, so on a busy machine compare
them with each other rather than with the targets.

``--against REV`` builds REV (a tag, a commit) once in a venv of its own (cached by commit) and
runs each timed benchmark for both trees in turns, A B A B ... (``--pairs``, at least 3), each
run at one repetition where both trees' benchmark takes ``--repeat``; it prints every figure's
two medians, their ratio and the pair-by-pair range, and marks a figure 5 % worse or more in
time, CPU or peak memory. The statistical benchmarks (gate, verdict, usage, sim_noise) run once
per tree on the same seeds, their rows side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RECORD_ENV = "CI_EVAL_BENCH_RECORD"  # as in _measure.py (not imported: it compiles the sources)


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def table(figures: list[dict[str, object]]) -> str:
    rows = [
        "| figure | ci-eval | reference, same run | target | met | load | command |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        met = {True: "yes", False: "**no**", None: "—"}[f["met"]]  # type: ignore[index]
        rows.append(
            f"| {f['name']} | {f['value']} | {f['reference']} | {f['target']} | {met} "
            f"| {f['load']:.2f} | `{f['command']}` |"
        )
    return "\n".join(rows)


STATISTICAL = ("gate", "verdict", "usage", "sim_noise")  # rows of simulated PRs, seeded
EXTRA = ("sim_noise", "mutation")  # run only when named (12 minutes; an hour)


def available(folder: Path = HERE) -> dict[str, Path]:
    found = {p.stem.removeprefix("bench_"): p for p in sorted(folder.glob("bench_*.py"))}
    return found | {name: folder / f"{name}.py" for name in EXTRA}


def parse_args(argv: list[str] | None, names: list[str]) -> argparse.Namespace:
    """The options; a usage error (exit 2) names what is wrong and what to give."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="benchmarks: " + ", ".join(names),
    )
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument(
        "--against", metavar="REV", help="also run each benchmark on REV (a tag, a commit)"
    )
    parser.add_argument(
        "--pairs", type=int, default=3, help="with --against: rounds of A B (default 3, at least 3)"
    )
    parser.add_argument(
        "--prs", type=int, help="simulated PRs a row for the statistical benchmarks"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ci-eval-bench",
        help="where --against keeps each commit's tree and venv (default: %(default)s)",
    )
    parser.add_argument(
        "--record", type=Path, metavar="FILE", help="with --against: also write the tables here"
    )
    parser.add_argument(
        "--big",
        type=int,
        metavar="N",
        help="scale's memory run at N cases (0: without it), on both trees with --against",
    )
    args = parser.parse_args(argv)
    unknown = [n for n in [*args.names, *args.skip] if n not in names]
    if unknown:
        parser.error(f"unknown {', '.join(unknown)}; choose from {', '.join(names)}")
    if args.against is None and args.record is not None:
        parser.error("--record writes the --against tables: give --against REV too")
    if args.pairs < 3:
        parser.error(f"--pairs {args.pairs}: at least 3 pairs, or the range says nothing")
    if args.prs is not None and args.prs < 1:
        parser.error(f"--prs {args.prs}: at least 1 simulated PR a row")
    return args


def chosen(args: argparse.Namespace, names: list[str]) -> list[str]:
    default = [n for n in names if n not in EXTRA]
    return [n for n in (args.names or default) if n not in args.skip]


def main(argv: list[str] | None = None) -> int:
    benchmarks = available()
    names = list(benchmarks)
    args = parse_args(argv, names)
    if args.list:
        print("\n".join(f"{n} (statistical)" if n in STATISTICAL else n for n in names))
        return 0
    if args.against:
        from against import run_against

        return run_against(args, chosen(args, names), STATISTICAL)
    start = os.getloadavg()
    print(f"machine: {machine()}; load average {start[0]:.2f} at the start", flush=True)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "figures.jsonl"
        record.touch()
        env = {**os.environ, RECORD_ENV: str(record)}
        for name in chosen(args, names):
            extra = ["--prs", str(args.prs)] if args.prs and name in STATISTICAL else []
            if args.big is not None and name == "scale":
                extra += ["--big", str(args.big)]
            code = subprocess.run([sys.executable, str(benchmarks[name]), *extra], env=env)
            failed |= code.returncode
        figures = [json.loads(line) for line in record.read_text().splitlines() if line]
    end = os.getloadavg()
    if figures:
        print(
            f"\nfigures (whole process, medians; machine: {machine()}; load average "
            f"{start[0]:.2f} at the start, {end[0]:.2f} at the end):\n\n{table(figures)}"
        )
    return failed


if __name__ == "__main__":
    sys.exit(main())
