"""Scale, whole process: ``ci-eval run --agent replay`` on N one-turn cases (20,000 by default),
scored with ADK's default metrics and reported (results JSON, JUnit, Markdown summary), then
``ci-eval report`` on that results file. Prints wall time and peak RSS against the targets:
20,000 cases in <= 5 s and <= 200 MB, 100,000 cases in <= 500 MB, report of 20,000 <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure

VOCABULARY = [
    "the",
    "weather",
    "in",
    "paris",
    "london",
    "tokyo",
    "berlin",
    "rome",
    "madrid",
    "is",
    "sunny",
    "cloudy",
    "raining",
    "windy",
    "cold",
    "warm",
    "today",
    "tomorrow",
    "degrees",
    "celsius",
    "forecast",
    "shows",
    "expect",
    "light",
    "heavy",
    "showers",
    "later",
    "morning",
    "evening",
    "night",
    "temperature",
    "humidity",
    "wind",
    "speed",
    "of",
    "about",
    "around",
    "with",
    "a",
    "chance",
    "clear",
    "skies",
    "storms",
    "expected",
    "city",
    "report",
    "current",
    "conditions",
    "will",
    "be",
    "mostly",
    "partly",
]
# the eval set of 100,000 cases and the results file of 20,000 are over the default 50 MB limit
# on input files (CI_EVAL_MAX_FILE_MB)
ENV = {**os.environ, "CI_EVAL_MAX_FILE_MB": "2000"}
TOOLS = ["get_weather", "get_forecast", "convert_units", "lookup_city"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(8, 24))) + "."


def _invocation(rng: random.Random, i: int, question: str, answer: str) -> dict[str, Any]:
    calls = [
        {"name": rng.choice(TOOLS), "args": {"city": rng.choice(VOCABULARY), "days": i % 7}}
        for _ in range(rng.randint(0, 2))
    ]
    return {
        "invocation_id": f"inv_{i}",
        "user_content": {"role": "user", "parts": [{"text": question}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {"tool_uses": calls},
    }


def write_inputs(folder: Path, cases: int) -> tuple[Path, Path]:
    """An ADK eval set and an ADK .evalset_result.json recording an agent's answers (most
    close to the expected ones, some not). Written case by case: a benchmark process holding
    100,000 cases would lend its size to the peak RSS measured of the child it starts (a
    child shares its parent's memory until it runs ci-eval)."""
    rng = random.Random(17)
    evalset = folder / "scale.evalset.json"
    recorded = folder / "recorded" / "scale.evalset_result.json"
    recorded.parent.mkdir()
    with evalset.open("w") as cases_out, recorded.open("w") as results_out:
        cases_out.write('{"eval_set_id": "scale", "eval_cases": [')
        results_out.write(
            '{"eval_set_result_id": "r", "eval_set_id": "scale", "eval_case_results": ['
        )
        for i in range(cases):
            question = f"case {i}: " + _sentence(rng)
            expected = _invocation(rng, i, question, _sentence(rng))
            actual = json.loads(json.dumps(expected))
            if rng.random() < 0.3:
                actual["final_response"]["parts"][0]["text"] = _sentence(rng)
            if rng.random() < 0.1:
                actual["intermediate_data"]["tool_uses"].reverse()
            result = {
                "eval_set_id": "scale",
                "eval_id": f"case_{i}",
                "final_eval_status": 1,
                "overall_eval_metric_results": [],
                "eval_metric_result_per_invocation": [
                    {"actual_invocation": actual, "expected_invocation": expected}
                ],
                "session_id": f"s{i}",
            }
            comma = ", " if i else ""  # as json.dumps separates a list's items
            cases_out.write(
                comma + json.dumps({"eval_id": f"case_{i}", "conversation": [expected]})
            )
            results_out.write(comma + json.dumps(result))
        cases_out.write("]}")
        results_out.write("]}")
    return evalset, recorded


def measure(
    cases: int, repeat: int, report: bool
) -> tuple[_measure.Sample, _measure.Sample | None]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        evalset, recorded = write_inputs(work, cases)
        out = work / "out"
        ci_eval = str(_measure.BIN / "ci-eval")
        run = _measure.run(
            [
                ci_eval, "run", str(evalset), "--agent", "replay", "--replay", str(recorded),
                "--concurrency", "8", "--results", str(out / "results.json"),
                "--junit", str(out / "junit.xml"), "--summary", str(out / "summary.md"),
            ],
            repeat=repeat,
            cwd=work,
            env=ENV,
        )  # fmt: skip
        again = None
        if report:
            again = _measure.run(
                [
                    ci_eval, "report", str(out / "results.json"),
                    "--junit", str(out / "junit2.xml"), "--summary", str(out / "summary2.md"),
                ],
                repeat=repeat,
                cwd=work,
                env=ENV,
            )  # fmt: skip
    return run, again


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--big", type=int, default=100_000, help="0 to skip the memory run")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    run, report = measure(args.cases, args.repeat, report=True)
    assert report is not None
    command = "python benchmarks/run.py scale"
    _measure.figure(
        f"{args.cases:,} cases replayed, scored and reported (results, JUnit, summary)",
        str(run),
        "none",
        "<= 5 s and <= 200 MB",
        run.wall <= 5 and run.rss_mb <= 200,
        command,
    )
    _measure.figure(
        f"`ci-eval report` on those {args.cases:,} cases",
        str(report),
        "none",
        "<= 5 s",
        report.wall <= 5,
        command,
    )
    if args.big:
        big, _ = measure(args.big, 1, report=False)
        _measure.figure(
            f"{args.big:,} cases replayed, scored and reported",
            str(big),
            "none",
            "<= 500 MB",
            big.rss_mb <= 500,
            command,
        )


if __name__ == "__main__":
    main()
