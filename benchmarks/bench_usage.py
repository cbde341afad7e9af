"""Token and latency regressions on a noisy agent and a noisy runner: false alarms and catches,
over many simulated PRs (``python benchmarks/run.py usage``; ``python benchmarks/bench_usage.py
[PRS]``, default 300).

A suite of 40 cases, each with its own size (2,000–20,000 tokens and 1–10 s per run). Tokens per
run are lognormal with a CV of 10 % (16 cases), 20 % (14) or 30 % (10), plus a per-push drift
(the whole job ±3 %, each case ±5 %: a provider's or model's day). Latency per run has a CV of
35 %, one run in 20 twice as slow (a retry, a cold cache), and the job's runner its own factor:
lognormal ±20 %, and one job in five a whole 1.5× slower — main's jobs as well as the PR's.

Per simulated PR: main's history is built by the gate's own code in process (10 ×
``baseline.update`` of 2 runs: the 20-run window), then the PR's results (3 or 5 runs) are judged by
the comparison's usage test (``ci_eval.gate.usage``, as ``compare`` calls it, at the default
significance 0.05 and ``min_history`` 5). Scenarios: nothing changed (target ≤ 5 % of PRs with
any token or latency regression), nothing changed on a runner 1.5× slower than all of main's
(≤ 5 %), one case's tokens +40 %, +60 % and ×2, one case 2× and 3× slower, also on a 1.5×
slower runner, with 3 and 5 PR runs; and the same latency rows on a second suite whose runs'
latency varies less (CV 20 %). Caught: the share of PRs in which that case fired; a false alarm:
a PR in which any other case (or kind) fired.
"""

from __future__ import annotations

import math
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._measure import figure, simulated_prs  # noqa: E402
from ci_eval.gate import baseline as baseline_store  # noqa: E402
from ci_eval.gate.usage import usage_changes  # noqa: E402
from ci_eval.metrics.base import CaseMetric  # noqa: E402
from ci_eval.model.evalset import Invocation  # noqa: E402
from ci_eval.model.facts import RunFacts  # noqa: E402
from ci_eval.model.metric_spec import MetricConfig, MetricSpec  # noqa: E402
from ci_eval.model.usage import Usage  # noqa: E402
from ci_eval.results.file import (  # noqa: E402
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
)

CASES = 40
CVS = [0.10] * 16 + [0.20] * 14 + [0.30] * 10
MAIN_UPDATES, MAIN_RUNS = 10, 2
LATENCY_CV, SPIKE = 0.35, 0.05
CALMER = " (latency CV 20%)"  # a second suite whose runs' latency varies less
TURN = Invocation.model_validate(
    {"invocation_id": "t", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
)
SCENARIOS = [
    # label, tokens ×, latency ×, runner (None: as main's, random), PR runs, target
    ("nothing changed", 1.0, 1.0, None, 3, "false alarms ≤ 5%"),
    ("nothing changed, runner 1.5× slower", 1.0, 1.0, 1.5, 3, "false alarms ≤ 5%"),
    ("nothing changed", 1.0, 1.0, None, 5, "false alarms ≤ 5%"),
    ("one case: tokens +40%", 1.4, 1.0, None, 3, "caught (CV 10 / 20 / 30%)"),
    ("one case: tokens +40%", 1.4, 1.0, None, 5, "caught (CV 10 / 20 / 30%)"),
    ("one case: tokens +60%", 1.6, 1.0, None, 3, "caught (CV 10 / 20 / 30%)"),
    ("one case: tokens ×2", 2.0, 1.0, None, 3, "caught (CV 10 / 20 / 30%)"),
    ("one case: 2× slower", 1.0, 2.0, None, 3, "caught"),
    ("one case: 2× slower", 1.0, 2.0, None, 5, "caught"),
    ("one case: 3× slower", 1.0, 3.0, None, 3, "caught"),
    ("one case: 3× slower, runner 1.5× slower", 1.0, 3.0, 1.5, 3, "caught"),
    (f"nothing changed{CALMER}", 1.0, 1.0, None, 3, "false alarms ≤ 5%"),
    (f"one case: 2× slower{CALMER}", 1.0, 2.0, None, 3, "caught"),
    (f"one case: 2× slower, runner 1.5× slower{CALMER}", 1.0, 2.0, 1.5, 3, "caught"),
]


class Suite:
    def __init__(self, rng: random.Random, latency_cv: float = LATENCY_CV) -> None:
        self.rng = rng
        self.latency_cv = latency_cv
        self.tokens = [rng.uniform(math.log(2000), math.log(20000)) for _ in range(CASES)]
        self.latency = [rng.uniform(0.0, math.log(10)) for _ in range(CASES)]

    def runner(self) -> float:
        slow = 1.5 if self.rng.random() < 0.2 else 1.0
        return slow * math.exp(self.rng.gauss(0, 0.2))

    def job(
        self, name: str, runs: int, changed: int = -1, tokens: float = 1.0, slower: float = 1.0,
        runner: float | None = None,
    ) -> RunResults:  # fmt: skip
        rng = self.rng
        factor = self.runner() if runner is None else runner * math.exp(rng.gauss(0, 0.2))
        drift = rng.gauss(0, 0.03)
        records = []
        for i in range(CASES):
            case_drift = rng.gauss(0, 0.05)
            run_records = []
            for n in range(runs):
                sigma = math.sqrt(math.log(1 + CVS[i] ** 2))
                spent = math.exp(self.tokens[i] + drift + case_drift + rng.gauss(0, sigma))
                wall = math.exp(self.latency[i] + rng.gauss(0, self.latency_cv)) * factor
                wall *= 2.0 if rng.random() < SPIKE else 1.0
                if i == changed:
                    spent, wall = spent * tokens, wall * slower
                usage = Usage(int(spent * 0.8), int(spent * 0.2), model_calls=2)
                turn = InvocationRecord(TURN, TURN, duration_s=wall, usage=usage)
                run_records.append(RunRecord(n + 1, [turn], duration_s=wall))
            metric = CaseMetric("m", "PASSED", 1.0, 1.0, runs=[1.0] * runs)
            records.append(
                CaseRecord(
                    f"case{i:02d}",
                    "s.json",
                    1,
                    run_records,
                    metrics=[metric],
                    scored_status="PASSED",
                )
            )
        spec = MetricSpec("m", 1.0)
        config = MetricConfig([spec], "c.json", "adk")
        results = RunResults([SetRecord("s", "s.json", "adk", config, records, [spec])],
                             "sim", name, float(len(name)))  # fmt: skip
        results.settings = RunFacts(num_runs=runs)
        return results


def main() -> None:
    prs = simulated_prs(__doc__, 300)
    rng = random.Random(20261127)
    os.environ["GITHUB_SHA"] = "0" * 40  # provenance without a git call per update
    # per scenario (label, PR runs): PRs with any false alarm, and with the change caught
    fired = {(s[0], s[4]): [0, 0] for s in SCENARIOS}
    by_cv: dict[tuple[str, int], dict[float, list[int]]] = {(s[0], s[4]): {} for s in SCENARIOS}
    for pr in range(prs):
        suites = {}
        for cv in (LATENCY_CV, 0.2):
            suite = Suite(rng, cv)
            data: dict | None = None
            for update in range(MAIN_UPDATES):
                main_job = suite.job(f"2026-11-{pr % 28 + 1:02d}T00:{update:02d}:00", MAIN_RUNS)
                data, _ = baseline_store.update(data, main_job, "0" * 40)
            assert data is not None
            suites[cv] = (suite, data)
        for label, tokens, slower, runner, runs, _ in SCENARIOS:
            suite, data = suites[0.2 if label.endswith(CALMER) else LATENCY_CV]
            changed = rng.randrange(CASES) if (tokens != 1.0 or slower != 1.0) else -1
            job = suite.job(f"pr-{pr}", runs, changed, tokens, slower, runner)
            found = usage_changes(job, data, min_history=5)
            kind = "tokens" if tokens != 1.0 else "latency"
            hits = {(c.case_id, c.kind) for c in found if c.regressed}
            truth = (f"case{changed:02d}", kind)
            false = any(h != truth for h in hits)
            fired[(label, runs)][0] += false
            fired[(label, runs)][1] += truth in hits
            tally = by_cv[(label, runs)].setdefault(CVS[changed] if changed >= 0 else 0.0, [0, 0])
            tally[0] += truth in hits
            tally[1] += 1
    print(f"usage: {prs} simulated PRs per row; {CASES} cases; main {MAIN_UPDATES} pushes × "
          f"{MAIN_RUNS} runs")  # fmt: skip
    print(f"usage: {'scenario':<42} {'PR runs':>7} {'false alarms':>12} {'caught':>8}  "
          "by token CV 10/20/30%")  # fmt: skip
    for label, tokens, slower, _, runs, target in SCENARIOS:
        false, caught = fired[(label, runs)]
        real = tokens != 1.0 or slower != 1.0
        cvs = by_cv[(label, runs)]
        per_cv = (
            " / ".join(
                f"{cvs.get(cv, [0, 1])[0] / max(1, cvs.get(cv, [0, 1])[1]):.0%}"
                for cv in (0.10, 0.20, 0.30)
            )
            if tokens != 1.0
            else ""
        )
        print(
            f"usage: {label:<42} {runs:>7} {false / prs:>12.1%} "
            + (f"{caught / prs:>8.1%}" if real else f"{'—':>8}")
            + f"  {per_cv}"
        )
        command = "python benchmarks/run.py usage"
        if not real:
            name = f"usage gate: {label}, {runs} PR runs: PRs with a false alarm"
            figure(name, f"{false / prs:.1%}", f"{prs} PRs", "≤ 5%", false / prs <= 0.05, command)
        else:
            figure(f"usage gate: {label}, {runs} PR runs: caught", f"{caught / prs:.1%}"
                   + (f" (CV 10/20/30%: {per_cv})" if per_cv else ""),
                   f"false alarms {false / prs:.1%}", target, None, command)  # fmt: skip


if __name__ == "__main__":
    main()
