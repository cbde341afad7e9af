"""Runner throughput: 200 cases against a loopback agent with 100 ms latency, concurrency 16.

Prints the wall time and its ratio to the ideal ceil(N/C)·L (target ≤ 1.15).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ci_eval.connectors.http import HttpConnector  # noqa: E402
from ci_eval.load.discover import discover  # noqa: E402
from ci_eval.load.evalsets import LoadedEvalSet, load_all  # noqa: E402
from ci_eval.net.http import HttpSettings  # noqa: E402
from ci_eval.run.runner import RunOptions, run_sets  # noqa: E402

CASES, CONCURRENCY = 200, 16
LATENCY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.100


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.evalset.json"
        path.write_text(
            json.dumps(
                {
                    "eval_set_id": "bench",
                    "eval_cases": [
                        {
                            "eval_id": f"c{i}",
                            "conversation": [
                                {
                                    "user_content": {
                                        "role": "user",
                                        "parts": [{"text": "What is the weather in Paris?"}],
                                    }
                                }
                            ],
                        }
                        for i in range(CASES)
                    ],
                }
            )
        )
        [loaded] = load_all(discover([path]))
        assert isinstance(loaded, LoadedEvalSet)
        # the agent runs in its own process, as a real one would (no shared GIL)
        server = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/loopback_agent.py"), str(LATENCY)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},  # it imports tests.loopback
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            connector = HttpConnector(url, HttpSettings(timeout=10, retries=0))
            best = math.inf
            for _ in range(3):
                start = time.perf_counter()
                results = run_sets([loaded], connector, RunOptions(concurrency=CONCURRENCY))
                best = min(best, time.perf_counter() - start)
                assert results.count("COMPLETED") == CASES
        finally:
            server.kill()
    ideal = math.ceil(CASES / CONCURRENCY) * LATENCY
    print(
        f"run: {CASES} cases, latency {LATENCY * 1000:.0f} ms, concurrency {CONCURRENCY}: "
        f"wall {best:.3f} s (best of 3), ideal {ideal:.3f} s, ratio {best / ideal:.3f} "
        f"(target <= 1.15)"
    )


if __name__ == "__main__":
    main()
