"""Replaying an ADK recording that holds the scores of ADK's LLM-judged metrics, with no judge
configured, scores those metrics as recorded instead of leaving them NOT_EVALUATED: the
recorded score against today's threshold, the reason naming the file, the details saying
``as_recorded``. With a judge configured they are judged as ever. Grounded on a real `adk
eval` recording (google-adk 2.13, ../shared/adk-reference) given the final_response_match_v2
results ADK writes beside the others (``evaluation/eval_metrics.py``, EvalMetricResult)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors import recorded
from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.judge_metrics import NO_JUDGE
from ci_eval.metrics.registry import not_computed_reason
from ci_eval.model import Content, Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.status import Status
from ci_eval.score.scorer import score_run
from tests.conftest import SHARED
from tests.helpers import run_replay

REFERENCE = SHARED / "adk-reference"
RESULT = "weather_basic.evalset_result.json"
JUDGED = "final_response_match_v2"
# what ADK's judge said of each case's turns, as the recording below holds it
VERDICTS = {"paris_weather": 1.0, "multi_turn_london_tokyo": 1.0, "berlin_expected_to_fail": 0.0}


def _judged(name: str, score: float | None, threshold: float = 0.8) -> dict[str, Any]:
    """An EvalMetricResult as google-adk 2.13 dumps it (every field, nulls too)."""
    return {
        "metric_name": name,
        "threshold": threshold,
        "criterion": {"threshold": threshold, "judge_model_options": {"num_samples": 5}},
        "custom_function_path": None,
        "score": score,
        "eval_status": 3 if score is None else 1 if score >= threshold else 2,
        "details": {"rubric_scores": None, "token_usage_details": None},
    }


@pytest.fixture
def adk_run(tmp_path: Path) -> Path:
    """The eval set, configured with the judged metric, and ADK 2.13's recording of it with
    the judge's scores: per invocation and per case."""
    if not REFERENCE.is_dir():
        pytest.skip("../shared/adk-reference is not here")
    (tmp_path / "weather_basic.evalset.json").write_bytes(
        (REFERENCE / "weather_basic.evalset.json").read_bytes()
    )
    data = json.loads((REFERENCE / RESULT).read_text("utf-8"))
    for case in data["eval_case_results"]:
        score = VERDICTS[case["eval_id"]]
        case["overall_eval_metric_results"].append(_judged(JUDGED, score))
        for turn in case["eval_metric_result_per_invocation"]:
            turn["eval_metric_results"].append(_judged(JUDGED, score))
    (tmp_path / RESULT).write_text(json.dumps(data), "utf-8")
    _configure(tmp_path, 0.5)
    return tmp_path


def _configure(folder: Path, threshold: float, metric: str = JUDGED) -> None:
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8, metric: threshold}
    (folder / "test_config.json").write_text(json.dumps({"criteria": criteria}), "utf-8")


def _metrics(folder: Path, name: str = JUDGED) -> dict[str, dict[str, Any]]:
    """Per case, the metric as the results file holds it, with its first run's."""
    proc = run_replay(
        "weather_basic.evalset.json", "--results", "r.json", replay=RESULT, cwd=folder
    )
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads((folder / "r.json").read_text("utf-8"))
    out = {}
    for case in data["sets"][0]["cases"]:
        [metric] = [m for m in case["metrics"] if m["name"] == name]
        [run] = [m for m in case["runs"][0]["metrics"] if m["name"] == name]
        out[case["eval_id"]] = {**metric, "run": run}
    return out


def test_without_a_judge_the_recorded_judge_scores_are_scored_as_recorded(adk_run: Path) -> None:
    metrics = _metrics(adk_run)
    assert {case: (m["score"], m["status"]) for case, m in metrics.items()} == {
        "paris_weather": (1.0, "PASSED"),
        "multi_turn_london_tokyo": (1.0, "PASSED"),
        "berlin_expected_to_fail": (0.0, "FAILED"),
    }
    paris = metrics["paris_weather"]
    assert paris["reason"] == f"as recorded in {RESULT} (no judge configured)"
    assert paris["run"]["details"] == {"as_recorded": True}
    assert paris["threshold"] == 0.5  # today's, not the recorded 0.8


def test_the_status_is_the_recorded_score_against_todays_threshold(adk_run: Path) -> None:
    data = json.loads((adk_run / RESULT).read_text("utf-8"))
    [paris] = [c for c in data["eval_case_results"] if c["eval_id"] == "paris_weather"]
    for result in [
        *paris["overall_eval_metric_results"],
        *paris["eval_metric_result_per_invocation"][0]["eval_metric_results"],
    ]:
        if result["metric_name"] == JUDGED:
            result.update(_judged(JUDGED, 0.6, threshold=0.5))  # PASSED when recorded
    (adk_run / RESULT).write_text(json.dumps(data), "utf-8")
    _configure(adk_run, 0.8)
    paris_now = _metrics(adk_run)["paris_weather"]
    assert (paris_now["score"], paris_now["status"]) == (0.6, "FAILED")


def test_a_recording_without_the_metrics_score_leaves_it_not_evaluated(adk_run: Path) -> None:
    (adk_run / RESULT).write_bytes((REFERENCE / RESULT).read_bytes())  # no judge's scores
    paris = _metrics(adk_run)["paris_weather"]
    assert (paris["status"], paris["reason"]) == ("NOT_EVALUATED", NO_JUDGE)


def test_a_metric_recorded_unscored_leaves_it_not_evaluated(adk_run: Path) -> None:
    """ADK records a metric it could not evaluate with no score (eval_status 3)."""
    data = json.loads((adk_run / RESULT).read_text("utf-8"))
    for case in data["eval_case_results"]:
        for result in [
            *case["overall_eval_metric_results"],
            *(
                m
                for t in case["eval_metric_result_per_invocation"]
                for m in t["eval_metric_results"]
            ),
        ]:
            if result["metric_name"] == JUDGED:
                result.update(_judged(JUDGED, None))
    (adk_run / RESULT).write_text(json.dumps(data), "utf-8")
    assert {m["status"] for m in _metrics(adk_run).values()} == {"NOT_EVALUATED"}


def _marked(*scores: float | None, case: float | None = None) -> list[Invocation]:
    """Replayed invocations as the replay connector gives them: each marked with what its
    recording scored (``recorded.marked``)."""
    invocations = [
        Invocation.model_validate({"user_content": {"parts": [{"text": f"q{n}"}]}})
        for n in range(len(scores))
    ]
    facts = recorded.Recorded(
        expected=None,
        score=None,
        file="h.json",
        scores={} if case is None else {JUDGED: case},
        per_invocation=[{} if s is None else {JUDGED: s} for s in scores],
    )
    return recorded.marked(invocations, facts)


class _InvalidJudge:
    """A judge that finds every answer invalid (final_response_match_v2's label)."""

    def __init__(self) -> None:
        self.asked = 0

    def ask(self, prompt: str, sample: int = 0) -> str:
        self.asked += 1
        return '{"reasoning": "no", "is_the_agent_response_valid": "invalid"}'


def test_with_a_judge_configured_the_metric_is_judged_as_ever() -> None:
    actual = _marked(1.0, case=1.0)
    expected = [
        Invocation.model_validate(
            {
                "user_content": {"parts": [{"text": "q0"}]},
                "final_response": {"parts": [{"text": "a"}]},
            }
        )
    ]
    for inv in actual:
        inv.final_response = expected[0].final_response
    judge = _InvalidJudge()
    [result] = score_run(
        [MetricSpec(JUDGED, 0.5)], "adk", expected, actual, ScoreContext(judge=judge)
    )
    assert judge.asked and (result.score, result.status) == (0.0, Status.FAILED)
    assert "as_recorded" not in result.details


def test_the_case_score_is_the_recorded_one_and_each_turn_keeps_its_own() -> None:
    """ADK's final_response_match_v2 (``evaluation/final_response_match_v2.py``,
    aggregate_invocation_results): the case's score is its judged turns' mean."""
    [result] = score_run(
        [MetricSpec(JUDGED, 0.5)], "adk", [], _marked(1.0, None, 0.0, case=0.5), ScoreContext()
    )
    assert (result.score, result.per_invocation, result.status) == (
        0.5,
        [1.0, None, 0.0],
        Status.PASSED,
    )


def test_a_case_score_that_is_no_mean_of_its_turns_stands_alone() -> None:
    """A rubric metric averages every rubric verdict, not its turns' means
    (``evaluation/rubric_based_evaluator.py``): the recorded case score is kept whole."""
    name = "rubric_based_final_response_quality_v1"
    invocations = _marked(0.0, 0.0, case=0.75)
    for inv in invocations:
        mark = inv.extensions[recorded.RECORDED_SCORES]
        inv.extensions[recorded.RECORDED_SCORES] = {
            **mark,
            "case": {name: mark["case"][JUDGED]},
            "invocation": {name: 0.5},
        }
    [result] = score_run([MetricSpec(name, 0.7)], "adk", [], invocations, ScoreContext())
    assert (result.score, result.per_invocation, result.status) == (0.75, [], Status.PASSED)


def test_a_metric_ci_eval_does_not_compute_is_scored_as_recorded_too() -> None:
    """safety_v1 needs Vertex AI's evaluation service: the recording's score is the only one."""
    assert not_computed_reason("safety_v1") is not None
    invocations = _marked(1.0, case=1.0)
    for inv in invocations:
        mark = inv.extensions[recorded.RECORDED_SCORES]
        inv.extensions[recorded.RECORDED_SCORES] = {
            **mark,
            "case": {"safety_v1": 1.0},
            "invocation": {"safety_v1": 1.0},
        }
    [result] = score_run([MetricSpec("safety_v1", 0.8)], "adk", [], invocations, ScoreContext())
    assert (result.status, result.details) == (Status.PASSED, {"as_recorded": True})


def test_a_metric_ci_eval_computes_is_computed_whatever_the_recording_says() -> None:
    """response_match_score needs no judge: the recorded 0.0 is not taken for it."""
    invocations = _marked(0.0, case=0.0)
    for inv in invocations:
        inv.final_response = Content.model_validate({"parts": [{"text": "Sunny in Paris."}]})
        inv.extensions[recorded.RECORDED_SCORES]["case"]["response_match_score"] = 0.0
    [result] = score_run(
        [MetricSpec("response_match_score", 0.8)], "adk", invocations, invocations, ScoreContext()
    )
    assert (result.score, result.status) == (1.0, Status.PASSED)
    assert "as_recorded" not in result.details
