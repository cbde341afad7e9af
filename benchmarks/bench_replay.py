"""Trace replay, whole process: ``ci-eval run --agent replay`` of 2,000 one-turn cases against
an OTLP trace of 20,000 ADK sessions (each case's session among them, found by its first user
message), scored and reported — beside the same run against a trace of only the cases' own
2,000 sessions. The difference is what the 18,000 other sessions cost: reading them, and
pairing every case with its session. Target: at most 2 s (a case compared with every session
was 80 s here).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure

ENV = {"CI_EVAL_NO_COLOR": "1"}


def _attribute(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _span(i: int) -> dict[str, Any]:
    request = {"contents": [{"role": "user", "parts": [{"text": f"What is case {i} about?"}]}]}
    response = {"content": {"role": "model", "parts": [{"text": f"Case {i} is about weather."}]}}
    return {
        "spanId": f"{i:016x}",
        "name": "call_llm",
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
        "attributes": [
            _attribute("gcp.vertex.agent.invocation_id", f"inv-{i}"),
            _attribute("gcp.vertex.agent.session_id", f"session-{i}"),
            _attribute("gcp.vertex.agent.llm_request", json.dumps(request)),
            _attribute("gcp.vertex.agent.llm_response", json.dumps(response)),
        ],
    }


def write_inputs(folder: Path, cases: int, sessions: int) -> tuple[Path, Path]:
    """The eval set (the cases name no session: each is found by its first message) and the
    trace, its sessions in a shuffled order so that no case finds its own first."""
    evalset = {
        "eval_set_id": "traced",
        "eval_cases": [
            {
                "eval_id": f"case_{i}",
                "conversation": [
                    {
                        "invocation_id": f"inv-{i}",
                        "user_content": {
                            "role": "user",
                            "parts": [{"text": f"What is case {i} about?"}],
                        },
                        "final_response": {
                            "role": "model",
                            "parts": [{"text": f"Case {i} is about weather."}],
                        },
                    }
                ],
            }
            for i in range(cases)
        ],
    }
    order = list(range(sessions))
    order = order[1::2] + order[::2]  # deterministic, and never the cases' order
    trace = {"resourceSpans": [{"scopeSpans": [{"spans": [_span(i) for i in order]}]}]}
    (folder / "evals").mkdir(exist_ok=True)
    set_file = folder / "evals" / "traced.evalset.json"
    set_file.write_text(json.dumps(evalset))
    trace_file = folder / f"trace-{sessions}.json"
    trace_file.write_text(json.dumps(trace))
    return set_file, trace_file


def measure(cases: int, sessions: int, repeat: int) -> tuple[_measure.Sample, _measure.Sample]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        evalset, big = write_inputs(work, cases, sessions)
        _, own = write_inputs(work, cases, cases)
        ci_eval = str(_measure.BIN / "ci-eval")

        def command(trace: Path) -> list[str]:
            return [
                ci_eval, "run", str(evalset), "--agent", "replay", "--replay", str(trace),
                "--results", str(work / "results.json"), "--junit", str(work / "junit.xml"),
            ]  # fmt: skip

        many, few = _measure.interleaved([command(big), command(own)], repeat, work, ENV, (0, 1))
    return many, few


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    many, few = measure(args.cases, args.sessions, args.repeat)
    extra = many.wall - few.wall
    _measure.figure(
        f"{args.cases:,} cases replayed from a trace of {args.sessions:,} sessions",
        f"{many} (+{extra:.2f} s over {args.cases:,} sessions)",
        f"the same cases from a trace of their own {args.cases:,} sessions: {few}",
        "at most 2 s more",
        extra <= 2,
        "python benchmarks/run.py replay",
    )


if __name__ == "__main__":
    main()
