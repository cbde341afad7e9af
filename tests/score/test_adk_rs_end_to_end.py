"""`ci-eval run` on an adk-rs eval set scores it as adk-rs does: its metrics and defaults, and a
two-turn case whose second turn falls short fails, though the mean reaches the threshold. adk-rs's
current files have ADK's shape: the ``dialect`` setting says they are adk-rs's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import run_replay


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _turn(user: str, answer: str | None, calls: list[str]) -> dict[str, Any]:
    turn: dict[str, Any] = {
        "user_content": _text("user", user),
        "intermediate_data": {
            "tool_uses": [{"name": c, "args": {}} for c in calls],
            "intermediate_responses": [["weather_agent", [{"text": "checking"}]]],
        },
    }
    if answer is not None:
        turn["final_response"] = _text("model", answer)
    return turn


def _files(folder: Path, set_key: str = "id", case_key: str = "id") -> None:
    """The eval set (adk-rs's older ``id`` keys, or ADK's as adk-rs writes them now) and the
    recorded run: a two-turn case at [1.0, 0.714] and a case with no response expected."""
    evalset = {
        set_key: "rs-set",
        "eval_cases": [
            {
                case_key: "two_turns",
                "conversation": [
                    _turn("Paris?", "It is sunny", ["get_weather"]),
                    _turn("Berlin?", "Berlin is cloudy with light rain today", ["get_weather"]),
                ],
            },
            {case_key: "no_answer_expected", "conversation": [_turn("Hi", None, [])]},
        ],
    }
    (folder / "rs.evalset.json").write_text(json.dumps(evalset))
    actual = {
        "two_turns": [
            _turn("Paris?", "It is sunny", ["get_weather"]),
            _turn("Berlin?", "Berlin is cloudy with light showers", ["get_weather"]),
        ],
        "no_answer_expected": [_turn("Hi", "Hello!", [])],
    }
    recording = {
        "eval_set_result_id": "r1",
        "eval_set_id": "rs-set",
        "creation_timestamp": 1.0,
        "eval_case_results": [
            {
                "eval_set_id": "rs-set",
                "eval_id": case,
                "eval_metric_result_per_invocation": [{"actual_invocation": t} for t in turns],
            }
            for case, turns in actual.items()
        ],
    }
    (folder / "recorded.json").write_text(json.dumps(recording))


def _two_turns(folder: Path) -> dict[str, Any]:
    results = json.loads((folder / "results.json").read_text())
    [eval_set] = results["sets"]
    case = next(c for c in eval_set["cases"] if c["eval_id"] == "two_turns")
    return {"dialect": eval_set["dialect"], "status": case["status"]}


def test_an_adk_rs_set_fails_a_case_with_one_short_turn(tmp_path: Path) -> None:
    _files(tmp_path)

    proc = run_replay(
        "rs.evalset.json", "--results", "results.json", replay="recorded.json", cwd=tmp_path
    )

    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    [eval_set] = results["sets"]
    assert eval_set["dialect"] == "adk-rs"
    cases = {c["eval_id"]: c for c in eval_set["cases"]}
    metrics = {m["name"]: m for m in cases["two_turns"]["metrics"]}
    assert metrics["final_response_match_v1"]["score"] == (1 + 5 / 7) / 2  # 0.857 ≥ 0.8 ...
    assert metrics["final_response_match_v1"]["status"] == "FAILED"  # ... the 0.714 turn fails
    assert metrics["tool_trajectory_avg_score"]["status"] == "PASSED"
    # the reviewer reads why a mean above the threshold failed
    assert (
        "final_response_match_v1 0.857 > 0.8 (turn 2 scored 0.714 < 0.8; adk-rs fails the "
        "metric when any turn does)"
    ) in proc.stdout
    assert cases["two_turns"]["status"] == "FAILED"
    quiet = {m["name"]: m for m in cases["no_answer_expected"]["metrics"]}
    # no final_response expected: adk-rs scores 1.0 (nothing to find) ...
    assert quiet["final_response_match_v1"]["score"] == 1.0
    # ... and no tool calls on either side 0 / max(0, 0, 1) = 0.0, which fails at 1.0 in adk-rs
    assert (quiet["tool_trajectory_avg_score"]["score"], cases["no_answer_expected"]["status"]) == (
        0.0,
        "FAILED",
    )


def test_adk_rs_files_in_adks_shape_score_as_adk_rs_with_the_dialect_setting(
    tmp_path: Path,
) -> None:
    _files(tmp_path, set_key="eval_set_id", case_key="eval_id")
    args = ("rs.evalset.json", "--results", "results.json", "--fail-on", "error")

    run_replay(*args, replay="recorded.json", cwd=tmp_path)
    assert _two_turns(tmp_path) == {"dialect": "adk", "status": "PASSED"}  # ADK's own metrics

    run_replay(*args, "--dialect", "adk-rs", replay="recorded.json", cwd=tmp_path)
    assert _two_turns(tmp_path) == {"dialect": "adk-rs", "status": "FAILED"}

    (tmp_path / "ci-eval.toml").write_text('[run]\ndialect = "adk-rs"\n')
    run_replay(*args, replay="recorded.json", cwd=tmp_path)
    assert _two_turns(tmp_path) == {"dialect": "adk-rs", "status": "FAILED"}


def test_a_dialect_ci_eval_does_not_know_is_a_usage_error(tmp_path: Path) -> None:
    _files(tmp_path)
    proc = run_replay(
        "rs.evalset.json", "--dialect", "adk-go", replay="recorded.json", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "--dialect 'adk-go': choose one of adk-rs" in proc.stderr
