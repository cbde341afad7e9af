"""Replaying an ADK recording whose metrics were scored against other thresholds than the run
applies says so, once per eval set and metric: the file, the metric, the threshold recorded and
now, and how many cases the same recorded score passes or fails now that it did not then, so
that a status flip is not taken for the agent's. Grounded on a real `adk eval` recording
(google-adk 2.13, ../shared/adk-reference: response_match_score at 0.8, Berlin's 0.25)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors import recorded
from tests.conftest import SHARED
from tests.helpers import run_replay

REFERENCE = SHARED / "adk-reference"
RESULT = "weather_basic.evalset_result.json"


@pytest.fixture
def adk_run(tmp_path: Path) -> Path:
    """The eval set and a copy of ADK 2.13's recording of it (`adk eval`'s own file)."""
    if not REFERENCE.is_dir():
        pytest.skip("../shared/adk-reference is not here")
    for name in ("weather_basic.evalset.json", RESULT):
        (tmp_path / name).write_bytes((REFERENCE / name).read_bytes())
    return tmp_path


def _configure(folder: Path, **criteria: float) -> None:
    """The eval set's thresholds today (its test_config.json)."""
    thresholds = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8, **criteria}
    (folder / "test_config.json").write_text(json.dumps({"criteria": thresholds}), "utf-8")


def _warnings(folder: Path, *args: str, replay: str = RESULT) -> list[str]:
    proc = run_replay("weather_basic.evalset.json", *args, replay=replay, cwd=folder)
    return [line for line in proc.stderr.splitlines() if line.startswith("ci-eval: warning:")]


def _recorded_threshold(file: Path, metric: str, threshold: float) -> None:
    """The recording as ADK writes it when the metric was configured at ``threshold``: the
    deprecated field and the criterion's alike (eval_metrics.py, EvalMetricResult)."""
    data = json.loads(file.read_text("utf-8"))
    for case in data["eval_case_results"]:
        for result in case["overall_eval_metric_results"] + [
            m for p in case["eval_metric_result_per_invocation"] for m in p["eval_metric_results"]
        ]:
            if result["metric_name"] == metric:
                result["threshold"] = result["criterion"]["threshold"] = threshold
    file.write_text(json.dumps(data), "utf-8")


def test_a_threshold_lowered_since_the_recording_names_the_cases_that_pass_now(
    adk_run: Path,
) -> None:
    _configure(adk_run, response_match_score=0.2)
    assert _warnings(adk_run) == [
        "ci-eval: warning: weather_basic.evalset_result.json: response_match_score's "
        "threshold was 0.8 when recorded, 0.2 now: 1 case passes it now that failed it then"
    ]  # Berlin's recorded 0.25


def test_a_threshold_raised_since_the_recording_names_the_cases_that_fail_now(
    adk_run: Path,
) -> None:
    _recorded_threshold(adk_run / RESULT, "response_match_score", 0.2)
    assert _warnings(adk_run) == [  # configured at ADK's default, 0.8, today
        "ci-eval: warning: weather_basic.evalset_result.json: response_match_score's "
        "threshold was 0.2 when recorded, 0.8 now: 1 case fails it now that passed it then"
    ]


def test_a_changed_threshold_that_flips_no_status_is_said_all_the_same(adk_run: Path) -> None:
    _configure(adk_run, response_match_score=0.9)  # 1.0, 1.0 and 0.25 recorded
    assert _warnings(adk_run) == [
        "ci-eval: warning: weather_basic.evalset_result.json: response_match_score's "
        "threshold was 0.8 when recorded, 0.9 now: no case's status on it changes"
    ]


def test_the_same_thresholds_say_nothing(adk_run: Path) -> None:
    _configure(adk_run)
    assert _warnings(adk_run) == []


def test_it_is_said_once_per_eval_set_and_metric_naming_the_other_files(adk_run: Path) -> None:
    (adk_run / "history").mkdir()
    for n in (1, 2):
        (adk_run / "history" / f"run{n}.evalset_result.json").write_bytes(
            (adk_run / RESULT).read_bytes()
        )
    _configure(adk_run, response_match_score=0.2)
    [said] = _warnings(adk_run, "--replay-pick", "all", replay="history")
    assert said == (
        "ci-eval: warning: history/run1.evalset_result.json (and 1 other file): "
        "response_match_score's threshold was 0.8 when recorded, 0.2 now: 1 case passes it now "
        "that failed it then"
    )


def _result(*metrics: dict[str, Any]) -> dict[str, Any]:
    return {"eval_id": "c", "overall_eval_metric_results": list(metrics)}


def test_the_recorded_threshold_is_the_criterions_before_the_deprecated_field() -> None:
    """google-adk 2.13 ``evaluation/eval_metrics.py``, ``_get_metric_threshold``: the
    criterion's threshold, else the metric's own."""
    both = {"metric_name": "m", "threshold": 0.5, "criterion": {"threshold": 0.7}, "score": 0.6}
    own = {"metric_name": "n", "threshold": 0.5, "criterion": None, "score": 0.6}
    none = {"metric_name": "tool_call_count_v1", "threshold": None, "score": 1.0}
    facts = recorded.of_adk_result(_result(both, own, none))
    assert facts.thresholds == {"m": 0.7, "n": 0.5}
    assert facts.scores == {"m": 0.6, "n": 0.6, "tool_call_count_v1": 1.0}


def test_unreadable_thresholds_and_scores_are_left_unknown() -> None:
    odd = {"metric_name": "m", "threshold": "0.8", "criterion": {"threshold": True}, "score": None}
    facts = recorded.of_adk_result(_result(odd, "not a result", {"threshold": 0.8}))
    assert (facts.thresholds, facts.scores) == ({}, {})
