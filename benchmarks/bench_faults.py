"""Agent faults: 200 cases, 30% of them faulty, over HTTP and over the command connector.

HTTP faults (loopback agent in its own process): 500 and 503 (always), 429 with Retry-After and
503 once (then the right answer), stalls, drips (a byte every 0.25 s), connection resets,
garbage bodies, 10 MB bodies, lone surrogates. Command faults: crashes, garbage lines, stalls
(with a grandchild that would be orphaned), drips, a closed stdout, 10 MB lines, lone
surrogates. Each run writes results, JUnit and the Markdown summary.

Prints per connector: exit code (3 expected), cases in each report (200 expected), cases whose
status is not the expected one, orphaned processes (0), wall time, and the longest case against
its deadline (``--timeout`` x attempts + Retry-After + backoff). Exits 1 if anything is off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fault_agent import GRANDCHILD_MARK  # noqa: E402
from tests.loopback_agent import contract_reply  # noqa: E402

CASES = 200
TIMEOUT = 5.0  # the first turn includes starting the agent, slow on a loaded CI runner
RETRIES = 1
SCORED = "scored"  # PASSED or FAILED: the reply was scored, whatever its verdict

# message -> expected status; the numbers make 60 faulty cases of 200 (30%) per connector
HTTP_FAULTS: list[tuple[str, str, int]] = [
    ("fail 500", "ERROR", 8),
    ("fail 503", "ERROR", 8),
    ("limit 429 1", "PASSED", 8),
    ("flaky 503 1", "PASSED", 6),
    ("slow 30", "ERROR", 6),  # a stall
    ("drip 0.25", "ERROR", 6),  # the right answer, too slowly: the deadline must cut it
    ("reset", "ERROR", 6),
    ("garbage", "ERROR", 6),
    ("big", "PASSED", 3),
    ("surrogate", SCORED, 3),
]
COMMAND_FAULTS: list[tuple[str, str, int]] = [
    ("crash", "ERROR", 10),
    ("garbage", "ERROR", 10),
    ("stall", "ERROR", 10),
    ("drip", "ERROR", 10),
    ("closeout", "ERROR", 8),
    ("big", "PASSED", 6),
    ("surrogate", SCORED, 6),
]
QUESTIONS = [
    "What is the weather in Paris?",
    "What time is it in Tokyo?",
    "What is 6 times 7?",
    "What is the weather in London?",
]


def _eval_set(folder: Path, faults: list[tuple[str, str, int]]) -> dict[str, str]:
    """The eval set, expected = the sample agent's own answer; returns case id -> status."""
    plan: list[tuple[str, str]] = []
    for message, status, count in faults:
        plan += [(message, status)] * count
    plan += [("", "PASSED")] * (CASES - len(plan))
    cases, expected = [], {}
    for n, (fault, status) in enumerate(plan):
        question = QUESTIONS[n % len(QUESTIONS)]
        message = f"{fault} #{n} {question}".strip() if fault else question
        answer = contract_reply(message)
        case_id = f"case_{n:03d}_{(fault.split() or ['ok'])[0]}"
        cases.append(
            {
                "eval_id": case_id,
                "conversation": [
                    {
                        "user_content": {"role": "user", "parts": [{"text": message}]},
                        "final_response": {
                            "role": "model",
                            "parts": [{"text": answer["final_response"]}],
                        },
                        "intermediate_data": {
                            "tool_uses": [
                                {"name": c["name"], "args": c["args"]} for c in answer["tool_calls"]
                            ]
                        },
                    }
                ],
            }
        )
        expected[case_id] = status
    (folder / "faults.evalset.json").write_text(
        json.dumps({"eval_set_id": "faults", "eval_cases": cases})
    )
    return expected


def _orphans() -> int:
    count = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if GRANDCHILD_MARK.encode() in cmdline and state != "Z":
            count += 1
    return count


def _check(name: str, folder: Path, proc: Any, wall: float, expected: dict[str, str]) -> bool:
    results = json.loads((folder / "r.json").read_text())
    statuses = {c["eval_id"]: c["status"] for s in results["sets"] for c in s["cases"]}
    junit = ET.parse(folder / "j.xml").getroot()
    junit_cases = junit.findall(".//testcase")
    summary = (folder / "s.md").read_text("utf-8")
    in_summary = sum(
        1 for case_id in expected if case_id in summary or case_id.replace("_", "\\_") in summary
    )
    wrong = [
        f"{case_id}: {statuses.get(case_id)} (expected {want})"
        for case_id, want in expected.items()
        if not (
            statuses.get(case_id) == want
            or (want == SCORED and statuses.get(case_id) in ("PASSED", "FAILED"))
        )
    ]
    longest = max(
        (r["duration_s"] for s in results["sets"] for c in s["cases"] for r in c["runs"]),
        default=0.0,
    )
    # the per-case deadline: every attempt's timeout, Retry-After (1 s), backoff, 1 s slack
    deadline = TIMEOUT * (RETRIES + 1) + 1.0 + 0.5 * RETRIES + 1.0
    orphans = _orphans()
    print(
        f"faults/{name}: exit {proc.returncode} (3 expected); cases in results "
        f"{len(statuses)}/{CASES}, JUnit {len(junit_cases)}/{CASES}, summary "
        f"{in_summary}/{CASES}; {len(wrong)} with a wrong status; {orphans} orphaned "
        f"processes; wall {wall:.1f} s; longest case {longest:.1f} s (deadline {deadline:.1f} s)"
    )
    by_fault: dict[str, int] = {}
    for line in wrong:
        kind = line.split(":")[0].split("_", 2)[2]
        by_fault[kind] = by_fault.get(kind, 0) + 1
    for kind, count in sorted(by_fault.items()):
        example = next(w for w in wrong if w.split(":")[0].endswith(f"_{kind}"))
        print(f"  wrong status: {count} x {kind}, e.g. {example}")
    return (
        proc.returncode == 3
        and len(statuses) == len(junit_cases) == in_summary == CASES
        and not wrong
        and orphans == 0
        and longest <= deadline
    )


def _run(folder: Path, agent_args: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ci_eval",
            "run",
            str(folder / "faults.evalset.json"),
            *agent_args,
            "--timeout",
            str(TIMEOUT),
            "--retries",
            str(RETRIES),
            "--concurrency",
            "8",
            "--results",
            str(folder / "r.json"),
            "--junit",
            str(folder / "j.xml"),
            "--summary",
            str(folder / "s.md"),
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=900,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.monotonic() - started
    if "internal error" in proc.stderr or "Traceback" in proc.stderr:
        print(proc.stderr[-2000:])
    return proc, wall


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="ci-eval-faults-"))
    ok = True
    try:
        http = work / "http"
        http.mkdir()
        expected = _eval_set(http, HTTP_FAULTS)
        server = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/loopback_agent.py")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # clients giving up on stalls make it chatty
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},  # it imports tests.loopback
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            proc, wall = _run(http, ["--agent", "http", "--agent-url", url])
        finally:
            server.kill()
            server.wait()
        ok &= _check("http", http, proc, wall, expected)

        command = work / "command"
        command.mkdir()
        expected = _eval_set(command, COMMAND_FAULTS)
        agent = f"{sys.executable} {ROOT / 'benchmarks/fault_agent.py'}"
        proc, wall = _run(command, ["--agent", "command", "--agent-command", agent])
        ok &= _check("command", command, proc, wall, expected)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
