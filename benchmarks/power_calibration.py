"""The power statement checked by simulation: what a passing verdict says it could have
detected, against how often the gate catches that drop when it happens.

For each simulated PR (sim_noise's suite and history: 40 cases, main 7 pushes × 3 runs, the
pipeline's confirmation reruns), the unchanged PR's comparison states, by the gate's own model
(``ci_eval.gate.power``), the chance that a case passing ≥ 95 % on main falling to 60 % is
named a regression, averaged over those cases, and the drop of every case the suite-wide test
catches with 90 %. Then the same history (same seed) meets a PR where one of those cases,
drawn at random, falls to 60 % — caught or not — and a PR where every case drops by the
stated points. Stated and simulated are printed side by side; the target is within 5 points.

    python benchmarks/power_calibration.py [--prs N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_verdict import wilson  # noqa: E402
from benchmarks.sim_noise import Job, Row, _pushes, simulate_comparison  # noqa: E402
from ci_eval.gate.decision import gate  # noqa: E402
from ci_eval.gate.power import Target  # noqa: E402
from ci_eval.model.comparison import Basis, Judgement  # noqa: E402


def _unchanged(rng, cases):
    return _pushes(), Job(), []


def _random_bad(rng, cases):
    """Every push and the PR bad with probability 10 %: −15 points for every case."""
    jobs = [Job(day=0.15 if rng.random() < 0.1 else 0.0) for _ in range(7)]
    return jobs, Job(day=0.15 if rng.random() < 0.1 else 0.0), []


def _qualifying(comparison, target: Target) -> list[str]:
    return [
        j.case_id
        for j in comparison.cases
        if j.basis is Basis.HISTORY
        and j.history_runs
        and j.history_runs - j.history_failed >= target.case_from * j.history_runs
    ]


def _with_pr(history, pr_job: Job):
    """The row's scenario, its history drawn as before, the PR's job replaced."""

    def scenario(rng, cases):
        pushes, _, _ = history(rng, cases)
        return pushes, pr_job, []

    return scenario


def calibrate(history, runs: int, target: Target, prs: int, seed: int) -> str:
    stated = caught = 0.0
    suite_stated: list[int] = []
    suite_caught = suite_fired = suite_prs = 0
    n = 0
    for i in range(prs):
        s = seed * 100_000 + i
        results, comparison, _ = simulate_comparison(Row("", "", runs, history), s, target)
        power = comparison.power
        ids = _qualifying(comparison, target)
        if gate(results) == 1 or power is None or power.probability is None or not ids:
            continue  # a false alarm states nothing: only a passing verdict says its power
        n += 1
        stated += power.probability
        chosen = random.Random(s + 1).choice(ids)
        rates = {c.case_id: c.rate for c in _suite_cases(s)}
        shift = {chosen: (1 - target.case_to) - (1 - rates[chosen])}
        _, broke, _ = simulate_comparison(Row("", "", runs, _with_pr(history, Job(shift=shift))), s)
        caught += any(
            j.case_id == chosen and j.judgement is Judgement.REGRESSION for j in broke.cases
        )
        if power.suite_drop is not None:
            day = power.suite_drop / 100
            res, drop, _ = simulate_comparison(
                Row("", "", runs, _with_pr(history, Job(day=day))), s
            )
            suite_prs += 1
            suite_stated.append(power.suite_drop)
            suite_caught += gate(res) == 1
            suite_fired += drop.suite is not None and drop.suite.regressed
    low, high = wilson(int(caught), n)
    line = (
        f"| {runs} | {target.case_from:.0%} → {target.case_to:.0%} | {n} "
        f"| {100 * stated / n:.0f} % | {100 * caught / n:.0f} % "
        f"[{100 * low:.0f}–{100 * high:.0f}] | {100 * (caught - stated) / n:+.0f} |"
    )
    if suite_prs:
        mean_drop = sum(suite_stated) / suite_prs
        line += (
            f" {mean_drop:.0f} pts | 90 % | {100 * suite_fired / suite_prs:.0f} % / "
            f"{100 * suite_caught / suite_prs:.0f} % |"
        )
    return line


def _suite_cases(seed: int):
    from benchmarks.sim_noise import suite

    return suite(random.Random(seed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rows", nargs="*", default=["1:0.2", "3:0.6", "3:0.2", "5:0.6"], metavar="RUNS:TO"
    )
    args = parser.parse_args()
    print(f"simulated PRs a row: {args.prs} (passing unchanged PRs only state their power)")
    for name, history in (("main steady", _unchanged), ("bad days, p 10 %", _random_bad)):
        print(f"\n{name}\n")
        print(
            "| PR runs | a case falling | PRs | stated | caught [95 % interval] | "
            "difference, points | stated suite drop | stated | suite test / gate caught |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for spec in args.rows:
            runs, to = spec.split(":")
            target = Target(0.95, float(to))
            print(calibrate(history, int(runs), target, args.prs, args.seed), flush=True)


if __name__ == "__main__":
    main()
