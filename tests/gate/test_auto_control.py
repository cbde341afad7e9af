"""``--control auto``'s rules (ci_eval.gate.auto_control): a control only for a suite-wide drop
no case explains; the day's when the merge base's agent shows a drop at a looser bar than the
gate's; a sample blind to outcomes. The run itself: tests/run/test_control_auto.py."""

from __future__ import annotations

from ci_eval.gate import auto_control
from ci_eval.model.comparison import Comparison, Judgement, SuiteDrop


def _comparison(suite: SuiteDrop | None, regression: bool = False) -> Comparison:
    from ci_eval.gate.compare import compare
    from tests.gate.test_correlated_noise import pushes
    from tests.gate.test_gate import results

    now = results({"a": [0.0] * 5 if regression else [1.0] * 5})
    comparison = compare(now, pushes([{"a": [1.0] * 3}] * 7))
    comparison.suite = suite
    return comparison


def test_a_control_is_wanted_only_for_a_suite_wide_drop_no_case_explains() -> None:
    fired = SuiteDrop(30, 30, 8, 0.4, 0.001, regressed=True)
    quiet = SuiteDrop(30, 30, 1, 0.4, 0.3)
    assert auto_control.wanted(_comparison(fired))
    assert not auto_control.wanted(_comparison(quiet))
    assert not auto_control.wanted(_comparison(None))
    named = _comparison(fired, regression=True)
    assert named.judged(Judgement.REGRESSION) and not auto_control.wanted(named)


def test_the_control_calls_the_day_at_a_looser_bar_than_the_gates() -> None:
    assert auto_control.the_days(_comparison(SuiteDrop(30, 150, 20, 5.0, 0.09)))
    assert not auto_control.the_days(_comparison(SuiteDrop(30, 150, 6, 5.0, 0.11)))


def test_the_sample_is_blind_to_outcomes_and_the_same_for_the_same_ids() -> None:
    keys = [("s", f"c{i}") for i in range(100)]
    picked = auto_control.sample(keys)
    assert len(picked) == auto_control.SAMPLE
    assert picked == auto_control.sample(list(reversed(keys)))
    assert sorted(auto_control.sample(keys[:10])) == sorted(keys[:10])  # a small suite: all
    assert auto_control.runs(1) == auto_control.RUNS and auto_control.runs(9) == 9


def test_the_days_bar_is_inclusive_and_a_regressed_control_case_is_the_days_too() -> None:
    assert auto_control.the_days(_comparison(SuiteDrop(30, 150, 9, 5.0, auto_control.DAYS_P)))
    assert auto_control.the_days(_comparison(None, regression=True))
    assert not auto_control.the_days(_comparison(None))
