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


def main() -> int:
    start = time.perf_counter()
    main_id = threading.get_ident()
    spent: collections.Counter[str] = collections.Counter()  # seconds on the stack
    done = threading.Event()

    def sample() -> None:
        # each sample is charged the time since the previous one: a CPU-bound main thread holds
        # the GIL for up to the switch interval, so samples are not evenly spaced
        last = time.perf_counter()
        while not done.wait(0.002):
            frame = sys._current_frames().get(main_id)
            now = time.perf_counter()
            for name in set(_stack(frame)):
                spent[name] += now - last
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
