"""Whole-process measurements for the benchmarks: wall time, CPU time and peak RSS of a command
(``os.wait4``'s rusage for that child and its descendants), best of N, with the load average."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # ci-eval and adk of the interpreter running the benchmark


@dataclass
class Sample:
    wall: float  # seconds, best of the repetitions
    cpu: float  # user + system seconds of that best repetition
    rss_mb: float  # peak resident set size, the largest over the repetitions
    code: int

    def __str__(self) -> str:
        return f"{self.wall:.2f} s (cpu {self.cpu:.2f} s, peak {self.rss_mb:.0f} MB)"


def run(
    cmd: Sequence[str],
    repeat: int = 3,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    ok: Sequence[int] = (0, 1),
) -> Sample:
    """Run ``cmd`` ``repeat`` times; the fastest run's wall and CPU time, the largest peak RSS.
    Output is discarded; an exit code outside ``ok`` stops the benchmark with its stderr."""
    best: Sample | None = None
    peak = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in ok:
            sys.exit(
                f"benchmark command failed ({proc.returncode}): {' '.join(cmd)}\n"
                + err.decode(errors="replace")[-2000:]
            )
        rss = usage.ru_maxrss / 1024  # KiB on Linux
        peak = max(peak, rss)
        sample = Sample(wall, usage.ru_utime + usage.ru_stime, rss, proc.returncode)
        if best is None or wall < best.wall:
            best = sample
    assert best is not None
    best.rss_mb = peak
    return best


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} on {os.cpu_count()} CPUs"


def verdict(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"
