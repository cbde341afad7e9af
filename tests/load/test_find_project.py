"""What ``init`` finds: JSON that is no eval set of any dialect is passed over as ``run`` passes
it over, a broken set is a problem, and a set whose id is only its path (every Orchestrate
file's) is named by its path once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ci_eval.load.find_project import find_project, named_by_path
from tests.factories import evalset

STORY = {
    "agent": "hr_agent",
    "story": "You want to know your time off balance.",
    "starting_sentence": "How many days off do I have?",
    "goals": {"get_balance": []},
    "goal_details": [
        {"name": "get_balance", "type": "tool_call", "tool_name": "balance", "args": {}}
    ],
}


def _write(root: Path, files: dict[str, Any]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return root


def test_json_that_is_no_eval_set_is_passed_over_not_a_problem(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "tests/eval/evalsets/basic.evalset.json": evalset("basic", "a"),
            "tests/eval/dataset.json": [{"input": "hi", "expected": "hello"}],
            "tests/eval/chats.json": '{"input": "hi"}\n{"input": "bye"}\n',
        },
    )
    found = find_project(root)
    assert [s.path for s in found.sets] == ["tests/eval/evalsets/basic.evalset.json"]
    assert found.problems == []
    assert found.folders == ["tests/eval/evalsets"]


def test_a_broken_eval_set_is_a_problem(tmp_path: Path) -> None:
    root = _write(tmp_path, {"tests/eval/broken.json": {"eval_set_id": "b", "eval_cases": [{}]}})
    [problem] = find_project(root).problems
    assert problem.startswith("tests/eval/broken.json:1:")
    assert "$.eval_cases[0].eval_id" in problem


def test_an_orchestrate_set_is_named_by_its_path_alone(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "evaluations/data_simple.json": STORY,
            "evaluations/more/data_complex.json": STORY,
            "evals/weather.evalset.json": evalset("weather", "a"),
        },
    )
    found = find_project(root)
    assert [(s.path, s.eval_set_id) for s in found.sets] == [
        ("evals/weather.evalset.json", "weather"),
        ("evaluations/data_simple.json", "evaluations/data_simple.json"),
        ("evaluations/more/data_complex.json", "evaluations/more/data_complex.json"),
    ]
    assert found.folders == ["evals", "evaluations"]


def test_only_an_id_made_of_the_path_gives_way_to_it() -> None:
    assert named_by_path("a/data.test.json", "a/data.test.json") == "a/data.test.json"
    assert named_by_path("a/data", "a/data.json") == "a/data.json"
    assert named_by_path("data", "a/data.json") == "data"
    assert named_by_path("a/data", "a/data.evalset.json") == "a/data"
