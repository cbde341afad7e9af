"""Throughput, whole process: ``ci-eval run --agent adk-http`` on 400 one-turn cases against a
loopback ADK api_server stand-in answering each turn in 200 ms, at concurrency 16.

The physical limit is ceil(400/16) x 0.2 s = 5.0 s; the target is 1.10 x that for the whole
process (start-up, loading, sessions, turns, scoring, reports). The server runs in its own
process, as a real agent would. Each run's agent phase (the runner's clock, first session to
last turn) is printed beside the whole process, and a last run in process shows where the
main thread's time goes, before, during and after the agent phase (``where.py``;
``--no-where`` skips it).

On a loaded machine compare CPU time (user + sys) rather than wall time; a single client's
turn against this server took 202 ms for its 200 ms of latency on the 2-CPU machine at load
4-5 (loopback, the server's own work, waking up): 25 turns in a row need about 5.05 s.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure

HERE = Path(__file__).resolve().parent


def evalset(cases: int) -> dict[str, object]:
    return {
        "eval_set_id": "throughput",
        "eval_cases": [
            {
                "eval_id": f"case_{i}",
                "conversation": [
                    {
                        "invocation_id": f"inv_{i}",
                        "user_content": {"role": "user", "parts": [{"text": f"weather {i}"}]},
                        "final_response": {
                            "role": "model",
                            "parts": [{"text": f"It is sunny: weather {i}"}],
                        },
                        "intermediate_data": {
                            "tool_uses": [{"name": "get_weather", "args": {"q": f"weather {i}"}}]
                        },
                    }
                ],
                "session_input": {"app_name": "weather_agent", "user_id": "u"},
            }
            for i in range(cases)
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--no-where",
        dest="where",
        action="store_false",
        help="skip the last run, in process, that shows where the time goes (benchmarks/where.py)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "evals").mkdir()
        (work / "evals/throughput.evalset.json").write_text(json.dumps(evalset(args.cases)))
        server = subprocess.Popen(
            [sys.executable, str(HERE / "fake_adk_server.py"), str(args.latency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            command = [
                "run", str(work / "evals"), "--agent", "adk-http", "--agent-url", url,
                "--concurrency", str(args.concurrency), "--results", str(work / "results.json"),
                "--junit", str(work / "junit.xml"), "--summary", str(work / "summary.md"),
            ]  # fmt: skip
            runs, phases = [], []
            for _ in range(args.repeat):
                runs.append(
                    _measure.run([str(_measure.BIN / "ci-eval"), *command], 1, work, ok=(0,))
                )
                # the agent phase: the runner's own clock, from the first session to the last turn
                phases.append(json.loads((work / "results.json").read_text())["duration_s"])
            if args.where:
                subprocess.run([sys.executable, str(HERE / "where.py"), *command], cwd=work)
        finally:
            server.kill()
            server.wait()
    sample = _measure.summarize(runs)
    limit = math.ceil(args.cases / args.concurrency) * args.latency
    phase = sorted(phases)[(len(phases) - 1) // 2]
    _measure.figure(
        f"{args.cases} cases x {args.latency * 1000:.0f} ms at concurrency {args.concurrency}, "
        "--agent adk-http, whole process",
        f"{sample} = ratio {sample.wall / limit:.2f}; the agent phase {phase:.2f} s (median)",
        f"physical limit ceil({args.cases}/{args.concurrency}) x {args.latency:g} s "
        f"= {limit:.2f} s",
        f"<= 1.10 x {limit:g} s = {1.10 * limit:.2f} s",
        sample.wall <= 1.10 * limit,
        "python benchmarks/run.py http",
    )


if __name__ == "__main__":
    main()
