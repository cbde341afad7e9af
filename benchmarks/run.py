"""Run the benchmarks and print each figure beside its reference: ``python benchmarks/run.py``.

    python benchmarks/run.py                 # all of them (a few minutes on a quiet machine)
    python benchmarks/run.py startup http    # only these
    python benchmarks/run.py --skip scale    # all but these
    python benchmarks/run.py --list

Each benchmark is ``bench_NAME.py`` here and runs in its own process. Timings are whole-process
where the issue asks so; on a busy machine compare the figures with the references printed
beside them (measured in the same run) rather than with the targets.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


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
    load = os.getloadavg()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}; "
        f"load average {load[0]:.2f} at the start",
        flush=True,
    )
    failed = 0
    for name in chosen:
        failed |= subprocess.run([sys.executable, str(available[name])], check=False).returncode
    return failed


if __name__ == "__main__":
    sys.exit(main())
