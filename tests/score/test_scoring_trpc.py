"""trpc-agent-go parity: rescoring the recorded actual invocations of the corpus's result files
with their .metrics.json reproduces the scores trpc-agent-go recorded; and the criteria's rules,
case by case, as trpc-agent-go's evaluation/metric/criterion code states them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.trpc import trajectory_match
from ci_eval.metrics.trpc_criteria import Mismatch, json_match, text_match
from tests.conftest import CORPUS
from tests.helpers import run_replay

EXAMPLES = [
    "trpc-group-trpc-agent-go/examples/evaluation/" + name
    for name in (
        "caseaggregation",
        "claudecode",
        "jieba",
        "llm/caselevelrubric",
        "local",
        "rouge",
        "skill",
        "toolmock",
        "tooltrajectory",
    )
] + [
    "trpc-group-trpc-agent-go@5845d956-gen2-camelcase-genai/examples/evaluation/local",
    "trpc-group-trpc-agent-go@5fdb8201-gen1-snakecase/examples/evaluation/local",
]
DETERMINISTIC = {"tool_trajectory_avg_score", "final_response_avg_score"}
STATUS = {1: "passed", 2: "failed", 3: "not_evaluated"}


def _recorded(output: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for file in output.rglob("*.evalset_result.json"):
        data = json.loads(file.read_text())
        if isinstance(data, str):
            data = json.loads(data)
        for case in data.get("evalCaseResults") or data.get("eval_case_results") or []:
            for m in (
                case.get("overallEvalMetricResults")
                or case.get("overall_eval_metric_results")
                or []
            ):
                name = m.get("metricName") or m.get("metric_name")
                status = m.get("evalStatus", m.get("eval_status"))
                out[(case.get("evalId") or case.get("eval_id"), name)] = {
                    "score": m.get("score", 0.0),
                    "status": STATUS.get(status, status) if isinstance(status, int) else status,
                }
    return out


@pytest.mark.parametrize("example", EXAMPLES)
def test_rescoring_reproduces_recorded_scores(example: str, tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not here")
    base = CORPUS / "trpc-agent-go" / example
    results = tmp_path / "r.json"
    run_replay(
        str(base / "data"), "--results", str(results), replay=str(base / "output"), cwd=tmp_path
    )
    data = json.loads(results.read_text())
    metrics_files = {m["source"] for s in data["sets"] for m in [s["metrics"]]}
    evaluators = {}
    for source in metrics_files:
        for m in json.loads(
            (tmp_path / source).read_text()
            if not Path(source).is_absolute()
            else Path(source).read_text()
        ):
            evaluators[m.get("metricName") or m.get("metric_name")] = (
                m.get("evaluatorName") or m.get("metricName") or m.get("metric_name")
            )
    recorded = _recorded(base / "output")
    compared = 0
    for case in (c for s in data["sets"] for c in s["cases"]):
        for metric in case["metrics"]:
            key = (case["eval_id"], metric["name"])
            if key not in recorded or evaluators.get(metric["name"]) not in DETERMINISTIC:
                continue
            want = recorded[key]
            assert metric["score"] == pytest.approx(want["score"], abs=1e-12), key
            assert metric["status"].lower() == want["status"], key
            compared += 1
    assert compared >= 1


# --- the criteria's rules ---------------------------------------------------------------


def _tool(name: str, arguments: Any = None, result: Any = None, id_: str = "x") -> dict:
    return {"id": id_, "name": name, "arguments": arguments, "result": result}


def test_default_strategy_is_exact_name_arguments_result() -> None:
    trajectory_match(
        {}, [_tool("a", {"x": 1}, {"ok": True})], [_tool("a", {"x": 1.0000001}, {"ok": True})]
    )
    with pytest.raises(Mismatch):
        trajectory_match({}, [_tool("a", {"x": 1})], [_tool("a", {"x": 2})])


def test_unordered_uses_a_full_bipartite_matching() -> None:
    # greedy would pair actual[0] with expected[0] and fail; Kuhn's matching finds the pairing
    crit = {
        "defaultStrategy": {
            "name": {"matchStrategy": "regex"},
            "arguments": {"ignore": True},
            "result": {"ignore": True},
        }
    }
    actual = [_tool("get_weather"), _tool("get_time")]
    expected = [_tool("get_.*"), _tool("get_time")]
    trajectory_match(crit, actual, expected)
    with pytest.raises(Mismatch):
        trajectory_match(
            {**crit, "orderSensitive": True}, actual[::-1], [_tool("get_time"), _tool("get_time")]
        )


def test_ordered_and_subset_matching() -> None:
    crit = {"orderSensitive": True, "subsetMatching": True}
    trajectory_match(crit, [_tool("a"), _tool("b"), _tool("c")], [_tool("a"), _tool("c")])
    with pytest.raises(Mismatch, match="call 2 c: no call of the agent's left to match it"):
        trajectory_match(crit, [_tool("c"), _tool("a")], [_tool("a"), _tool("c")])
    with pytest.raises(Mismatch, match=r"number of tool calls differs: expected 1, got 2 \(a, b\)"):
        trajectory_match({"orderSensitive": True}, [_tool("a"), _tool("b")], [_tool("a")])


def test_generation_2_order_insensitive_and_response_key() -> None:
    crit = {
        "orderInsensitive": False,
        "defaultStrategy": {"name": {}, "response": {"ignore": True}},
    }
    trajectory_match(crit, [_tool("a", result=1)], [_tool("a", result=2)])
    with pytest.raises(Mismatch):
        trajectory_match(crit, [_tool("b"), _tool("a")], [_tool("a"), _tool("b")])
    trajectory_match({"orderInsensitive": True}, [_tool("b"), _tool("a")], [_tool("a"), _tool("b")])


def test_tool_strategy_is_found_by_actual_then_expected_name() -> None:
    crit = {"toolStrategy": {"get_ticket": {"arguments": {"ignoreTree": {"time": True}}}}}
    trajectory_match(
        crit,
        [_tool("get_ticket", {"city": "SH", "time": 1})],
        [_tool("get_ticket", {"city": "SH", "time": 2})],
    )
    with pytest.raises(Mismatch):
        trajectory_match(
            crit,
            [_tool("get_ticket", {"city": "BJ", "time": 1})],
            [_tool("get_ticket", {"city": "SH", "time": 2})],
        )


@pytest.mark.parametrize(
    ("actual", "expected", "crit", "ok"),
    [
        (
            {"a": 1, "b": {"c": 2, "d": 3}},
            {"a": 1, "b": {"c": 2, "d": 4}},
            {"ignoreTree": {"b": {"d": True}}},
            True,
        ),
        ({"a": 1, "b": 9}, {"a": 1, "b": 8}, {"onlyTree": {"a": True}}, True),
        ({"a": 1, "b": 9}, {"a": 2, "b": 9}, {"onlyTree": {"a": True}}, False),
        ({"n": 1.05}, {"n": 1.0}, {"numberTolerance": 0.1}, True),
        ({"n": 1.05}, {"n": 1.0}, {}, False),
        ([1, 2], [2, 1], {}, False),
        ({"a": True}, {"a": 1}, {}, False),  # a boolean is not the number 1 in Go
        ({"a": None}, {"a": None}, {}, True),
        ({"x": 1}, {"y": 1}, {"matchStrategy": "skip"}, True),
        ({"a": 1}, {"a": 1}, {"onlyTree": {"a": True}, "ignoreTree": {"b": True}}, False),
    ],
)
def test_json_criterion(actual: Any, expected: Any, crit: dict, ok: bool) -> None:
    if ok:
        json_match(actual, expected, crit, "args")
    else:
        with pytest.raises(Mismatch):
            json_match(actual, expected, crit, "args")


@pytest.mark.parametrize(
    ("actual", "expected", "crit", "ok"),
    [
        ("Hello World", "hello world", {"caseInsensitive": True}, True),
        ("Hello World", "hello world", {}, False),
        ("the weather is sunny", "sunny", {"matchStrategy": "contains"}, True),
        ("order #1234", r"#\d{4}", {"matchStrategy": "regex"}, True),
        ("anything", "else", {"matchStrategy": "skip", "length": {"min": 3}}, True),
        ("ab", "else", {"matchStrategy": "skip", "length": {"min": 3}}, False),
        ("東京は晴れ", "x", {"matchStrategy": "skip", "length": {"max": 5}}, True),  # code points
    ],
)
def test_text_criterion(actual: str, expected: str, crit: dict, ok: bool) -> None:
    if ok:
        text_match(actual, expected, crit)
    else:
        with pytest.raises(Mismatch):
            text_match(actual, expected, crit)
