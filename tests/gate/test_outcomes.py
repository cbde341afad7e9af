"""A case's per-run outcomes (did each run pass) are read from its metrics' per-run scores and
verdicts: any gating metric failing a run fails it, a run no metric scored has no outcome. A
one-run case is read directly; that reading must be the general rule's, for every case."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ci_eval.gate.history import case_metric_fails, run_fails
from ci_eval.gate.items import outcomes
from ci_eval.metrics.base import CaseMetric
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord

THRESHOLDS = [0.0, 0.5, 0.8, 1.0]
# scores at the thresholds too: a score equal to its threshold passes
SCORES = st.one_of(st.sampled_from([None, *THRESHOLDS, 0.3, 0.9]), st.floats(0, 1))


@st.composite
def metrics(draw: st.DrawFn, runs: int) -> CaseMetric:
    scores = draw(st.lists(SCORES, min_size=runs, max_size=runs))
    verdicts = st.lists(st.one_of(st.none(), st.booleans()), min_size=runs, max_size=runs)
    own = draw(
        st.one_of(
            st.just([]),
            st.just([]),
            verdicts,  # mostly none: each verdict is the score's
        )
    )
    return CaseMetric(
        draw(st.sampled_from(["a", "b", "c"])),
        Status.FAILED,
        None,
        draw(st.one_of(st.none(), st.sampled_from(THRESHOLDS))),
        informational=draw(st.booleans()),
        runs=scores,
        run_fails=own,
    )


@st.composite
def cases(draw: st.DrawFn) -> CaseRecord:
    runs = draw(st.sampled_from([1, 1, 1, 2, 3]))  # one run: a large run's every case
    status = draw(st.sampled_from([Status.PASSED, Status.FAILED, Status.NOT_EVALUATED]))
    case = CaseRecord("c", metrics=draw(st.lists(metrics(runs), min_size=1, max_size=4)))
    case.scored_status = status
    return case


def general(case: CaseRecord) -> list[bool | None]:
    """The rule over any number of runs: per run, any gating metric failing it fails it."""
    gating = [m for m in case.metrics if not m.informational and m.threshold is not None and m.runs]
    fails = run_fails([case_metric_fails(m) for m in gating])
    return [None if fail is None else not fail for fail in fails]


@given(cases())
def test_outcomes_are_the_general_rules_for_every_case(case: CaseRecord) -> None:
    gating = [m for m in case.metrics if not m.informational and m.threshold is not None]
    if gating:
        assert outcomes(case) == general(case)


def test_a_run_one_gating_metric_fails_fails() -> None:
    case = CaseRecord(
        "c",
        metrics=[
            CaseMetric("a", Status.PASSED, 1.0, 0.8, runs=[1.0]),
            CaseMetric("b", Status.FAILED, 0.5, 0.8, runs=[0.5]),
            CaseMetric("t", Status.INFO, 0.1, None, informational=True, runs=[0.1]),
        ],
    )
    case.scored_status = Status.FAILED
    assert outcomes(case) == [False]


def test_a_score_at_its_threshold_passes() -> None:
    case = CaseRecord("c", metrics=[CaseMetric("a", Status.PASSED, 0.8, 0.8, runs=[0.8])])
    case.scored_status = Status.PASSED
    assert outcomes(case) == [True]


def test_a_run_no_gating_metric_scored_has_no_outcome() -> None:
    case = CaseRecord("c", metrics=[CaseMetric("a", Status.NOT_EVALUATED, None, 0.8, runs=[None])])
    case.scored_status = Status.NOT_EVALUATED
    assert outcomes(case) == [None]


def test_a_metrics_own_verdict_overrides_its_score() -> None:
    # adk-rs fails a metric whose mean reaches the threshold when one invocation fails
    case = CaseRecord(
        "c", metrics=[CaseMetric("a", Status.FAILED, 0.9, 0.8, runs=[0.9], run_fails=[True])]
    )
    case.scored_status = Status.FAILED
    assert outcomes(case) == [False]
