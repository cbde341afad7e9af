"""``--agent adk``, whole process, against its floor and against ``adk eval``, in one run.

The same LLM-free ADK agent (samples/agents/weather_agent) and the same eval set
(samples/evals/weather_basic.evalset.json): ``adk eval`` (reference), ``ci-eval run --agent
adk`` (target: >= 5x faster than adk eval, and within 1.3x of the floor), and the floor itself
(adk_floor.py: import the agent, play the turns with InMemoryRunner, nothing more).

The agent runs in ci-eval's agent worker (a process without the job's credentials); what that
costs against the agent run in ci-eval's own process is ``run.py --against REV adk`` with a REV
from before the worker (b8bfa3a).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure

HERE = Path(__file__).resolve().parent
AGENT = _measure.ROOT / "samples/agents/weather_agent"
EVALSET = _measure.ROOT / "samples/evals/weather_basic.evalset.json"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if importlib.util.find_spec("google.adk") is None:
        print("adk: google-adk is not installed (pip install -e '.[test]'); skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "weather_agent"  # adk eval writes .adk/ beside the agent
        shutil.copytree(AGENT, agent, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
        floor, ours, theirs = _measure.interleaved(
            [
                [sys.executable, str(HERE / "adk_floor.py"), str(agent), str(EVALSET)],
                [
                    str(_measure.BIN / "ci-eval"), "run", str(EVALSET), "--agent", "adk",
                    "--agent-module", str(agent), "--results", str(Path(tmp) / "results.json"),
                ],
                [str(_measure.BIN / "adk"), "eval", str(agent), str(EVALSET)],
            ],
            repeat=args.repeat,
            cwd=Path(tmp),
        )  # fmt: skip
    _measure.figure(
        "--agent adk on weather_basic, whole process, against the floor",
        f"{ours} = {ours.wall / floor.wall:.2f} x the floor",
        f"floor (import the agent, play the same turns with InMemoryRunner) {floor}",
        "<= 1.3 x the floor",
        ours.wall <= 1.3 * floor.wall,
        "python benchmarks/run.py adk",
    )
    _measure.figure(
        "--agent adk on weather_basic, whole process, against adk eval",
        f"{ours} = {theirs.wall / ours.wall:.1f}x faster",
        f"adk eval {theirs}",
        ">= 5x faster",
        theirs.wall >= 5 * ours.wall,
        "python benchmarks/run.py adk",
    )


if __name__ == "__main__":
    main()
