"""The gate's rules at their boundaries, written against behaviour (``compare`` and
``verdict`` on results and baselines built through the public model): each threshold at, just
below and just above its boundary; each family's share of the significance level; each rule
with its condition. So the rules cannot move by accident (issue #48)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ci_eval.gate import confirm
from ci_eval.gate.compare import Judgement, compare
from ci_eval.gate.items import Kind
from ci_eval.gate.verdict import verdict
from ci_eval.settings.gate import GateSettings
from tests.conftest import SAMPLES
from tests.gate.test_gate import history, judged, results, results_with
from tests.helpers import run_cli

PASS, FAIL = 1.0, 0.0


def _pr_failing(history_fails: int, now: list[float]) -> tuple[dict, object]:
    """Main: 20 runs of case ``a`` with ``history_fails`` failures; the PR's runs ``now``."""
    base = history({"a": [FAIL] * history_fails + [PASS] * (20 - history_fails)})
    return base, results({"a": now})


# --- the per-case family has half the significance level --------------------------------------


def test_a_case_is_a_regression_only_at_half_the_significance_level() -> None:
    base, now = _pr_failing(4, [FAIL, FAIL, FAIL])
    p = judged(compare(now, base, GateSettings(significance=1.0)), "a").p_value
    assert 0 < p < 0.5
    at_half = judged(compare(now, base, GateSettings(significance=2 * p)), "a")
    just_over = judged(compare(now, base, GateSettings(significance=2 * p * 0.999)), "a")
    over_whole = judged(
        compare(now, base, GateSettings(significance=p * 1.5)), "a"
    )  # p ≤ α, p > α/2
    assert at_half.judgement is Judgement.REGRESSION
    assert just_over.judgement is not Judgement.REGRESSION
    assert over_whole.judgement is not Judgement.REGRESSION


# --- a break confirmed by reruns blocks only where main never failed ----------------------------


def test_failing_every_run_blocks_where_main_never_failed() -> None:
    base, now = _pr_failing(0, [FAIL, FAIL])
    assert judged(compare(now, base, confirm=2), "a").judgement is Judgement.REGRESSION


def test_failing_every_run_is_judged_by_its_p_value_where_main_fails_it_too() -> None:
    base, now = _pr_failing(10, [FAIL, FAIL])  # half of main's runs fail: the usual noise
    j = judged(compare(now, base, confirm=2), "a")
    assert j.history_failed == 10 and j.judgement is not Judgement.REGRESSION


def test_fewer_failing_runs_than_confirm_never_confirm_a_break() -> None:
    base, now = _pr_failing(0, [FAIL, FAIL])
    j = judged(compare(now, base, confirm=3), "a")
    assert j.judgement is not Judgement.REGRESSION or "failed all" not in j.method


# --- the same-day control: at least half of its runs ------------------------------------------


@pytest.mark.parametrize(
    ("control_runs", "known"),
    [([FAIL, PASS], True), ([FAIL, FAIL, PASS], True), ([FAIL, PASS, PASS], False)],
)
def test_the_control_failing_at_least_half_its_runs_makes_a_known_failure(
    control_runs: list[float], known: bool
) -> None:
    base, now = _pr_failing(0, [FAIL, FAIL, FAIL])
    j = judged(compare(now, base, control=results({"a": control_runs})), "a")
    assert (j.judgement is Judgement.KNOWN_FAILURE) is known
    assert (j.judgement is Judgement.REGRESSION) is not known


# --- an outage: at least 10 cases, more than 30 % of those scored -----------------------------


def _outage(scored: int, failing: int) -> str | None:
    ids = [f"c{i}" for i in range(scored)]
    base = history({c: [PASS] * 20 for c in ids})
    now = results({c: [FAIL] if n < failing else [PASS] for n, c in enumerate(ids)})
    return confirm.outage(compare(now, base), now, 5)


@pytest.mark.parametrize(
    ("scored", "failing", "outage"),
    [
        (40, 12, False),  # 30 % exactly: not more than the share
        (40, 13, True),
        (20, 9, False),  # 45 %, but fewer than 10 cases
        (20, 10, True),
    ],
)
def test_an_outage_is_more_than_30_percent_and_at_least_10_cases(
    scored: int, failing: int, outage: bool
) -> None:
    assert (_outage(scored, failing) is not None) is outage


# --- removed cases block past max_removed -----------------------------------------------------


@pytest.mark.parametrize(("allowed", "blocks"), [(1, True), (2, False), (3, False)])
def test_removed_cases_block_only_past_max_removed(allowed: int, blocks: bool) -> None:
    base = history({"a": [PASS] * 5, "b": [PASS] * 5, "c": [PASS] * 5})
    now = results({"a": [PASS]})  # b and c removed
    now.comparison = compare(now, base)
    now.settings.max_removed = allowed
    decision = verdict(now)
    removed = [i for i in decision.blocking + decision.not_blocking if i.kind is Kind.REMOVED]
    assert len(removed) == 2
    assert all(i.blocking is blocks for i in removed)
    assert decision.passed is not blocks


# --- main's pushes swing together only at the χ² test's 10 % level -------------------------------

# five cases, six pushes of four runs: φ = 1.35 but a χ² tail of 0.24 — chance makes such
# swings as often as not
MILD = [
    [(1, 4, 0), (2, 4, 2), (3, 4, 2), (4, 4, 3), (5, 4, 1), (6, 4, 1)],
    [(1, 4, 1), (2, 4, 2), (3, 4, 1), (4, 4, 2), (5, 4, 1), (6, 4, 2)],
    [(1, 4, 3), (2, 4, 0), (3, 4, 0), (4, 4, 4), (5, 4, 1), (6, 4, 1)],
    [(1, 4, 1), (2, 4, 1), (3, 4, 1), (4, 4, 2), (5, 4, 0), (6, 4, 2)],
    [(1, 4, 2), (2, 4, 3), (3, 4, 1), (4, 4, 0), (5, 4, 1), (6, 4, 2)],
]
# every case failing on the even pushes and passing on the odd: a day effect, plainly
STRONG = [[(p, 4, 3 if p % 2 == 0 else 0) for p in range(1, 7)] for _ in range(5)]


def _noise(clusters: list[list[tuple[int, int, int]]]) -> object:
    from ci_eval.gate import noise
    from ci_eval.gate.history import CaseHistory, Cluster

    return noise.measure([CaseHistory([Cluster(*c) for c in case]) for case in clusters])


def test_swings_chance_makes_as_often_as_not_are_not_a_day_effect() -> None:
    mild = _noise(MILD)
    assert mild.dispersion > 1 and not mild.swings


def test_swings_beyond_the_chi2_level_are_a_day_effect() -> None:
    assert _noise(STRONG).swings


# --- a short history's clean failure where a job's runs fail together ----------------------------


def _clustered_main(extra: Callable[[int], dict[str, list[float]]]) -> dict[str, object]:
    """Seven pushes of six runs: each of 21 cases fails two runs in one push of its own (a
    job's runs failing together, ρ ≈ 0.15, no day effect); ``extra(push)``: the other cases'
    runs in that push."""
    from tests.gate.test_correlated_noise import pushes

    per_push = []
    for s in range(7):
        runs = {f"c{i}": [0.0, 0.0] + [1.0] * 4 if i % 7 == s else [1.0] * 6 for i in range(21)}
        per_push.append({**runs, **extra(s)})
    return pushes(per_push)


def test_a_short_histories_clean_failure_blocks_under_correlation_only_below_the_bar() -> None:
    """Where a job's runs fail together a clean failure is a confirmed break only when its
    p-value is at most α/2 over the cases (Bonferroni): 20 failing runs are, 6 are not."""
    main = _clustered_main(lambda push: {"short": [1.0]} if push >= 3 else {})  # one run each
    calm = {f"c{i}": [1.0] for i in range(21)}
    many = compare(results({**calm, "short": [0.0] * 20}), main, confirm=4)
    assert many.rho > 0
    assert judged(many, "short").judgement is Judgement.REGRESSION
    few = compare(results({**calm, "short": [0.0] * 6}), main, confirm=4)
    assert judged(few, "short").judgement is Judgement.NOT_SIGNIFICANT


# --- why an errored case errored ---------------------------------------------------------------


def _errored(*reasons: str) -> object:
    """Results of two cases, the first's metrics errored for these reasons, in a job that
    reached a [budget] limit."""
    from ci_eval.model.results import CaseMetric
    from ci_eval.model.status import Status

    now = results({"c": [1.0], "d": [1.0]})
    case = now.sets[0].cases[0]
    for i, reason in enumerate(reasons):
        case.metrics.append(CaseMetric(f"judge{i}", Status.ERROR, None, 0.5, reason=reason))
    case.scored_status = Status.ERROR
    from ci_eval.model.facts import BudgetReached

    now.settings.budget_reached = BudgetReached(
        "[budget] max_judge_calls = 2", "0 agent calls, 2 judge calls", "1 call refused"
    )
    return now


def test_a_case_whose_only_errors_are_the_budgets_refusals_is_the_budgets() -> None:
    refused = "not asked: budget reached ([budget] max_judge_calls = 2)"
    assert verdict(_errored(refused)).exit_code == 1  # the budget's: a gate failure
    # an error of its own beside the refusal (and beside the metric that scored): an outage
    assert verdict(_errored(refused, "judge: HTTP 500")).exit_code == 3


# --- the suite-wide test's runs -------------------------------------------------------------------


def test_against_a_control_the_suite_test_is_the_sum_of_hypergeometric_splits() -> None:
    """Per case, which of the failed runs (PR's and control's together) are the PR's is chance:
    the PR's failures over the cases are a sum of hypergeometric counts, computed here with
    scipy."""
    from scipy.stats import hypergeom

    base = history({f"c{i}": [1.0] * 20 for i in range(6)})
    pr = [[0.0, 1.0], [0.0, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    control = [[1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    now = results({f"c{i}": runs for i, runs in enumerate(pr)})
    now.settings.num_runs = 2
    suite = compare(now, base, control=results({f"c{i}": r for i, r in enumerate(control)})).suite
    pmf = [1.0]
    for mine, theirs in zip(pr, control, strict=True):
        failed = mine.count(0.0) + theirs.count(0.0)
        split = [hypergeom.pmf(k, 4, failed, 2) for k in range(3)]
        pmf = [sum(pmf[j] * split[k - j] for j in range(len(pmf)) if 0 <= k - j < 3)
               for k in range(len(pmf) + 2)]  # fmt: skip
    assert (suite.failed, suite.runs, suite.control_failed, suite.control_runs) == (3, 12, 3, 12)
    assert suite.p_value == pytest.approx(sum(pmf[3:]), rel=1e-9)
    assert suite.expected == pytest.approx(sum(k * p for k, p in enumerate(pmf)), rel=1e-9)


def test_a_case_whose_reruns_were_cut_short_counts_its_first_runs_alone() -> None:
    """A case failing its one run gets up to four reruns; a job cancelled after two leaves the
    suite-wide test the first run only (its six runs: five other cases' and that one)."""
    base = history({"a": [0.0] * 3 + [1.0] * 17, **{f"c{i}": [1.0] * 20 for i in range(5)}})
    now = results({"a": [0.0] * 3, **{f"c{i}": [1.0] for i in range(5)}})
    now.settings.num_runs, now.settings.confirm_runs = 1, 4
    comparison = compare(now, base, confirm=5)
    assert judged(comparison, "a").judgement is Judgement.NOT_SIGNIFICANT
    assert (comparison.suite.runs, comparison.suite.failed) == (6, 1)


def test_a_verdict_asked_again_after_the_settings_moved_is_decided_again() -> None:
    base = history({"a": [PASS] * 5, "b": [PASS] * 5})
    now = results({"a": [PASS]})  # b removed
    now.comparison = compare(now, base)
    assert not verdict(now).passed
    now.settings.max_removed = 1
    assert verdict(now).passed


# --- what the comparison marks -------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.8, 1.2])
def test_a_threshold_moved_either_way_is_a_change_to_how_the_case_is_judged(
    threshold: float,
) -> None:
    now = results({"a": [PASS]})
    now.sets[0].cases[0].metrics[0].threshold = threshold
    changes = compare(now, history({"a": [PASS] * 10})).judging
    assert [c.text() for c in changes] == [f"threshold: s (x): m 1 → {threshold:g} (1 case)"]
    now.sets[0].cases[0].metrics[0].threshold = 1.0
    assert compare(now, history({"a": [PASS] * 10})).judging == []


def test_an_improved_case_that_no_longer_fails_is_marked_improved() -> None:
    base = history({"a": [FAIL] * 12 + [PASS] * 8})
    comparison = compare(results({"a": [PASS] * 6}), base)
    assert judged(comparison, "a").judgement is Judgement.IMPROVED
    assert [c.improved for c in comparison.changes] == [True]


def test_a_case_is_rerun_while_every_run_failed_and_it_has_fewer_than_the_target() -> None:
    base = history({"a": [PASS] * 20})
    for runs, rerun in ((3, True), (4, False)):
        comparison = compare(results({"a": [FAIL] * runs}), base)
        assert (confirm.to_confirm(comparison, 4) == [("s", "a")]) is rerun
    some_passed = compare(results({"a": [FAIL, PASS, FAIL]}), base)
    assert confirm.to_confirm(some_passed, 4) == []


def test_a_clean_failure_with_a_long_history_needs_the_bar_where_a_jobs_runs_fail_together() -> (
    None
):
    """Main never failed the case in 42 runs, but its jobs' runs fail together (ρ ≈ 0.15):
    three failing runs of one job may be one bad batch, so they block only by their p-value."""
    main = _clustered_main(lambda push: {"clean": [1.0] * 6})
    calm = {f"c{i}": [1.0] for i in range(21)}
    comparison = compare(results({**calm, "clean": [0.0] * 3}), main, confirm=3)
    assert comparison.rho > 0
    assert judged(comparison, "clean").judgement is Judgement.NOT_SIGNIFICANT


@pytest.mark.parametrize(
    ("before", "after", "state"), [(PASS, FAIL, "failing"), (FAIL, PASS, "passing")]
)
def test_a_case_that_changed_on_main_is_judged_since_the_commit_it_changed_at(
    before: float, after: float, state: str
) -> None:
    from tests.gate.test_correlated_noise import pushes

    main = pushes([{"a": [before], "b": [PASS]}] * 6 + [{"a": [after], "b": [PASS]}] * 6)
    case = judged(compare(results({"a": [after], "b": [PASS]}), main), "a")
    assert case.method == f"history since it changed on main ({state} since commit6)"


def test_a_case_names_the_metrics_failing_now_and_no_other() -> None:
    comparison = compare(
        results({"a": [FAIL, PASS], "b": [PASS, PASS]}),
        history({"a": [PASS] * 10, "b": [PASS] * 10}),
    )
    assert (judged(comparison, "a").metrics, judged(comparison, "b").metrics) == (["m"], [])


def test_the_suite_test_counts_the_reruns_a_case_failing_all_its_first_runs_would_get() -> None:
    """Two runs a case and confirmation reruns up to five runs: a case main rarely fails may
    grow by the three reruns it would get were its first runs all failing (stats.rerun_dist),
    whether or not they did; a flaky case gets none. The tail is taken where that matters: the
    observed sum is above what two failures of the rare case alone weigh."""
    from ci_eval.gate import stats

    base = history(
        {
            "a": [FAIL] * 2 + [PASS] * 18,
            "d": [FAIL] * 8 + [PASS] * 12,
            "e": [FAIL] * 8 + [PASS] * 12,
        }
    )
    now = results({"a": [FAIL, PASS], "d": [FAIL, FAIL], "e": [FAIL, PASS]})
    now.settings.num_runs, now.settings.confirm_runs = 2, 4
    suite = compare(now, base, confirm=5).suite
    cases = [
        (2, 3, *stats.predictive(2, 18)),
        (2, 0, *stats.predictive(8, 12)),
        (2, 0, *stats.predictive(8, 12)),
    ]
    tail, mean = stats.mixture_sum_tail([1, 2, 1], cases, [(1.0, 0.0)])
    assert (suite.failed, suite.runs) == (4, 6)
    assert (suite.p_value, suite.expected) == pytest.approx((tail, mean), rel=1e-12)


def test_a_known_failure_that_fails_less_now_stays_a_known_failure() -> None:
    """Only an unchanged case can be judged improved: one still failing is what main knows."""
    base = history({"a": [FAIL] * 15 + [PASS] * 5})
    comparison = compare(results({"a": [FAIL] + [PASS] * 9}), base)
    assert judged(comparison, "a").judgement is Judgement.KNOWN_FAILURE


# --- a failing case with a short history: a known failure where main fails half its runs -------


@pytest.mark.parametrize(
    ("h_runs", "h_failed", "known"),
    [(2, 1, True), (3, 1, False), (4, 2, True), (4, 3, True), (8, 3, False), (6, 0, False)],
)
def test_a_short_historys_failure_is_known_where_main_fails_at_least_half_its_runs(
    h_runs: int, h_failed: int, known: bool
) -> None:
    base = history({"a": [FAIL] * h_failed + [PASS] * (h_runs - h_failed)})
    j = judged(compare(results({"a": [FAIL, PASS]}), base, GateSettings(min_history=10)), "a")
    assert j.method.startswith("short history")
    expected = Judgement.KNOWN_FAILURE if known else Judgement.NOT_SIGNIFICANT
    assert j.judgement is expected


# --- an improvement is tested only for a case with a passing run now ----------------------------


def test_a_case_failing_every_run_is_no_hypothesis_of_the_improvement_family() -> None:
    """Benjamini–Hochberg over the cases that might have improved: a case that failed all its
    runs cannot have, so it does not dilute the family (with it, ``b``'s adjusted p doubles
    past the level)."""
    from ci_eval.gate import stats

    base = history({"a": [FAIL] * 10 + [PASS] * 10, "b": [FAIL] * 12 + [PASS] * 8})
    now = results({"a": [FAIL] * 3, "b": [PASS] * 5})
    p = stats.surprise(8, 12, 5, 5)  # b's 8 passes of 20 on main, then 5 of 5
    assert 0.025 / 2 < p <= 0.025  # improved alone, not once the family counts two
    assert judged(compare(now, base), "b").judgement is Judgement.IMPROVED


def test_an_improved_case_that_still_fails_a_run_is_improved_but_not_said_to_pass() -> None:
    """``min_pass`` lets a case pass with a failing run: improved on main's history, yet its
    metric still fails, so it is not marked as no longer failing."""
    base = history({"b": [FAIL] * 12 + [PASS] * 8})
    now = results({"b": [FAIL] + [PASS] * 9})
    case = now.sets[0].cases[0]
    case.scored_status = case.metrics[0].status = "PASSED"  # at least 8 of 10 pass
    comparison = compare(now, base)
    assert judged(comparison, "b").judgement is Judgement.IMPROVED
    assert [c.improved for c in comparison.changes] == [False]


# --- [[accept]] entries: "*" accepts the suite-wide drop, never a removed case -----------------


def _broad_drop(**removed: list[float]) -> tuple[object, dict]:
    """Forty cases main fails one run in ten, each failing about one run in three now (a drop
    no case alone shows), and main's cases ``removed`` that this run does not have."""
    import random

    rng = random.Random(1)
    main = {f"c{i}": [FAIL if k % 10 == i % 10 else PASS for k in range(20)] for i in range(40)}
    now = {f"c{i}": [FAIL if rng.random() < 0.4 else PASS] for i in range(40)}
    return results(now), history({**main, **removed})


def test_a_broad_acceptance_accepts_the_suite_wide_drop_and_is_used() -> None:
    from ci_eval.model.comparison import Acceptance

    now, base = _broad_drop()
    comparison = compare(now, base, accepted=[Acceptance("*", "new judge model (#7)")])
    assert comparison.suite is not None and comparison.suite.regressed
    assert comparison.suite.accepted == "new judge model (#7)"
    assert not any("matched no regression" in w for w in comparison.warnings)


@pytest.mark.parametrize("case_id", ["retired", "(retired)", "#2"])
def test_a_removed_case_is_accepted_by_an_entry_naming_it_and_never_by_the_broad_one(
    case_id: str,
) -> None:
    """An entry's case is compared with ``*`` for equality: ids sorting before it too."""
    from ci_eval.model.comparison import Acceptance

    now, base = _broad_drop(**{case_id: [PASS] * 20, "gone": [PASS] * 20})
    entries = [Acceptance("*", "new judge model"), Acceptance(case_id, "retired on purpose")]
    comparison = compare(now, base, accepted=entries)
    assert comparison.removed_accepted == [f"s:{case_id} (retired on purpose)"]
    assert comparison.removed_cases == [("s", "gone")]


# --- a new case blocks only when it failed every one of at least confirm runs -----------------


@pytest.mark.parametrize(
    ("now", "blocks"),
    [([FAIL] * 3, True), ([FAIL, FAIL, PASS], False), ([FAIL] * 2, False), ([FAIL] * 4, True)],
)
def test_a_new_case_blocks_only_failing_all_of_at_least_confirm_runs(
    now: list[float], blocks: bool
) -> None:
    comparison = compare(results({"new": now, "a": [PASS]}), history({"a": [PASS] * 5}), confirm=3)
    j = judged(comparison, "new")
    assert j.method.startswith("new case")
    assert (j.judgement is Judgement.REGRESSION) is blocks


def test_the_control_reads_every_case_past_one_it_did_not_score() -> None:
    base, now = _pr_failing(0, [FAIL, FAIL, FAIL])
    control = results({"x": [PASS], "a": [FAIL, FAIL]}, errors=("x",))  # x first, errored
    j = judged(compare(now, base, control=control), "a")
    assert j.judgement is Judgement.KNOWN_FAILURE


# --- a judging change's item says where, once --------------------------------------------------


def test_a_judging_changes_item_names_its_file_and_a_custom_metrics_code_once() -> None:
    from ci_eval.model.comparison import ChangeKind, JudgingChange

    now = results({"a": [PASS]})
    now.comparison = compare(now, history({"a": [PASS] * 5}))
    now.comparison.judging = [
        JudgingChange(ChangeKind.THRESHOLD, "s", "*", "m", "s.json", "1", "0.5", 1),
        JudgingChange(ChangeKind.CODE, metric="mine", where="metrics/mine.py"),
    ]
    now.fail_on = (*now.fail_on, "judging-changed")
    changes = [i.change for i in verdict(now).blocking if i.kind is Kind.JUDGING]
    assert changes == [
        "threshold: m 1 → 0.5 (1 case) (s.json)",
        "code: custom metric mine's code (metrics/mine.py), run this time",
    ]


def test_an_entry_that_accepts_a_removed_case_is_not_said_to_match_nothing() -> None:
    from ci_eval.model.comparison import Acceptance

    base = history({"a": [PASS] * 5, "retired": [PASS] * 5})
    entry = Acceptance("s:retired", "retired on purpose")
    comparison = compare(results({"a": [PASS]}), base, accepted=[entry])
    assert comparison.removed_accepted == ["s:retired (retired on purpose)"]
    assert comparison.warnings == []


# --- the rest of the mutation benchmark's survivors, each pinned where it moves behaviour -------


@pytest.mark.parametrize(("runs", "improved"), [(6, False), (10, True)])
def test_an_improvement_is_judged_by_mains_passes_against_the_runs_that_pass_now(
    runs: int, improved: bool
) -> None:
    """Main passed 12 of 20: 6 passing runs now are chance (p 0.066), 10 are news (p 0.016)."""
    base = history({"a": [FAIL] * 8 + [PASS] * 12})
    j = judged(compare(results({"a": [PASS] * runs}), base), "a")
    assert (j.judgement is Judgement.IMPROVED) is improved


def test_a_case_passing_every_run_since_it_changed_on_main_is_said_passing() -> None:
    """38 failing runs then 2 passing (a 40-run window): the change is clear (LR 15.9), and two
    runs since, none failing, are "passing" — below half of them failing."""
    from ci_eval.gate import baseline as baseline_store

    main = None
    for i, run in enumerate([FAIL] * 38 + [PASS, PASS]):
        now = results({"a": [run], "b": [PASS]}, started=f"t{i}")
        main, _ = baseline_store.update(main, now, commit=f"commit{i}", window=40)
    assert main is not None
    case = judged(
        compare(results({"a": [PASS], "b": [PASS]}), main, GateSettings(min_history=2)), "a"
    )
    assert case.method == "history since it changed on main (passing since commit38)"


def _suite_counted(now: list[float], first: int, confirm: int) -> tuple[int, int]:
    """(failed, runs) the suite-wide test counts of case ``a`` (main fails it 4 of 20, the
    bar so low that nothing is a regression) beside a calm case."""
    base = history({"a": [FAIL] * 4 + [PASS] * 16, "b": [PASS] * 20})
    res = results({"a": now, "b": [PASS]})
    res.settings.num_runs, res.settings.confirm_runs = first, confirm
    suite = compare(res, base, GateSettings(significance=1e-12), confirm=confirm).suite
    assert suite is not None
    return suite.failed - 0, suite.runs - 1  # less b's one passing run


def test_the_suite_test_counts_every_rerun_of_a_case_that_failed_all_its_first_runs() -> None:
    assert _suite_counted([FAIL] * 4, first=2, confirm=4) == (4, 4)  # 2 first + 2 reruns


def test_reruns_beyond_the_rules_count_are_counted_not_taken_as_cut_short() -> None:
    assert _suite_counted([FAIL] * 5, first=2, confirm=4) == (5, 5)


def test_a_new_case_names_only_the_metrics_it_fails() -> None:
    from ci_eval.model.results import CaseMetric

    now = results({"new": [FAIL] * 3, "a": [PASS]})
    case = now.sets[0].cases[0]
    case.metrics.append(CaseMetric("other", "PASSED", 1.0, 1.0, runs=[1.0] * 3))
    j = judged(compare(now, history({"a": [PASS] * 5}), confirm=3), "new")
    assert j.judgement is Judgement.REGRESSION and j.metrics == ["m"]


@pytest.mark.parametrize(
    ("control_runs", "known"),
    [([PASS], False), ([FAIL, FAIL, FAIL] + [PASS] * 5, False), ([FAIL] * 4 + [PASS] * 4, True)],
)
def test_the_control_makes_a_known_failure_only_at_half_its_runs(
    control_runs: list[float], known: bool
) -> None:
    base, now = _pr_failing(0, [FAIL, FAIL, FAIL])
    j = judged(compare(now, base, control=results({"a": control_runs})), "a")
    assert (j.judgement is Judgement.KNOWN_FAILURE) is known


def test_the_control_clears_the_regression_of_only_the_case_it_fails() -> None:
    base = history({"a": [PASS] * 20, "b": [PASS] * 20})
    now = results({"a": [FAIL] * 3, "b": [FAIL] * 3})
    comparison = compare(now, base, control=results({"a": [FAIL, FAIL], "b": [PASS, PASS]}))
    assert judged(comparison, "a").judgement is Judgement.KNOWN_FAILURE
    assert judged(comparison, "b").judgement is Judgement.REGRESSION
    assert {c.case_id: c.regressed for c in comparison.changes} == {"a": False, "b": True}


@pytest.mark.parametrize(("history_fails", "rerun"), [(4, True), (5, False), (10, False)])
def test_a_case_main_fails_more_than_a_fifth_of_its_runs_is_not_rerun(
    history_fails: int, rerun: bool
) -> None:
    base, now = _pr_failing(history_fails, [FAIL, FAIL])
    comparison = compare(now, base, GateSettings(significance=1e-12))
    assert (confirm.to_confirm(comparison, 4) == [("s", "a")]) is rerun


def test_the_verdict_counts_each_kind_of_item_apart() -> None:
    from ci_eval.model.comparison import Acceptance

    cases = {"r": [FAIL] * 3, "e": [PASS], "k": [FAIL, FAIL], "x": [FAIL] * 3}
    now = results(cases, errors=("e",))
    base = history({"r": [PASS] * 20, "e": [PASS] * 20, "k": [FAIL] * 20, "x": [PASS] * 20})
    now.comparison = compare(now, base, accepted=[Acceptance("s:x", "on purpose")])
    decision = verdict(now)
    assert decision.counts(True) == {Kind.REGRESSION: 1, Kind.ERROR: 1}
    assert decision.counts(False) == {Kind.KNOWN_FAILURE: 1, Kind.ACCEPTED: 1}


def test_the_comparison_records_mains_noise_to_four_decimals() -> None:
    main = _clustered_main(lambda push: {})
    comparison = compare(results({f"c{i}": [PASS] for i in range(21)}), main)
    for value in (comparison.rho, comparison.dispersion):
        assert value == round(value, 4) and value != round(value, 3)


def test_a_regression_marks_its_own_metric_changes_and_no_other_cases() -> None:
    base = history({"a": [PASS] * 20, "b": [PASS] * 20, "c": [PASS] * 20})
    comparison = compare(results({"a": [PASS], "b": [FAIL] * 3, "c": [PASS]}), base)
    assert judged(comparison, "b").judgement is Judgement.REGRESSION
    assert {c.case_id: c.regressed for c in comparison.changes} == {
        "a": False,
        "b": True,
        "c": False,
    }


def test_the_verdicts_index_of_cases_holds_every_case_past_a_judging_change() -> None:
    from ci_eval.model.comparison import ChangeKind, JudgingChange

    now = results({"a": [PASS], "k": [FAIL]})
    now.comparison = compare(now, history({"a": [PASS] * 5, "k": [FAIL] * 20}))
    now.comparison.judging = [
        JudgingChange(ChangeKind.THRESHOLD, "s", "*", "m", "s.json", "1", "0.5")
    ]
    now.fail_on = (*now.fail_on, "judging-changed")
    decision = verdict(now)
    assert any(i.kind is Kind.JUDGING for i in decision.blocking)
    assert decision.by_case()[("s", "k")].kind is Kind.KNOWN_FAILURE


def test_what_a_case_was_judged_by_is_recorded_apart_from_its_words() -> None:
    from ci_eval.model.comparison import Basis

    base = history({"long": [PASS] * 20, "short": [PASS] * 3})
    comparison = compare(results({"long": [PASS], "short": [PASS], "new": [FAIL] * 5}), base)
    assert {j.case_id: j.basis for j in comparison.cases} == {
        "long": Basis.HISTORY,
        "short": Basis.SHORT,
        "new": Basis.NEW,
    }
    assert [j.case_id for j in comparison.short_history] == ["short"]


@pytest.mark.parametrize(
    ("method", "basis"),
    [
        ("history", "history"),
        ("history since it changed on main (failing since 3f2a9c1)", "history"),
        ("short history: only 3 runs on main", "short history"),
        ("judged by the simple rule: no history", "short history"),  # ci-eval 0.1.0's first gate
        ("new case: no history on main", "new case"),
        ("an earlier ci-eval's rule", "other"),
    ],
)
def test_an_earlier_results_files_judgement_is_read_by_its_words(method: str, basis: str) -> None:
    from ci_eval.model.comparison import CaseJudgement
    from ci_eval.model.results_file import adapter

    data = {"set_id": "s", "case_id": "c", "judgement": "unchanged", "history_runs": 1}
    data |= {"history_failed": 0, "runs_now": 1, "failed_now": 0, "method": method}
    assert adapter(CaseJudgement).validate_python(data).basis == basis


def test_a_case_that_failed_only_some_runs_is_no_confirmed_break() -> None:
    base, now = _pr_failing(0, [FAIL, PASS, PASS, PASS, PASS])
    j = judged(compare(now, base, confirm=3), "a")
    assert j.judgement is not Judgement.REGRESSION and j.adjusted is not None and j.adjusted > 0.025


def test_a_break_at_exactly_the_level_is_the_tests_not_the_confirmations() -> None:
    base, now = _pr_failing(0, [FAIL, FAIL, FAIL])
    p = judged(compare(now, base, GateSettings(significance=1.0), confirm=3), "a").p_value
    j = judged(compare(now, base, GateSettings(significance=2 * p), confirm=3), "a")
    assert j.judgement is Judgement.REGRESSION and j.adjusted == p
    assert "failed all" not in j.method  # named by the per-case test, at its level


@pytest.mark.parametrize(("runs", "reruns", "target"), [(1, 3, 4), (2, 2, 4), (1, 1, 2), (3, 9, 5)])
def test_the_confirming_runs_are_the_runs_and_reruns_between_two_and_five(
    runs: int, reruns: int, target: int
) -> None:
    assert confirm.target(runs, reruns) == target


def test_the_verdict_shows_every_icon_its_items_have() -> None:
    from ci_eval.gate.items import PASSED_ICON, QUIET_ICON, SKIPPED_ICON

    now = results({"r": [FAIL] * 3})
    now.comparison = compare(now, history({"r": [PASS] * 20}))
    decision = verdict(now)
    item_icons = {i.icon for i in decision.blocking}
    assert (
        item_icons
        and decision.icons() == {decision.icon, PASSED_ICON, QUIET_ICON, SKIPPED_ICON} | item_icons
    )


def _regressed(*ids: str) -> str:
    """The verdict line of cases that passed 20 runs on main and failed 3 of 3 now."""
    now = results({c: [FAIL] * 3 for c in ids})
    now.comparison = compare(now, history({c: [PASS] * 20 for c in ids}))
    return verdict(now).line


def test_the_verdict_line_names_fewer_case_ids_whole_before_it_cuts_one() -> None:
    """Three 62-character ids and a notice of 65: the three do not fit whole in 200
    characters; the first is named whole and the others counted, none cut."""
    ids = [f"{chr(97 + i)}{'_' * 58}{i}" for i in range(3)]
    now = results({c: [FAIL] * 3 for c in ids})
    now.comparison = compare(now, history({c: [PASS] * 20 for c in ids}))
    now.settings.stopped = "the first cases failed alike, so no more cases started " + "w" * 10
    line = verdict(now).line
    assert len(line) <= 200 and "…" not in line
    assert f"3 regressions (s:{ids[0]} +2 more)" in line


def test_ids_that_fill_the_line_to_200_characters_are_named_whole() -> None:
    line = _regressed("a" * 82, "b" * 83)
    assert line == f"gate failed: 2 regressions (s:{'a' * 82}, s:{'b' * 83})"
    assert len(line) == 200


def test_one_character_past_200_names_one_whole_id_fewer() -> None:
    line = _regressed("a" * 82, "b" * 84)
    assert line == f"gate failed: 2 regressions (s:{'a' * 82} +1 more)"


def test_the_runs_verdict_names_a_long_case_id_whole(tmp_path: Path) -> None:
    """Through the CLI: a 73-character set:id, past the 40 an id was once cut to in the middle."""
    long_id = "momo_ledger_balance_after_refund_rounding_accuracy_boundary"
    evals = tmp_path / "weather.evalset.json"
    evals.write_text(
        (SAMPLES / "evals/weather_basic.evalset.json")
        .read_text()
        .replace('"berlin_expected_to_fail"', f'"{long_id}"')
    )
    agent = f"{sys.executable} {SAMPLES / 'agents/weather_agent/command_agent.py'}"
    done = run_cli("run", str(evals), "--agent", "command", "--agent-command", agent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"gate failed: 1 failed case (weather_basic:{long_id});" in done.stdout.splitlines()[-1]


def test_an_id_too_long_for_the_line_is_cut_at_its_end() -> None:
    case = "momo_ledger_" + "x" * 200 + "_accuracy_boundary"
    line = _regressed(case)
    assert line == f"gate failed: 1 regression (s:{case[:37]}…)"  # 40 characters with "s:"


# --- confirmed breaks that carry a suite-wide drop are named (issue #50) ----------------------


def _steady(*names: str) -> Callable[[int], dict[str, list[float]]]:
    return lambda push: {n: [1.0] * 6 for n in names}


CALM = {f"c{i}": [1.0] for i in range(21)}


def test_confirmed_breaks_the_family_leaves_unnamed_are_named_when_they_carry_the_drop() -> None:
    """Main's jobs' runs fail together (ρ > 0), so a clean case failing all 3 runs is not a
    confirmed break alone (p ≈ 0.005 against the bar α/2/n); two of them make a suite-wide
    drop, and without them the rest is main's usual: they are the drop, and are named."""
    main = _clustered_main(_steady("x", "y"))
    comparison = compare(results({**CALM, "x": [FAIL] * 3, "y": [FAIL] * 3}), main, confirm=3)
    assert comparison.rho > 0
    for case in ("x", "y"):
        j = judged(comparison, case)
        assert j.judgement is Judgement.REGRESSION
        assert j.method.endswith("failed all 3 runs, and carries the suite-wide drop")
    assert not comparison.suite.regressed
    line = verdict(results_with(comparison, {**CALM, "x": [FAIL] * 3, "y": [FAIL] * 3})).line
    assert line.startswith("gate failed: 2 regressions (s:x, s:y)")


def test_one_confirmed_break_that_makes_no_suite_wide_drop_stays_unnamed() -> None:
    main = _clustered_main(_steady("x", "y"))
    comparison = compare(results({**CALM, "x": [FAIL] * 3, "y": [PASS]}), main, confirm=3)
    assert not comparison.suite.regressed
    assert judged(comparison, "x").judgement is Judgement.NOT_SIGNIFICANT


def test_a_case_main_failed_once_carries_no_drop_though_it_fails_every_run() -> None:
    main = _clustered_main(
        lambda push: {"x": [FAIL if push == 6 else PASS] + [PASS] * 5, "y": [PASS] * 6}
    )
    comparison = compare(results({**CALM, "x": [FAIL] * 3, "y": [FAIL] * 3}), main, confirm=3)
    assert judged(comparison, "x").history_failed == 1
    assert judged(comparison, "x").judgement is Judgement.NOT_SIGNIFICANT
    assert judged(comparison, "y").judgement is Judgement.REGRESSION


def test_fewer_failing_runs_than_confirm_carry_no_drop() -> None:
    main = _clustered_main(_steady("x", "y"))
    comparison = compare(results({**CALM, "x": [FAIL] * 3, "y": [FAIL] * 3}), main, confirm=4)
    assert comparison.suite.regressed
    assert not comparison.judged(Judgement.REGRESSION)


def test_a_drop_broad_beyond_its_confirmed_breaks_names_none_of_them() -> None:
    """Without the two breaks, 12 of 21 calm cases failing is still a drop: a broad one (it
    may be the provider's day), so the breaks are not said to be it."""
    main = _clustered_main(_steady("x", "y"))
    broad = {f"c{i}": [FAIL if i < 12 else PASS] for i in range(21)}
    comparison = compare(results({**broad, "x": [FAIL] * 3, "y": [FAIL] * 3}), main, confirm=3)
    assert comparison.suite.regressed
    assert not comparison.judged(Judgement.REGRESSION)
