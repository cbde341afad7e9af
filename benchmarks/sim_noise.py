"""The verdict on correlated and moving noise, fast: main's pushes and a PR simulated as data,
judged by the gate's own code (``baseline.update`` for each push of main, ``compare`` with the
pipeline's confirmation reruns, ``gate``), without the agent, scorer and files that
``bench_verdict.py`` runs through (which measures the same rows through the CLI, slower).

Each case has a chance to pass a run; a push of main or the PR's job may move it: a provider's
bad day (every case −15 points), a step or a drift on main, a bad batch for a bursty case (its
runs in that job fail with probability 0.8). Reruns happen in the PR's job, so they share its
day and batch. A metric is pass/fail (a tool trajectory, 1 or 0) or, where the row says, a
continuous score (ROUGE-like, normal around the case's mean, threshold 0.8).

    python benchmarks/sim_noise.py [--prs N] [--rows NAME ...] [--seed S]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_verdict import suite as verdict_suite  # noqa: E402
from benchmarks.bench_verdict import wilson  # noqa: E402
from ci_eval.gate import auto_control, confirm  # noqa: E402
from ci_eval.gate import baseline as baseline_store  # noqa: E402
from ci_eval.gate.compare import compare  # noqa: E402
from ci_eval.gate.decision import gate  # noqa: E402
from ci_eval.gate.power import DEFAULT_TARGET, Target  # noqa: E402
from ci_eval.model.comparison import Comparison  # noqa: E402
from ci_eval.model.facts import RunFacts  # noqa: E402
from ci_eval.model.metric_spec import MetricConfig, MetricSpec  # noqa: E402
from ci_eval.model.results import CaseMetric, CaseRecord, RunResults, SetRecord  # noqa: E402
from ci_eval.model.status import Status  # noqa: E402
from ci_eval.settings.gate import DEFAULT_GATE, GateSettings  # noqa: E402

TRAJECTORY, ROUGE = "tool_trajectory_avg_score", "response_match_score"
THRESHOLD = {TRAJECTORY: 1.0, ROUGE: 0.8}


@dataclass
class Case:
    case_id: str
    rate: float  # chance a run passes, on a normal day
    burst: float = 0.0  # chance a job is a bad batch for the case
    mean: float = 0.0  # continuous: the score's mean (sd SD)


SD = 0.05


@dataclass
class Job:
    """What moves a job's runs: a day shift for every case, per-case shifts, bad batches."""

    day: float = 0.0  # added to every case's failure chance
    shift: dict[str, float] = field(default_factory=dict)  # per case, added to failure chance
    score_shift: dict[str, float] = field(default_factory=dict)  # continuous: added to mean
    bad_batch: set[str] = field(default_factory=set)
    broken: set[str] = field(default_factory=set)  # fail every run


def suite(rng: random.Random, n: int = 40) -> list[Case]:
    """bench_verdict's suite: 55 % always pass, 25 % pass 85–97 %, 12 % 50–85 %, 8 % never."""
    return [Case(c.case_id, c.rate) for c in verdict_suite(rng, n)]


def run_case(c: Case, job: Job, rng: random.Random, continuous: bool) -> float:
    if c.case_id in job.broken:
        return 0.0
    if continuous:
        mean = c.mean + job.score_shift.get(c.case_id, 0.0)
        return round(min(1.0, max(0.0, rng.gauss(mean, SD))), 3)
    fail = 1 - c.rate + job.day + job.shift.get(c.case_id, 0.0)
    if c.case_id in job.bad_batch:
        fail = 0.8
    return 0.0 if rng.random() < min(1.0, max(0.0, fail)) else 1.0


def record(
    cases: list[Case],
    scores: dict[str, list[float]],
    metric: str,
    runs: int,
    response: dict[str, list[float]] | None = None,
) -> RunResults:
    """The results of a job; ``response``: a second metric's runs (pass/fail), a run passing
    when both pass."""
    records = []
    for c in cases:
        values = scores[c.case_id]
        metrics = [_metric(metric, values)]
        if response is not None:
            metrics.append(_metric(ROUGE, response[c.case_id]))
        passed = all(m.status == Status.PASSED for m in metrics)
        status = Status.PASSED if passed else Status.FAILED
        records.append(CaseRecord(c.case_id, metrics=metrics, scored_status=status))
    # the set's metrics as a results file holds them (a MetricConfig since 6282b89's gate)
    config = MetricConfig([MetricSpec(m, THRESHOLD[m]) for m in THRESHOLD], "default", "adk")
    results = RunResults([SetRecord("suite", "suite.evalset.json", "adk", config, records)])
    results.settings = RunFacts(num_runs=runs, confirm_runs=4)
    results.fail_on = ("regression", "error", "not-evaluated")
    return results


def _metric(metric: str, values: list[float]) -> CaseMetric:
    threshold = THRESHOLD[metric]
    mean = sum(values) / len(values)
    passed = sum(v >= threshold for v in values) >= len(values) / 2
    status = Status.PASSED if passed else Status.FAILED
    return CaseMetric(metric, status, mean, threshold, runs=list(values))


@dataclass
class Row:
    name: str
    target: str
    pr_runs: int
    # (rng, cases) -> the jobs of main's pushes (oldest first), the PR's job, broken cases
    scenario: Callable[[random.Random, list[Case]], tuple[list[Job], Job, list[str]]]
    expect_block: bool = False
    runs_per_push: int = 3
    continuous: bool = False
    # a same-day control: main's agent run in the PR's job (its day and batches, not its change)
    control: bool = False
    # --control auto: the control only when the suite-wide test alone fires, on a sample
    control_auto: bool = False
    pushes: int = 7  # main's pushes in the history
    min_history: int | None = None  # --min-history (None: the default)
    two_metrics: bool = False  # each case scored on its trajectory and its response


def _pushes(n: int = 7) -> list[Job]:
    return [Job() for _ in range(n)]


def first_push(rng, cases):
    return _pushes(1), Job(), []


def response_broken(rng, cases):
    """The response of 2 always-passing cases broken (fails every run), the trajectory intact."""
    victims = rng.sample([c for c in cases if c.rate == 1.0], 2)
    return _pushes(), Job(broken={c.case_id for c in victims}), [c.case_id for c in victims]


def bad_days(rng, cases):
    jobs = _pushes()
    for j in rng.sample(range(7), 2):
        jobs[j].day = 0.15
    return jobs, Job(day=0.15), []


def random_bad(rng, cases):
    jobs = [Job(day=0.15 if rng.random() < 0.1 else 0.0) for _ in range(7)]
    return jobs, Job(day=0.15 if rng.random() < 0.1 else 0.0), []


def step(rng, cases):
    hit = rng.sample(cases, round(0.3 * len(cases)))
    jobs = _pushes()
    shift = {c.case_id: 0.3 for c in hit}
    for j in jobs[-2:]:
        j.shift = shift
    return jobs, Job(shift=shift), []


def drift(rng, cases):
    hit = rng.sample(cases, round(0.3 * len(cases)))
    jobs = [Job(shift={c.case_id: 0.05 * k for c in hit}) for k in range(1, 8)]
    return jobs, Job(shift={c.case_id: 0.05 * 8 for c in hit}), []


def bursty(rng, cases):
    for c in rng.sample(cases, round(0.25 * len(cases))):
        c.burst = rng.uniform(0.05, 0.20)

    def job() -> Job:
        return Job(bad_batch={c.case_id for c in cases if c.burst and rng.random() < c.burst})

    return [job() for _ in range(7)], job(), []


def fixed_then_broken(rng, cases):
    victim = rng.choice([c for c in cases if c.rate == 1.0])
    ago = rng.choice([2, 4])
    jobs = _pushes()
    for j in jobs[: 7 - ago]:
        j.broken = {victim.case_id}
    return jobs, Job(broken={victim.case_id}), [victim.case_id]


def bad_day_pr_only(rng, cases):
    return _pushes(), Job(day=0.15), []


def broad_drop(rng, cases):
    return _pushes(), Job(day=0.20), []


def broad_drop_pr(rng, cases):
    """The PR's own drop (not the day's): its job shifts every case, the control's does not."""
    return _pushes(), Job(shift={c.case_id: 0.20 for c in cases}), []


def rouge(rng, cases):
    for c in cases:
        c.mean = rng.uniform(0.78, 0.90)
    hit = rng.sample(cases, round(0.3 * len(cases)))
    return _pushes(), Job(score_shift={c.case_id: -0.1 for c in hit}), []


def unchanged(rng, cases):
    return _pushes(), Job(), []


def rouge_unchanged(rng, cases):
    for c in cases:
        c.mean = rng.uniform(0.78, 0.90)
    return _pushes(), Job(), []


ROWS = [
    Row("2 bad days among main's 7 pushes, PR on a bad day", "≤ 5 %", 1, bad_days),
    Row("2 bad days among main's 7 pushes, PR on a bad day", "≤ 5 %", 3, bad_days),
    Row("every push and the PR bad with probability 10 %", "≤ 5 %", 1, random_bad),
    Row("every push and the PR bad with probability 10 %", "≤ 5 %", 3, random_bad),
    Row("a provider step 2 pushes ago (30 % of cases −30 points)", "≤ 5 %", 1, step),
    Row("a provider step 2 pushes ago (30 % of cases −30 points)", "≤ 5 %", 3, step),
    Row("slow drift on main (30 % of cases −5 points a push)", "≤ 5 %", 1, drift),
    Row("slow drift on main (30 % of cases −5 points a push)", "≤ 5 %", 3, drift),
    Row("bursty jobs (25 % of cases)", "≤ 5 %", 3, bursty),
    Row("case fixed on main 2 or 4 pushes ago, PR breaks it again", "≥ 90 %", 3,
        fixed_then_broken, expect_block=True),
    Row("PR on a bad day, main's history with no bad day", "≤ 5 % with a control", 1,
        bad_day_pr_only),
    Row("PR on a bad day, main's history with no bad day", "≤ 5 % with a control", 3,
        bad_day_pr_only),
    Row("PR on a bad day, main's history with no bad day, --control base", "≤ 5 %", 1,
        bad_day_pr_only, control=True),
    Row("PR on a bad day, main's history with no bad day, --control base", "≤ 5 %", 3,
        bad_day_pr_only, control=True),
    Row("a broad 20-point drop by the PR, history without swings, --control base", "≥ 90 %", 1,
        broad_drop_pr, expect_block=True, control=True),
    Row("a broad 20-point drop by the PR, history without swings", "≥ 90 %", 1, broad_drop,
        expect_block=True),
    Row("PR on a bad day, main's history with no bad day, --control auto", "≤ 5 %", 1,
        bad_day_pr_only, control_auto=True),
    Row("PR on a bad day, main's history with no bad day, --control auto", "≤ 5 %", 3,
        bad_day_pr_only, control_auto=True),
    Row("a broad 20-point drop by the PR, history without swings, --control auto", "≥ 90 %", 1,
        broad_drop_pr, expect_block=True, control_auto=True),
    Row("a broad 20-point drop by the PR, history without swings, --control auto", "≥ 90 %", 3,
        broad_drop_pr, expect_block=True, control_auto=True),
    Row("unchanged agent, --control auto", "≤ 5 %", 1, unchanged, control_auto=True),
    Row("continuous ROUGE near the threshold, 30 % of cases −0.1", "≥ 80 %", 1, rouge,
        expect_block=True, continuous=True),
    Row("continuous ROUGE near the threshold, 30 % of cases −0.1", "≥ 95 %", 3, rouge,
        expect_block=True, continuous=True),
    Row("unchanged agent", "≤ 5 %", 1, unchanged),
    Row("unchanged agent", "≤ 5 %", 3, unchanged),
    Row("a first push: history of 1 push × 1 run, unchanged agent", "≤ 5 %", 1, first_push,
        runs_per_push=1, pushes=1),
    Row("a first push: history of 1 push × 1 run, unchanged agent", "≤ 5 %", 3, first_push,
        runs_per_push=1, pushes=1),
    Row("a first push, --min-history 1", "≤ 5 %", 1, first_push, runs_per_push=1, pushes=1,
        min_history=1),
    Row("a first push, --min-history 1", "≤ 5 %", 3, first_push, runs_per_push=1, pushes=1,
        min_history=1),
    Row("bursty jobs (25 % of cases)", "≤ 5 %", 1, bursty),
    Row("response broken on 2 cases, trajectory intact (caught, and both named)", "≥ 90 %", 1,
        response_broken, expect_block=True, two_metrics=True),
    Row("response broken on 2 cases, trajectory intact (caught, and both named)", "≥ 90 %", 3,
        response_broken, expect_block=True, two_metrics=True),
    Row("continuous ROUGE, unchanged agent", "≤ 5 %", 1, rouge_unchanged, continuous=True),
    Row("continuous ROUGE, unchanged agent", "≤ 5 %", 3, rouge_unchanged, continuous=True),
]  # fmt: skip


def simulate(row: Row, seed: int) -> tuple[bool, bool, str]:
    results, comparison, broken = simulate_comparison(row, seed)
    failed = gate(results) == 1
    named = all(
        any(j.case_id == b and j.judgement.value == "regression" for j in comparison.cases)
        for b in broken
    )
    why = ""
    if failed:
        regs = [j.case_id for j in comparison.cases if j.judgement.value == "regression"]
        why = (
            f"cases {regs}"
            if regs
            else ("suite" if comparison.suite and comparison.suite.regressed else "outage")
        )
    return failed, named, why


def simulate_comparison(
    row: Row, seed: int, target: Target = DEFAULT_TARGET
) -> tuple[RunResults, Comparison, list[str]]:
    """The PR's results with their comparison (its power asked of ``target``), and the cases
    the row broke."""
    rng = random.Random(seed)
    cases = suite(rng)
    by_id = {c.case_id: c for c in cases}
    pushes, pr_job, broken = row.scenario(rng, cases)
    metric = ROUGE if row.continuous else TRAJECTORY
    settings = GateSettings(min_history=row.min_history or DEFAULT_GATE.min_history)

    def one_run(c: Case, job: Job, scores: dict, response: dict | None) -> None:
        if response is None:
            scores[c.case_id].append(run_case(c, job, rng, row.continuous))
            return
        # two metrics: the trajectory as the case's rate has it, the response with it unless
        # the job broke the case's response
        trajectory = run_case(c, dataclasses.replace(job, broken=set()), rng, row.continuous)
        scores[c.case_id].append(trajectory)
        response[c.case_id].append(0.0 if c.case_id in job.broken else trajectory)

    def job_runs_of(some: list[Case], job: Job, m: int) -> tuple[dict, dict | None]:
        scores: dict[str, list[float]] = {c.case_id: [] for c in some}
        response = {c.case_id: [] for c in some} if row.two_metrics else None
        for c in some:
            for _ in range(m):
                one_run(c, job, scores, response)
        return scores, response

    def job_runs(job: Job, m: int) -> tuple[dict, dict | None]:
        return job_runs_of(cases, job, m)

    data = None
    for n, job in enumerate(pushes):
        m = row.runs_per_push
        scores, response = job_runs(job, m)
        results = record(cases, scores, metric, m, response)
        results.started = f"2026-11-{n + 1:02d}T00:00:00+00:00"
        data, _ = baseline_store.update(data, results, commit=f"{n:040d}")
    n = row.pr_runs
    scores, response = job_runs(pr_job, n)
    results = record(cases, scores, metric, n, response)
    confirm_target = confirm.target(n, 4)
    first_look = compare(results, data, settings, confirm=confirm_target)
    if not confirm.outage(first_look, results, confirm_target):
        for _ in range(4):
            comparison = compare(results, data, settings, confirm=confirm_target)
            keys = confirm.to_confirm(comparison, confirm_target)
            if not keys:
                break
            for _, cid in keys:
                one_run(by_id[cid], pr_job, scores, response)
            results = record(cases, scores, metric, n, response)
    else:
        results.settings.outage = "outage"
    control = None
    wanted = row.control
    if row.control_auto:
        first = compare(results, data, settings, confirm=confirm_target)
        wanted = auto_control.wanted(first)
    if wanted:
        same_day = Job(day=pr_job.day, bad_batch=pr_job.bad_batch)
        sample = cases
        runs = n
        if row.control_auto:
            keys = auto_control.sample([("suite", c.case_id) for c in cases])
            sample = [by_id[cid] for _, cid in keys]
            runs = auto_control.runs(n)
        theirs, their_response = job_runs_of(sample, same_day, runs)
        control = record(sample, theirs, metric, runs, their_response)
        control.settings.confirm_runs = 0  # the control gets no reruns
    if row.control_auto and control is not None:
        # the merge base's agent today against main's history: a drop there too is the day's
        today = compare(control, data, settings, confirm=confirm.target(runs, 0))
        if not auto_control.the_days(today):
            control = None  # main's agent is itself today: the drop is the pull request's
    comparison = compare(
        results, data, settings, confirm=confirm_target, control=control, target=target
    )
    comparison.outage = results.settings.outage
    results.comparison = comparison
    return results, comparison, broken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=200)
    parser.add_argument("--rows", nargs="*")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--why", action="store_true")
    args = parser.parse_args()
    print(f"simulated PRs a row: {args.prs}")
    print("| condition | PR runs | gate failed [95 % interval] | target |")
    print("|---|---|---|---|")
    for row in ROWS:
        if args.rows and not any(r in row.name for r in args.rows):
            continue
        failed = named = 0
        whys: dict[str, int] = {}
        for i in range(args.prs):
            f, nm, why = simulate(row, args.seed * 100_000 + i)
            failed += f
            named += f and nm
            kind = why.split(" ")[0] if why else ""
            whys[kind] = whys.get(kind, 0) + 1
        low, high = wilson(failed, args.prs)
        what = "caught" if row.expect_block else "false alarms"
        extra = f" ({whys})" if args.why else ""
        if row.two_metrics:  # every broken case named, not only the gate failed
            extra += f", all named {100 * named / args.prs:.0f} %"
        print(
            f"| {row.name} | {row.pr_runs} | {what} {100 * failed / args.prs:.0f} % "
            f"[{100 * low:.0f}–{100 * high:.0f}]{extra} | {row.target} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
