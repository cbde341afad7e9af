"""The verdict on the paths real users take first, by simulation of LLM noise: a new or short
history on main, one PR run (the action's default) or three, a broken case, new and renamed
cases, many cases. Every PR goes through ``ci-eval run --agent replay`` in process (``main``),
its verdict read from the exit code and the verdict line; main's history is recorded with
``ci-eval baseline update``.

The suite (40 cases unless the row says otherwise): 55 % always pass, 25 % pass 85–97 % of runs,
12 % pass 50–85 %, 8 % always fail (known failures). A run of a case either calls the expected
tool and answers the expected words, or fails: a wrong tool call (trajectory) or, where the row
says so, a wrong answer with the right tool (response). Each case's recordings give its runs in
order, and more of them than the PR's runs, so a gate that reruns a case replays them too.

    python benchmarks/bench_verdict.py [--prs N] [--rows NAME ...]

Each row prints the share of simulated PRs whose gate failed (a false alarm where nothing
changed, a catch where a case broke), with its 95 % Wilson interval, whether the broken cases
were named in the verdict line, and the agent runs spent, beside the row's target (issue #25).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ci_eval.cli import main  # noqa: E402

EXTRA = 6  # recordings beyond the PR's runs, for a gate that reruns


@dataclass
class Case:
    case_id: str
    rate: float  # the chance a run passes, on main
    now: float | None = None  # in the PR, when it differs
    broken_response: bool = False  # fails on its answer, not its tool call
    content: str = ""  # whose question and answers it has: a renamed case keeps its old ones
    fails_until: int = 0  # main's first runs that fail every time: it was fixed after them

    @property
    def asks(self) -> str:
        return self.content or self.case_id


def suite(rng: random.Random, n: int = 40, flaky_share: float | None = None) -> list[Case]:
    """The suite's cases, by the shares above (or ``flaky_share`` of flaky cases, the rest
    always passing)."""
    cases = []
    for i in range(n):
        if flaky_share is not None:
            rate = rng.uniform(0.5, 0.97) if i < round(n * flaky_share) else 1.0
        else:
            share = i / n
            rate = (
                1.0
                if share < 0.55
                else rng.uniform(0.85, 0.97)
                if share < 0.80
                else rng.uniform(0.50, 0.85)
                if share < 0.92
                else 0.0
            )
        cases.append(Case(f"case_{i:03d}", rate))
    return cases


def _invocation(case_id: str, tool: str, answer: str) -> dict[str, Any]:
    return {
        "invocation_id": "i1",
        "user_content": {"role": "user", "parts": [{"text": f"weather for {case_id}?"}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {"tool_uses": [{"name": tool, "args": {"city": case_id}}]},
    }


EXPECTED_ANSWER = "It is sunny and twenty two degrees with a light breeze from the west."
WRONG_ANSWER = "I cannot help with that request right now, please try again later."


def write_evalset(folder: Path, cases: list[Case], two_metrics: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    evalset = folder / "suite.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "suite",
                "eval_cases": [
                    {
                        "eval_id": c.case_id,
                        "conversation": [_invocation(c.asks, "get_weather", EXPECTED_ANSWER)],
                    }
                    for c in cases
                ],
            }
        )
    )
    criteria = {"tool_trajectory_avg_score": 1.0}
    if two_metrics:
        criteria["response_match_score"] = 0.8
    (folder / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    return evalset


def write_recordings(
    path: Path, cases: list[Case], runs: int, rng: random.Random, pr: bool, two_metrics: bool
) -> None:
    """``runs`` recordings of every case, in order (run N replays the N-th)."""
    results = []
    for run in range(runs):
        for c in cases:
            rate = c.now if pr and c.now is not None else c.rate
            if not pr and run < c.fails_until:
                rate = 0.0
            tool, answer = "get_weather", EXPECTED_ANSWER
            if rng.random() >= rate:
                if (pr and c.broken_response) or (two_metrics and rng.random() < 0.5):
                    answer = WRONG_ANSWER
                else:
                    tool = "get_forecast"
            expected = _invocation(c.asks, "get_weather", EXPECTED_ANSWER)
            results.append(
                {
                    "eval_set_id": "suite",
                    "eval_id": c.case_id,
                    "final_eval_status": 1,
                    "overall_eval_metric_results": [],
                    "eval_metric_result_per_invocation": [
                        {
                            "actual_invocation": _invocation(c.asks, tool, answer),
                            "expected_invocation": expected,
                        }
                    ],
                    "session_id": f"s{run}",
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "eval_set_result_id": path.stem,
                "eval_set_id": "suite",
                "creation_timestamp": time.time(),
                "eval_case_results": results,
            }
        )
    )


def cli(*args: str, cwd: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue() + err.getvalue()


@dataclass
class Row:
    name: str
    target: str
    pushes: Callable[[random.Random], list[int]]  # main's runs per push, oldest first
    pr_runs: int
    change: Callable[[list[Case], random.Random], list[str]] = lambda cases, rng: []
    flags: tuple[str, ...] = ()
    cases: int = 40
    flaky_share: float | None = None
    two_metrics: bool = False
    # what the PR's cases are, from main's: new cases added, a case renamed
    pr_cases: Callable[[list[Case], random.Random], list[Case]] | None = None
    expect_block: bool = True  # the row counts catches (True) or false alarms (False)
    named: list[str] = field(default_factory=list)
    # recordings beyond the PR's runs; 0: exactly the runs asked for, as a user's replayed
    # eval_history or trace holds them (a rerun has nothing new to replay)
    extra: int = EXTRA
    # main's own change before the PR, given its pushes' runs: the cases the PR then breaks
    on_main: Callable[[list[Case], list[int], random.Random], list[str]] | None = None


def _break(n: int, response: bool = False) -> Callable[[list[Case], random.Random], list[str]]:
    def change(cases: list[Case], rng: random.Random) -> list[str]:
        steady = [c for c in cases if c.rate == 1.0]
        broken = rng.sample(steady, n)
        for c in broken:
            c.now = 0.0
            c.broken_response = response
        return [c.case_id for c in broken]

    return change


def _fixed_then_broken(cases: list[Case], history: list[int], rng: random.Random) -> list[str]:
    """An always-passing case that failed every run on main until 2 or 4 pushes ago (fixed
    then), broken again by the PR."""
    victim = rng.choice([c for c in cases if c.rate == 1.0])
    victim.fails_until = sum(history[: len(history) - rng.choice([2, 4])])
    victim.now = 0.0
    return [victim.case_id]


def _new_cases(cases: list[Case], rng: random.Random) -> list[Case]:
    added = [Case(f"new_{i}", 1.0 if i >= 2 else 0.0) for i in range(5)]
    return cases + added


def _renamed(cases: list[Case], rng: random.Random) -> list[Case]:
    """An always-passing case under a new id, its content unchanged, and broken."""
    victim = rng.choice([c for c in cases if c.rate == 1.0])
    renamed = Case(f"{victim.case_id}_renamed", 1.0, now=0.0, content=victim.case_id)
    return [c for c in cases if c is not victim] + [renamed]


ROWS = [
    Row("history of 1 push (1 run), nothing changed", "≤ 5 %", lambda r: [1], 1,
        expect_block=False),
    Row("history of 1 push (1 run), nothing changed", "≤ 5 %", lambda r: [1], 3,
        expect_block=False),
    Row("history of 1 push (1 run), --min-history 1, nothing changed", "≤ 5 %", lambda r: [1],
        1, flags=("--min-history", "1"), expect_block=False),
    Row("history of 1 push (1 run), --min-history 1, nothing changed", "≤ 5 %", lambda r: [1],
        3, flags=("--min-history", "1"), expect_block=False),
    Row("history of 2 pushes, nothing changed", "≤ 5 %", lambda r: [1, 1], 1, expect_block=False),
    Row("history of 2 pushes, nothing changed", "≤ 5 %", lambda r: [1, 1], 3, expect_block=False),
    Row("history of 5–10 single-run pushes, one always-passing case broken", "≥ 90 %",
        lambda r: [1] * r.randint(5, 10), 1, _break(1)),
    Row("history of 5–10 single-run pushes, one always-passing case broken", "≥ 90 %",
        lambda r: [1] * r.randint(5, 10), 3, _break(1)),
    Row("history of 1–2 pushes, --min-history 1, one case broken", "≥ 90 %",
        lambda r: [1] * r.randint(1, 2), 1, _break(1), ("--min-history", "1")),
    Row("history of 1–2 pushes, --min-history 1, one case broken", "≥ 90 %",
        lambda r: [1] * r.randint(1, 2), 3, _break(1), ("--min-history", "1")),
    Row("200 cases (15 % flaky), 3 always-passing cases broken", "≥ 90 %, all 3 named",
        lambda r: [2] * 10, 1, _break(3), cases=200, flaky_share=0.15),
    Row("response broken on 2 cases, trajectory intact (two metrics)", "≥ 90 %, both named",
        lambda r: [2] * 10, 1, _break(2, response=True), two_metrics=True),
    Row("response broken on 2 cases, trajectory intact (two metrics)", "≥ 90 %, both named",
        lambda r: [2] * 10, 3, _break(2, response=True), two_metrics=True),
    Row("a case failing on main until 2 or 4 pushes ago, passing since; the PR breaks it",
        "≥ 90 %, named", lambda r: [3] * 7, 3, on_main=_fixed_then_broken),
    Row("5 new cases, 2 of them failing every run", "blocked, named", lambda r: [2] * 10, 3,
        pr_cases=_new_cases),
    Row("a renamed case (same content, new id) broken", "blocked, named", lambda r: [2] * 10, 3,
        pr_cases=_renamed),
    Row("unchanged agent, deep history (20 runs)", "≤ 5 %; ≤ 10 % extra runs",
        lambda r: [2] * 10, 1, expect_block=False),
    Row("history 4 pushes × 5 runs, recordings of exactly the PR's runs, nothing changed",
        "≤ 5 %", lambda r: [5] * 4, 1, expect_block=False, extra=0),
    Row("history 1 push × 1 run, recordings of exactly the PR's runs, nothing changed",
        "≤ 5 %", lambda r: [1], 1, expect_block=False, extra=0),
    Row("history 1 push × 1 run, recordings of exactly the PR's runs, nothing changed",
        "≤ 5 %", lambda r: [1], 3, expect_block=False, extra=0),
    Row("history 1 push × 1 run, --min-history 1, recordings of exactly the PR's runs",
        "≤ 5 %", lambda r: [1], 1, flags=("--min-history", "1"), expect_block=False, extra=0),
    Row("history 1 push × 1 run, --min-history 1, recordings of exactly the PR's runs",
        "≤ 5 %", lambda r: [1], 3, flags=("--min-history", "1"), expect_block=False, extra=0),
]  # fmt: skip


def simulate(row: Row, seed: int, work: Path) -> tuple[bool, bool, int]:
    """One simulated PR: did the gate fail, were the broken cases all named, agent runs."""
    rng = random.Random(seed)
    cases = suite(rng, row.cases, row.flaky_share)
    history = row.pushes(rng)
    broken = row.on_main(cases, history, rng) if row.on_main else []
    main_dir = work / "main"
    evalset = write_evalset(main_dir, cases, row.two_metrics)
    total = sum(history)
    write_recordings(main_dir / "rec" / "main.json", cases, total, rng, False, row.two_metrics)
    code, out = cli(
        "run", str(evalset), "--agent", "replay", "--replay", "rec", "--num-runs", str(total),
        "--results", "main.json", cwd=main_dir,
    )  # fmt: skip
    _split_into_pushes(main_dir / "main.json", history, main_dir)
    broken += row.change(cases, rng)
    pr_cases = row.pr_cases(cases, rng) if row.pr_cases else cases
    if row.pr_cases is _new_cases:
        broken = ["new_0", "new_1"]
    broken += [c.case_id for c in pr_cases if c.content]  # the renamed case
    pr_dir = work / "pr"
    pr_evalset = write_evalset(pr_dir, pr_cases, row.two_metrics)
    runs = row.pr_runs + row.extra
    write_recordings(pr_dir / "rec" / "pr.json", pr_cases, runs, rng, True, row.two_metrics)
    code, out = cli(
        "run", str(pr_evalset), "--agent", "replay", "--replay", "rec",
        "--num-runs", str(row.pr_runs), "--baseline", str(main_dir / "b.json"),
        "--results", "pr.json", *row.flags, cwd=pr_dir,
    )  # fmt: skip
    if code not in (0, 1):
        raise SystemExit(f"{row.name}: exit {code}:\n{out[-2000:]}")
    verdict = [line for line in out.splitlines() if line.startswith("gate ")][-1]
    named = all(b in verdict for b in broken) if broken else True
    results = json.loads((pr_dir / "pr.json").read_text())
    spent = sum(len(c["runs"]) for s in results["sets"] for c in s["cases"])
    return code == 1, named, spent


def _split_into_pushes(results_file: Path, history: list[int], folder: Path) -> None:
    """Main's runs, recorded push by push: each push's slice of every case's runs."""
    data = json.loads(results_file.read_text())
    start = 0
    for n, runs in enumerate(history):
        part = json.loads(json.dumps(data))
        part["started"] = f"2026-11-{n + 1:02d}T00:00:00+00:00"
        for s in part["sets"]:
            for c in s["cases"]:
                c["runs"] = c["runs"][start : start + runs]
                for i, r in enumerate(c["runs"]):
                    r["run"] = i + 1
                for m in c["metrics"]:
                    m["runs"] = m["runs"][start : start + runs]
        path = folder / f"push{n}.json"
        path.write_text(json.dumps(part))
        code, out = cli(
            "baseline", "update", str(path), "--baseline", "b.json", cwd=folder,
        )  # fmt: skip
        if code != 0:
            raise SystemExit(f"baseline update failed: {out}")
        start += runs


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def run_row(row: Row, prs: int) -> str:
    failed = named = spent = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(prs):
            work = Path(tmp) / f"pr{seed}"
            gate_failed, all_named, runs = simulate(row, seed, work)
            failed += gate_failed
            named += gate_failed and all_named
            spent += runs
    low, high = wilson(failed, prs)
    what = "caught" if row.expect_block else "false alarms"
    baseline_runs = prs * row.pr_runs * (row.cases + (5 if row.pr_cases is _new_cases else 0))
    extra = spent / baseline_runs - 1 if baseline_runs else 0.0
    text = (
        f"| {row.name} | {row.pr_runs} | {what} {100 * failed / prs:.0f} % "
        f"[{100 * low:.0f}–{100 * high:.0f}]"
    )
    if row.expect_block:
        text += f", named in {100 * named / prs:.0f} %"
    return text + f" | {100 * extra:.0f} % | {row.target} |"


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=200)
    parser.add_argument("--rows", nargs="*", help="rows whose name contains one of these")
    args = parser.parse_args()
    print(f"simulated PRs a row: {args.prs}")
    print("| condition | PR runs | gate failed [95 % interval] | extra agent runs | target |")
    print("|---|---|---|---|---|")
    for row in ROWS:
        if args.rows and not any(r in row.name for r in args.rows):
            continue
        print(run_row(row, args.prs), flush=True)


if __name__ == "__main__":
    main_()
