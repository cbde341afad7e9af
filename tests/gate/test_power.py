"""What a run could have detected (ci_eval.gate.power): the model judges every way a broken
case's runs could go exactly as the gate does, and a passing verdict says it."""

from __future__ import annotations

import pytest

from ci_eval.gate import confirm
from ci_eval.gate.compare import compare
from ci_eval.gate.power import DEFAULT_TARGET, Target, detection, outcomes
from ci_eval.model.comparison import Judgement
from tests.report.scenarios import _c, _history, _results


def test_the_ways_a_case_can_go_add_up_to_one_and_rerun_only_after_all_failed() -> None:
    ways = outcomes(0.4, 3, 2, 0.0)
    assert sum(c for _, _, c in ways) == pytest.approx(1.0)
    assert [(k, r) for k, r, _ in ways] == [(0, 3), (1, 3), (2, 3), (3, 4), (4, 5), (5, 5)]
    assert dict(((k, r), c) for k, r, c in ways)[(5, 5)] == pytest.approx(0.4**5)


def _case_against_history(failed: int, runs: int, first: int):
    """40 cases that always passed on main (4 pushes × 3 runs); now one fails ``failed`` of
    its ``runs`` runs (the first ``first`` then reruns), the rest pass their first runs."""
    cases = [_c("s", f"c{i:02d}", f"q{i}", "tool", "a", wrong_tool="other") for i in range(40)]
    history = _history({c: [True] * 3 for c in cases}, 4)
    now = {c: [True] * first for c in cases[1:]}
    broken = [True] * (runs - failed) + [False] * failed
    if failed == runs or failed >= first:  # the first runs failed, then reruns until a pass
        broken = [False] * failed + [True] * (runs - failed)
    results = _results(now | {cases[0]: broken}, "2026-12-01T10:00:00+00:00")
    results.settings.num_runs, results.settings.confirm_runs = first, 4
    return results, history


@pytest.mark.parametrize("first", [1, 3])
def test_the_model_names_a_case_in_every_outcome_where_the_gate_does(first: int) -> None:
    """Each way a broken case's runs can go, through the real comparison: the model counts
    an outcome as caught exactly when the gate names the case."""
    results, history = _case_against_history(0, first, first)
    target = confirm.target(first, 4)
    base = compare(results, history, confirm=target, target=DEFAULT_TARGET)
    assert base.power is not None and base.power.cases == 40
    for failed, runs, _ in outcomes(0.4, first, max(0, 5 - first), 0.0):
        if not failed:
            continue
        results, history = _case_against_history(failed, runs, first)
        named = any(
            j.case_id == "c00" and j.judgement is Judgement.REGRESSION
            for j in compare(results, history, confirm=target, target=DEFAULT_TARGET).cases
        )
        assert named == _caught(base, failed, runs, first), (failed, runs)


def _caught(comparison, failed: int, runs: int, first: int) -> bool:
    """The model's predicate for one outcome, as ``detection`` applies it."""
    from ci_eval.gate import stats

    family = len([c for c in comparison.cases if c.basis is not None])
    mean, concentration = stats.predictive(0.0, _weighted_clean(), 0.0)
    p = stats.mixture_tail(failed, runs, mean, concentration, ((1.0, 0.0),))
    alpha = comparison.significance / 2
    return min(1.0, p * family) <= alpha or (failed == runs >= 5)


def _weighted_clean() -> float:
    from ci_eval.gate.history import CaseHistory, Cluster

    history = CaseHistory([Cluster(i, 3, 0) for i in range(4)])
    return sum(w * 3 for w in history.weights())


def test_more_runs_never_state_a_smaller_suite_wide_power() -> None:
    drops = []
    for first in (1, 3, 5):
        results, history = _case_against_history(0, first, first)
        power = compare(
            results, history, confirm=confirm.target(first, 4), target=DEFAULT_TARGET
        ).power
        assert power is not None and power.suite_drop is not None
        drops.append(power.suite_drop)
    assert drops == sorted(drops, reverse=True) and drops[0] > drops[-1]


def test_the_rerun_rounds_work_out_no_power() -> None:
    results, history = _case_against_history(0, 3, 3)
    assert compare(results, history, confirm=5).power is None


def test_a_sure_break_is_always_caught_and_no_break_never() -> None:
    model = (0.02, 25.0)
    args = ((1.0, 0.0),), 0.0, 40, 0.025, 5
    assert detection(model, True, 3, 2, *args, 1.0) == pytest.approx(1.0)
    assert detection(model, True, 3, 2, *args, 0.0) == pytest.approx(0.0, abs=1e-12)


def test_a_harder_target_is_caught_less_often() -> None:
    results, history = _case_against_history(0, 3, 3)
    easy = compare(results, history, confirm=5, target=Target(0.95, 0.2)).power
    hard = compare(results, history, confirm=5, target=Target(0.95, 0.8)).power
    assert easy is not None and hard is not None
    assert (easy.probability or 0) > (hard.probability or 0)


def test_a_passing_verdict_says_what_it_could_have_detected() -> None:
    from ci_eval.gate.verdict import verdict
    from ci_eval.report.markdown import render_summary
    from ci_eval.report.terminal import summary_lines

    results, history = _case_against_history(0, 3, 3)
    results.comparison = compare(results, history, confirm=5, target=DEFAULT_TARGET)
    v = verdict(results)
    assert v.passed and v.power.startswith("what this run could detect: a case passing ≥ 95%")
    assert "the suite-wide test would catch a " in v.power
    assert summary_lines(results)[-2] == v.power  # just above the verdict's line
    assert "**Power:** a case passing ≥ 95%" in render_summary(results)
    assert len(v.line) <= 200


def test_a_failing_verdict_does_not_say_its_power() -> None:
    from ci_eval.gate.verdict import verdict

    results, history = _case_against_history(5, 5, 3)
    results.comparison = compare(results, history, confirm=5, target=DEFAULT_TARGET)
    v = verdict(results)
    assert not v.passed and v.power == ""
