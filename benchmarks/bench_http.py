"""Throughput, whole process: ``ci-eval run --agent adk-http`` on 400 one-turn cases against a
loopback ADK api_server stand-in answering each turn in 200 ms, at concurrency 16.

The physical limit is ceil(400/16) x 0.2 s = 5.0 s; the target is 1.15 x that for the whole
process (start-up, loading, sessions, turns, scoring, reports). The server runs in its own
process, as a real agent would.
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
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "throughput.evalset.json").write_text(json.dumps(evalset(args.cases)))
        server = subprocess.Popen(
            [sys.executable, str(HERE / "fake_adk_server.py"), str(args.latency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            sample = _measure.run(
                [
                    str(_measure.BIN / "ci-eval"),
                    "run",
                    str(work),
                    "--agent",
                    "adk-http",
                    "--agent-url",
                    url,
                    "--concurrency",
                    str(args.concurrency),
                    "--results",
                    str(work / "results.json"),
                    "--junit",
                    str(work / "junit.xml"),
                    "--summary",
                    str(work / "summary.md"),
                ],
                repeat=args.repeat,
                cwd=work,
                ok=(0,),
            )
        finally:
            server.kill()
            server.wait()
    limit = math.ceil(args.cases / args.concurrency) * args.latency
    target = 1.15 * limit
    print(
        f"http: {args.cases} cases x {args.latency * 1000:.0f} ms at concurrency "
        f"{args.concurrency}, adk-http, whole process: {sample}; physical limit {limit:.2f} s, "
        f"ratio {sample.wall / limit:.2f} (target <= 1.15: "
        f"{_measure.verdict(sample.wall, target)}) [{_measure.load()}]"
    )


if __name__ == "__main__":
    main()
