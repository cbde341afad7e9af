"""ci_eval.gate.judging: what a run changed of how its cases are judged, against the criteria
and rubrics main's baseline recorded — one change per option, before → after; nothing when
nothing changed; accepted by the [[accept]] entry that names its set or case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.gate import baseline as baseline_store
from ci_eval.gate.baseline_file import parse
from ci_eval.gate.judging import (
    VALUE_LIMIT,
    accept,
    case_changes,
    criteria,
    criterion_changes,
    rubric_digests,
)
from ci_eval.model.baseline import StoredCase
from ci_eval.model.comparison import Acceptance, ChangeKind, JudgingChange
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status
from ci_eval.results.file import CaseMetric, CaseRecord, RunRecord, RunResults, SetRecord


def _set(criterion: dict[str, Any], *cases: CaseRecord, threshold: float = 1.0) -> SetRecord:
    spec = MetricSpec("tool_trajectory_avg_score", threshold, criterion)
    config = MetricConfig([spec], "evals/test_config.json", "adk")
    return SetRecord("s", "evals/s.evalset.json", "adk", config, list(cases), [spec])


def _scored(case_id: str, rubrics: list[dict[str, Any]] | None = None) -> CaseRecord:
    metric = CaseMetric("tool_trajectory_avg_score", Status.PASSED, 1.0, 1.0, runs=[1.0])
    return CaseRecord(
        case_id,
        runs=[RunRecord(1, duration_s=0.1)],
        metrics=[metric],
        scored_status=Status.PASSED,
        rubrics=rubrics,
    )


def test_the_same_options_change_nothing() -> None:
    s = _set({"match_type": "EXACT"})
    assert criterion_changes(s, criteria(s)) == []


def test_each_changed_option_is_one_change_before_and_after() -> None:
    now = _set({"match_type": "ANY_ORDER", "ignore_args": True})
    [ignore, match] = criterion_changes(now, {"tool_trajectory_avg_score": {"match_type": "EXACT"}})
    assert match.text() == (
        "criterion: s (evals/test_config.json): tool_trajectory_avg_score match_type EXACT → "
        "ANY_ORDER"
    )
    assert (ignore.metric, ignore.before, ignore.after) == (
        "tool_trajectory_avg_score ignore_args",
        "(default)",
        "true",
    )


def test_nested_options_are_named_by_their_path() -> None:
    now = _set({"judge_model_options": {"num_samples": 5}})
    [change] = criterion_changes(
        now, {"tool_trajectory_avg_score": {"judge_model_options": {"num_samples": 1}}}
    )
    assert (change.metric, change.before, change.after) == (
        "tool_trajectory_avg_score judge_model_options.num_samples",
        "1",
        "5",
    )


def test_a_long_value_is_cut_and_says_how_much() -> None:
    rubric = "the answer names the city " * 20
    [change] = criterion_changes(_set({"rubric": rubric}), {"tool_trajectory_avg_score": {}})
    assert len(change.after) == VALUE_LIMIT and change.after.endswith("characters)")


def test_a_gating_metric_main_did_not_have_is_a_change() -> None:
    [change] = criterion_changes(_set({}), {"response_match_score": {}})
    assert (change.before, change.after) == ("not applied", "applied (threshold 1)")


def test_an_informational_metric_is_not_recorded() -> None:
    assert criteria(_set({}, threshold=None)) == {}  # type: ignore[arg-type]


def test_a_cases_own_rubrics_changed_are_said() -> None:
    was = _scored("c", [{"rubric_id": "r", "text": "polite"}])
    now = _scored("c", [{"rubric_id": "r", "text": "curt"}])
    recorded = rubric_digests(_set({}, was))
    [change] = case_changes(_set({}, now), now, StoredCase(), recorded)
    assert (change.kind, change.key, change.metric) == (ChangeKind.CRITERION, "s:c", "rubrics")
    assert case_changes(_set({}, was), was, StoredCase(), recorded) == []


def test_a_baseline_that_predates_rubrics_says_nothing_of_them() -> None:
    now = _scored("c", [{"rubric_id": "r", "text": "curt"}])
    assert case_changes(_set({}, now), now, StoredCase(), None) == []


def test_a_case_selection_keeps_the_rubrics_of_the_cases_it_did_not_run() -> None:
    jobs = iter(range(10, 60))

    def run(*cases: CaseRecord, **settings: Any) -> RunResults:
        started = f"2026-12-02T00:00:{next(jobs)}"  # one job each
        out = RunResults([_set({}, *cases)], "a", started, 1)
        out.settings = RunFacts(**settings)
        return out

    with_rubrics = _scored("b", [{"rubric_id": "r", "text": "polite"}])
    data, _ = baseline_store.update(None, run(_scored("a"), with_rubrics), "c1")
    data, _ = baseline_store.update(data, run(_scored("a"), cases=["s:a"]), "c2")
    assert set(data.sets["s"].rubrics) == {"b"}
    data, _ = baseline_store.update(data, run(_scored("a"), with_rubrics), "c3")
    data, _ = baseline_store.update(data, run(_scored("a")), "c4")  # b left the set
    assert data.sets["s"].rubrics == {}
    assert "rubrics" not in baseline_store.to_data(data)["sets"]["s"]  # not written


@pytest.mark.parametrize(
    ("pattern", "metrics", "accepted"),
    [
        ("s:*", [], True),
        ("s:*", ["tool_trajectory_avg_score"], True),
        ("s:*", ["response_match_score"], False),
        ("s:c", [], False),  # a case's entry does not accept its set's options
        ("other:*", [], False),
    ],
)
def test_a_set_wide_change_is_accepted_by_its_sets_pattern(
    pattern: str, metrics: list[str], accepted: bool
) -> None:
    change = JudgingChange(ChangeKind.CRITERION, "s", "*", "tool_trajectory_avg_score match_type")
    entry = Acceptance(pattern, "on purpose", metrics)
    accept([change], [entry])
    assert (change.accepted is not None, entry.used) == (accepted, accepted)


def test_a_baseline_with_a_bad_criteria_record_is_refused_with_its_place() -> None:
    text = '{"format": 3, "sets": {"s": {"cases": {}, "criteria": {"m": 1}}}, "pushes": []}'
    with pytest.raises(InputError) as caught:
        parse(text, "b.json")
    assert "$.sets.s.criteria" in str(caught.value)


OPTIONS = st.dictionaries(
    st.sampled_from(["match_type", "ignore_args", "threshold", "judge"]),
    st.one_of(st.booleans(), st.integers(), st.text(max_size=5), st.none()),
    max_size=4,
)


@given(was=OPTIONS, now=OPTIONS)
def test_a_change_is_listed_for_exactly_the_options_that_differ(
    was: dict[str, Any], now: dict[str, Any]
) -> None:
    changes = criterion_changes(_set(now), {"tool_trajectory_avg_score": was})
    named = {c.metric.split(" ", 1)[1] for c in changes}
    differ = {k for k in set(was) | set(now) if k not in was or k not in now or was[k] != now[k]}
    assert named == differ and len(changes) == len(differ)


def test_the_recorded_criteria_are_written_on_one_line_per_set(tmp_path: Path) -> None:
    s = _set({"match_type": "EXACT"}, _scored("a"))
    data, _ = baseline_store.update(None, RunResults([s], "a", "2026-12-02T00:00:00", 1), "c1")
    text = baseline_store.dumps(data)
    assert '      "criteria": {"tool_trajectory_avg_score": {"match_type": "EXACT"}},' in text
