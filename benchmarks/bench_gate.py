"""The regression gate on a noisy agent: false alarms and catches, over many simulated PRs.

A suite of 40 cases — 26 deterministic, 10 slightly flaky (pass 90% of runs), 4 very flaky (pass
60%) — each with two metrics (tool_trajectory_avg_score, threshold 1; response_match_score,
threshold 0.8). Per simulated pull request: main's history is built through the real CLI, in
process (`ci-eval baseline update` 10 times, 2 runs each: a 20-run window), then the PR's results
go through `ci-eval compare`. Scenarios, with 1 and 3 PR runs:

- nothing changed (target: false alarms ≤ 5%);
- a broad drop: every case 20 points less likely to pass (target: caught ≥ 90% with 1 run);
- one deterministic case broken: it always fails now (target: caught ≥ 90% with 3 runs).

Today's gate (the rule on main before the history gate: a one-run-per-side baseline, any status
flip or mean drop is a regression, exact permutation / Fisher tests at n ≥ 2) runs on the same
simulation, against a main run with as many runs as the PR — its rule is kept here, in the
benchmark only. ``python benchmarks/bench_gate.py [PRS]`` (default 200 simulated PRs).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

from benchmarks._measure import simulated_prs  # noqa: E402
from ci_eval.cli import app  # noqa: E402
from ci_eval.metrics.base import CaseMetric  # noqa: E402
from ci_eval.model.metric_spec import MetricConfig, MetricSpec  # noqa: E402
from ci_eval.results.file import CaseRecord, RunResults, SetRecord, to_json  # noqa: E402

RATES = [1.0] * 26 + [0.9] * 10 + [0.6] * 4
METRICS = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
MAIN_UPDATES, MAIN_RUNS = 10, 2
SCENARIOS = [
    ("nothing changed", "same", 1, "≤ 5%"),
    ("nothing changed", "same", 3, "≤ 5%"),
    ("broad drop of 20 points", "broad", 1, "≥ 90%"),
    ("broad drop of 20 points", "broad", 3, ""),
    ("one deterministic case broken", "broken", 1, ""),
    ("one deterministic case broken", "broken", 3, "≥ 90%"),
]


def _run(rng: random.Random, case: int, rate: float) -> dict[str, float]:
    """One run's scores: a deterministic case answers the same words every time."""
    if rng.random() < rate:
        steady = RATES[case] == 1.0
        return {
            "tool_trajectory_avg_score": 1.0,
            "response_match_score": 0.9 if steady else rng.uniform(0.8, 1.0),
        }
    if rng.random() < 0.5:
        return {"tool_trajectory_avg_score": 0.0, "response_match_score": rng.uniform(0.5, 1.0)}
    return {"tool_trajectory_avg_score": 1.0, "response_match_score": rng.uniform(0.3, 0.79)}


def simulate(rng: random.Random, rates: list[float], runs: int) -> list[list[dict[str, float]]]:
    return [[_run(rng, i, rate) for _ in range(runs)] for i, rate in enumerate(rates)]


def to_results(cases: list[list[dict[str, float]]], started: str) -> RunResults:
    specs = [MetricSpec(name, threshold) for name, threshold in METRICS.items()]
    records = []
    for i, runs in enumerate(cases):
        metrics = []
        for name, threshold in METRICS.items():
            scores = [r[name] for r in runs]
            mean = sum(scores) / len(scores)
            status = "PASSED" if mean >= threshold else "FAILED"
            metrics.append(CaseMetric(name, status, mean, threshold, runs=scores))
        status = "FAILED" if any(m.status == "FAILED" for m in metrics) else "PASSED"
        records.append(
            CaseRecord(f"case{i:02d}", "suite.json", 1, scored_status=status, metrics=metrics)
        )
    config = MetricConfig(specs, "test_config.json", "adk")
    return RunResults(
        [SetRecord("suite", "suite.json", "adk", config, records, specs)], "sim", started, 0.0
    )


def cli(*args: str) -> int:
    return CliRunner().invoke(app, list(args), catch_exceptions=False).exit_code


def write(path: Path, results: RunResults) -> str:
    path.write_text(json.dumps(to_json(results)))
    return str(path)


def pr_rates(kind: str) -> list[float]:
    if kind == "broad":
        return [max(0.0, r - 0.2) for r in RATES]
    if kind == "broken":
        return [0.0, *RATES[1:]]
    return list(RATES)


# --- today's gate, as it was on main before the history gate (kept here only) ---------------


def old_gate(before: list[list[dict[str, float]]], after: list[list[dict[str, float]]]) -> bool:
    import numpy as np
    from scipy.stats import fisher_exact, permutation_test

    def significant(b: list[float], a: list[float], threshold: float) -> bool:
        tests = []
        if len(set(b + a)) > 1:
            tests.append(
                permutation_test(
                    (b, a),
                    lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                    permutation_type="independent",
                    alternative="greater",
                    n_resamples=np.inf,
                    vectorized=True,
                ).pvalue
            )
        pb, pa = sum(s >= threshold for s in b), sum(s >= threshold for s in a)
        table = [[pb, len(b) - pb], [pa, len(a) - pa]]
        tests.append(fisher_exact(table, alternative="greater").pvalue)
        return min(tests) < 0.05

    for b_runs, a_runs in zip(before, after, strict=True):
        for name, threshold in METRICS.items():
            b = [r[name] for r in b_runs]
            a = [r[name] for r in a_runs]
            mb, ma = sum(b) / len(b), sum(a) / len(a)
            flipped = mb >= threshold > ma
            worse = mb - ma > 0 or flipped
            if len(b) >= 2 and len(a) >= 2:
                if worse and significant(b, a, threshold):
                    return True
            elif worse:
                return True
    return False


def main() -> None:
    prs = simulated_prs(__doc__, 200)
    rng = random.Random(20261122)
    os.environ["GITHUB_SHA"] = "0" * 40  # provenance without a git call per update
    caught = {(kind, runs): [0, 0] for _, kind, runs, _ in SCENARIOS}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.chdir(folder)
        baseline = str(folder / "baseline.json")
        for pr in range(prs):
            Path(baseline).unlink(missing_ok=True)
            for update in range(MAIN_UPDATES):
                main_run = to_results(simulate(rng, RATES, MAIN_RUNS), f"main-{pr}-{update}")
                code = cli(
                    "baseline",
                    "update",
                    write(folder / "main.json", main_run),
                    "--baseline",
                    baseline,
                )
                assert code == 0
            for _, kind, runs, _ in SCENARIOS:
                now = simulate(rng, pr_rates(kind), runs)
                path = write(folder / "pr.json", to_results(now, f"pr-{pr}-{kind}-{runs}"))
                code = cli("compare", path, "--baseline", baseline)
                assert code in (0, 1), code
                caught[(kind, runs)][0] += code == 1
                # today's gate: a fresh one-off main run with as many runs as the PR
                caught[(kind, runs)][1] += old_gate(simulate(rng, RATES, runs), now)
    print(
        f"gate: {prs} simulated PRs per row; 40 cases (26 deterministic, 10 pass 90%, 4 pass 60%)"
    )
    print(
        f"gate: main history {MAIN_UPDATES} × `baseline update` of {MAIN_RUNS} runs (20-run window)"
    )
    print(f"gate: {'scenario':<32} {'PR runs':>7} {'history gate':>13} {'today':>7}  target")
    for label, kind, runs, target in SCENARIOS:
        new, old = caught[(kind, runs)]
        verb = "false alarms" if kind == "same" else "caught"
        print(
            f"gate: {label:<32} {runs:>7} {new / prs:>12.1%} {old / prs:>7.1%}  "
            + (f"{verb} {target}" if target else f"({verb})")
        )


if __name__ == "__main__":
    main()
