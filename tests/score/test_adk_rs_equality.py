"""adk-rs compares a tool call's args as ``serde_json::Value``s, not as Python values: ``1`` and
``1.0`` differ, ``true`` is not ``1``, objects are equal whatever their key order, arrays in
order. ADK's metrics keep Python's ``==`` (``1 == 1.0 == True``).

adk-rs: skundu42/adk-rs ``adk-rs-eval/src/metrics.rs`` at 433b5668 (``TrajectoryMatch::evaluate``:
``ex.name == ac.name && ex.args == ac.args``) with ``ToolUse.args: serde_json::Value``
(``adk-rs-eval/src/set.rs``, ``#[serde(default)]``: a missing ``args`` is ``Null``).
serde_json: serde-rs/json at 827a315b, ``src/number.rs`` (``impl PartialEq for N``: PosInt,
NegInt and Float are equal only to their own variant) and ``src/de.rs`` (``parse_integer``:
an integer literal is u64 when >= 0, i64 when negative, f64 outside both ranges)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.adk import tool_trajectory as adk_tool_trajectory
from ci_eval.metrics.adk_rs import serde_json_equal, tool_trajectory
from ci_eval.metrics.base import ScoreContext
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec
from tests.helpers import load, run_replay


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (1, 1.0, False),  # PosInt vs Float: different variants
        (-1, -1.0, False),  # NegInt vs Float
        (1.5, 1.5, True),
        (0.0, -0.0, True),  # f64's ==
        (2**63, 2**63, True),  # u64
        (2**64, 1.8446744073709552e19, True),  # past u64 serde_json reads an integer as f64
        (True, 1, False),  # a Bool is never a Number
        (False, 0, False),
        (True, True, True),
        (None, {}, False),
        (None, None, True),
        ("1", 1, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # Map: by key, whatever the order
        ({"a": 1}, {"a": 1, "b": None}, False),
        ([1, 2], [2, 1], False),  # arrays in order
        ({"x": [1, {"y": True}]}, {"x": [1, {"y": True}]}, True),
        ({"x": [1, {"y": True}]}, {"x": [1, {"y": 1}]}, False),  # nested, too
        ({"x": [1.0]}, {"x": [1]}, False),
    ],
)
def test_args_compare_as_serde_json_values(left: Any, right: Any, equal: bool) -> None:
    assert serde_json_equal(left, right) is equal
    assert serde_json_equal(right, left) is equal


def _inv(args: dict[str, Any]) -> Invocation:
    return Invocation(
        user_content=Content(role="user", parts=[Part(text="q")]),
        final_response=Content(role="model", parts=[Part(text="a")]),
        intermediate_data=IntermediateData(tool_uses=[FunctionCall(name="f", args=args)]),
    )


@pytest.mark.parametrize(
    ("expected", "actual"),
    [({"n": 1}, {"n": 1.0}), ({"on": True}, {"on": 1}), ({"ids": [1, 2]}, {"ids": [2, 1]})],
)
def test_adk_rs_trajectory_does_not_match_a_call_whose_args_differ_as_json(
    expected: dict[str, Any], actual: dict[str, Any]
) -> None:
    score, per, _ = tool_trajectory(
        [_inv(expected)], [_inv(actual)], MetricSpec("tool_trajectory_avg_score"), ScoreContext()
    )
    assert (score, per) == (0.0, [0.0])


def test_adk_rs_trajectory_matches_args_whose_keys_are_in_another_order() -> None:
    score, _, _ = tool_trajectory(
        [_inv({"a": 1, "b": 2.5})],
        [_inv({"b": 2.5, "a": 1})],
        MetricSpec("tool_trajectory_avg_score"),
        ScoreContext(),
    )
    assert score == 1.0


@pytest.mark.parametrize("match_type", ["EXACT", "ADK_RS"])
def test_adks_trajectory_keeps_pythons_equality(match_type: str) -> None:
    """google-adk 2.13 ``evaluation/trajectory_evaluator.py`` compares ``FunctionCall.args``
    dicts with Python's ``==``; the ``ADK_RS`` match type is adk-rs's fraction on ADK's
    metric, its args compared as ADK compares them."""
    score, _, _ = adk_tool_trajectory(
        [_inv({"n": 1, "on": True})],
        [_inv({"n": 1.0, "on": 1})],
        MetricSpec("tool_trajectory_avg_score", 1.0, {"match_type": match_type}),
        ScoreContext(),
    )
    assert score == 1.0


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _turn(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_content": _text("user", "Two tickets?"),
        "final_response": _text("model", "Booked"),
        "intermediate_data": {"tool_uses": [{"name": "book", "args": args}]},
    }


def _files(folder: Path, set_key: str) -> None:
    evalset = {set_key: "rs-set", "eval_cases": [{"id": "book", "conversation": [_turn({"n": 2})]}]}
    if set_key == "eval_set_id":
        evalset["eval_cases"][0]["eval_id"] = evalset["eval_cases"][0].pop("id")
    (folder / "rs.evalset.json").write_text(json.dumps(evalset))
    recording = {
        "eval_set_result_id": "r1",
        "eval_set_id": "rs-set",
        "creation_timestamp": 1.0,
        "eval_case_results": [
            {
                "eval_set_id": "rs-set",
                "eval_id": "book",
                "eval_metric_result_per_invocation": [{"actual_invocation": _turn({"n": 2.0})}],
            }
        ],
    }
    (folder / "recorded.json").write_text(json.dumps(recording))


def test_an_adk_rs_file_keeps_its_integers_and_floats_apart(tmp_path: Path) -> None:
    (tmp_path / "rs.evalset.json").write_text(
        '{"id": "s", "eval_cases": [{"id": "c", "conversation": [{"user_content": '
        '{"role": "user", "parts": [{"text": "q"}]}, "intermediate_data": {"tool_uses": '
        '[{"name": "f", "args": {"i": 1, "f": 1.0, "b": true}}]}}]}]}'
    )
    [inv] = load(tmp_path / "rs.evalset.json").eval_set.eval_cases[0].invocations()
    [call] = inv.tool_calls()
    assert call.args is not None
    assert [type(call.args[k]) for k in ("i", "f", "b")] == [int, float, bool]


def _trajectory(folder: Path) -> tuple[float, str]:
    results = json.loads((folder / "results.json").read_text())
    [case] = results["sets"][0]["cases"]
    metric = next(m for m in case["metrics"] if m["name"] == "tool_trajectory_avg_score")
    return metric["score"], metric["status"]


def test_an_adk_rs_run_fails_a_call_with_2_0_for_2_and_adk_passes_it(tmp_path: Path) -> None:
    _files(tmp_path, "id")
    run_replay("rs.evalset.json", "--results", "results.json", replay="recorded.json", cwd=tmp_path)
    assert _trajectory(tmp_path) == (0.0, "FAILED")

    _files(tmp_path, "eval_set_id")  # the same files in ADK's shape: ADK's metric
    run_replay("rs.evalset.json", "--results", "results.json", replay="recorded.json", cwd=tmp_path)
    assert _trajectory(tmp_path) == (1.0, "PASSED")
