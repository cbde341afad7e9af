"""Judge answer parsers on the answers that are slowest for a backtracking engine, at 4,000
characters and at the judge's ceiling (100,000): trpc-agent-go's hallucination blocks
(``"ID:a Reason:b "`` repeated: cubic on Python's ``re``), its final-response pattern
(quadratic there), its segmenter's ``<sentence>`` pattern, and ADK's label patterns. Each in a
fresh process with a time limit (a hang is reported as such, not waited for). Target: every
one under 0.1 s. ``--python`` measures another interpreter's ci_eval (a previous release's
venv, as ``run.py --against`` builds it in ~/.cache/ci-eval-bench).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure

LIMIT_S = 60.0
CASES = {
    "trpc hallucination": (
        "from ci_eval.metrics import trpc_judge_parse as p",
        "p.hallucination",
        "ID:a Reason:b ",
    ),
    "trpc final_response": (
        "from ci_eval.metrics import trpc_judge_parse as p",
        "p.final_response",
        "reasoning: x ",
    ),
    "trpc segmenter": (
        "from ci_eval.metrics import trpc_judge_parse as p",
        "p.SENTENCE.findall",
        "<sentence>a",
    ),
    "adk response_match_verdict": (
        "from ci_eval.metrics import adk_judge_labels as p\nfrom ci_eval.metrics.judge import tame",
        "lambda t: p.response_match_verdict(tame(t))",
        '"is_the_agent_response_valid": ',
    ),
}
SCRIPT = """
import sys, time
{imports}
parse = {call}
text = ({unit!r} * ({n} // len({unit!r}) + 1))[:{n}]
started = time.perf_counter()
try:
    parse(text)
except Exception:
    pass
print(time.perf_counter() - started)
"""


def one(python: str, name: str, n: int) -> float | None:
    """Seconds to parse, or None when it did not finish within LIMIT_S."""
    imports, call, unit = CASES[name]
    script = SCRIPT.format(imports=imports, call=call, unit=unit, n=n)
    try:
        done = subprocess.run(
            [python, "-c", script],
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
            check=True,
            cwd=tempfile.gettempdir(),  # its own ci_eval, not the one in this folder
        )
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    for name in CASES:
        for n in (4_000, 100_000):
            took = one(args.python, name, n)
            shown = f"> {LIMIT_S:g} s (stopped)" if took is None else f"{took * 1000:.1f} ms"
            _measure.figure(
                f"{name} on a {n:,}-character answer",
                shown,
                "none",
                "<= 0.1 s",
                took is not None and took <= 0.1,
                "python benchmarks/run.py parsers",
            )


if __name__ == "__main__":
    main()
