"""Run every benchmark and print its figures: ``python benchmarks/run.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    failed = 0
    for bench in sorted(HERE.glob("bench_*.py")):
        failed |= subprocess.run([sys.executable, str(bench)], check=False).returncode
    sys.exit(failed)
