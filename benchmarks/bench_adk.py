"""``--agent adk``, whole process, against its floor and against ``adk eval``, in one run.

The same LLM-free ADK agent (samples/agents/weather_agent) and the same eval set
(samples/evals/weather_basic.evalset.json): ``adk eval`` (reference), ``ci-eval run --agent
adk`` (target: >= 4x faster than adk eval, and within 1.3x of the floor), and the floor itself
(adk_floor.py: import the agent, play the turns with InMemoryRunner, nothing more).

And what a worker process for the in-process agent (started without the job's credentials,
which the in-process agent shares today) would cost: the start-up such a worker needs before its
first turn — an interpreter importing google-adk and the agent — measured against the run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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
        worker_start = (
            f"import sys; sys.path.insert(0, {str(agent.parent)!r}); "
            "import google.adk.runners, google.genai.types, weather_agent"
        )
        floor, ours, theirs, worker = _measure.interleaved(
            [
                [sys.executable, str(HERE / "adk_floor.py"), str(agent), str(EVALSET)],
                [
                    str(_measure.BIN / "ci-eval"), "run", str(EVALSET), "--agent", "adk",
                    "--agent-module", str(agent), "--results", str(Path(tmp) / "results.json"),
                ],
                [str(_measure.BIN / "adk"), "eval", str(agent), str(EVALSET)],
                [sys.executable, "-c", worker_start],
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
        ">= 4x faster",
        theirs.wall >= 4 * ours.wall,
        "python benchmarks/run.py adk",
    )
    cases = len(json.loads(EVALSET.read_text())["eval_cases"])
    _measure.figure(
        "--agent adk in a worker process without CI credentials (not built): its start-up",
        f"+{worker.wall:.2f} s for one worker = {(ours.wall + worker.wall) / ours.wall:.2f} x the "
        f"run; a worker per case (as command agents run) +{worker.wall * cases:.1f} s for "
        f"{cases} cases at concurrency 1",
        f"ci-eval run --agent adk {ours}",
        "— (the README says the adk agent shares ci-eval's secrets)",
        None,
        "python benchmarks/run.py adk",
    )


if __name__ == "__main__":
    main()
