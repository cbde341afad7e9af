"""Run the benchmarks and print each figure beside its reference: ``python benchmarks/run.py``.

    python benchmarks/run.py                 # all of them (several minutes on a quiet machine)
    python benchmarks/run.py startup http    # only these
    python benchmarks/run.py --skip scale    # all but these
    python benchmarks/run.py --list

Each benchmark is ``bench_NAME.py`` here and runs in its own process; it prints its figures as
it goes, and at the end this prints them all in one table (Markdown, as the README shows it)
with the machine and its load. Timings are whole-process medians where the issue asks so; a
figure and its reference are measured in turns in the same run, so on a busy machine compare
them with each other rather than with the targets.
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


def main() -> int:
    available = {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(available))
        return 0
    unknown = [n for n in [*args.names, *args.skip] if n not in available]
    if unknown:
        parser.error(f"unknown {', '.join(unknown)}; choose from {', '.join(available)}")
    chosen = [n for n in (args.names or available) if n not in args.skip]
    start = os.getloadavg()
    print(f"machine: {machine()}; load average {start[0]:.2f} at the start", flush=True)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "figures.jsonl"
        record.touch()
        env = {**os.environ, RECORD_ENV: str(record)}
        for name in chosen:
            code = subprocess.run([sys.executable, str(available[name])], env=env).returncode
            failed |= code
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
