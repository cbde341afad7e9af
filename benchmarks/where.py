"""Where a ci-eval command's wall time goes, without a profiler's distortion: the command runs
in this process while a thread samples the main thread's stack every 2 ms; each
``ci_eval`` function is charged the time it was on the stack (inclusive), importing is
counted apart. Worker threads are not sampled: the agent phase shows as the runner's wait.

    python benchmarks/where.py run EVALS --agent adk-http --agent-url URL ...
"""

from __future__ import annotations

import collections
import contextlib
import io
import sys
import threading
import time
from types import FrameType


def _stack(frame: FrameType | None) -> list[str]:
    names = []
    while frame is not None:
        code = frame.f_code
        module = frame.f_globals.get("__name__", "")
        if module.startswith("ci_eval"):
            names.append(f"{module}.{code.co_name}")
        elif code.co_filename.startswith("<frozen importlib"):
            names.append("(importing modules)")
        frame = frame.f_back
    return names


AGENT_PHASE = "ci_eval.run.runner._execute"  # on the main thread's stack while the turns run
PHASES = ("before the agent phase", "the agent phase", "after it")


def main() -> int:
    start = time.perf_counter()
    main_id = threading.get_ident()
    spent: collections.Counter[str] = collections.Counter()  # seconds on the stack
    # the same per phase: before the runner starts the turns, while they run, after
    by_phase: list[collections.Counter[str]] = [collections.Counter() for _ in PHASES]
    phase_wall = [0.0] * len(PHASES)
    done = threading.Event()

    def sample() -> None:
        # each sample is charged the time since the previous one: a CPU-bound main thread holds
        # the GIL for up to the switch interval, so samples are not evenly spaced
        last = time.perf_counter()
        phase = 0
        while not done.wait(0.002):
            frame = sys._current_frames().get(main_id)
            now = time.perf_counter()
            names = set(_stack(frame))
            if AGENT_PHASE in names:
                phase = 1
            elif phase == 1:
                phase = 2
            phase_wall[phase] += now - last
            for name in names:
                spent[name] += now - last
                by_phase[phase][name] += now - last
            last = now

    threading.Thread(target=sample, daemon=True).start()
    from ci_eval.cli import main as cli_main

    sys.argv = ["ci-eval", *sys.argv[1:]]
    code = 0
    out = io.StringIO()  # the command's own output is not what this reports
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli_main() or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    done.set()
    wall = time.perf_counter() - start
    print(f"where: {wall:.2f} s in process (exit {code}); the main thread's time:")
    for name, seconds in spent.most_common():
        if seconds / wall >= 0.01:
            print(f"  {seconds:6.2f} s  {seconds / wall:5.1%}  {name}")
    if phase_wall[1]:
        print("by phase (the agent phase: the runner's wait; the main thread's own work then):")
        for title, seconds, counter in zip(PHASES, phase_wall, by_phase, strict=True):
            print(f"  {title}: {seconds:.2f} s")
            for name, part in counter.most_common(12):
                if (part >= 0.01 and part < seconds * 0.999) or name == AGENT_PHASE:
                    print(f"    {part:6.2f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
