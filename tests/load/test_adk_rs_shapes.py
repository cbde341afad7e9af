"""adk-rs eval sets load as adk-rs reads them (skundu42/adk-rs ``src/eval/set.rs``): an
invocation may have no ``final_response``; ``intermediate_responses`` are ``(author, parts)``
pairs now and whole Contents in older files; a case id may be ``id`` or ``eval_id``. Bad input
is one message naming the file and the JSON path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ci_eval.load.evalsets import Failed, LoadedEvalSet
from tests.helpers import load


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _write(tmp_path: Path, invocations: list[dict[str, Any]], case_key: str = "id") -> Path:
    data = {
        "id": "rs-set",
        "name": "adk-rs set",
        "eval_cases": [{case_key: "case-1", "name": "a named case", "conversation": invocations}],
    }
    path = tmp_path / "rs.evalset.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def test_an_invocation_without_final_response_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"user_content": _text("user", "hi")}])
    outcome = load(path)
    assert isinstance(outcome, LoadedEvalSet) and outcome.dialect == "adk-rs"
    [inv] = outcome.eval_set.eval_cases[0].invocations()
    assert inv.final_response is None


def test_intermediate_responses_as_author_parts_pairs_load(tmp_path: Path) -> None:
    inv = {
        "user_content": _text("user", "weather?"),
        "final_response": _text("model", "sunny"),
        "intermediate_data": {
            "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "x"}],
            "intermediate_responses": [["planner", [{"text": "asking the weather tool"}]]],
        },
    }
    outcome = load(_write(tmp_path, [inv]))
    assert isinstance(outcome, LoadedEvalSet)
    [loaded] = outcome.eval_set.eval_cases[0].invocations()
    assert loaded.intermediate_data is not None
    [(author, parts)] = loaded.intermediate_data.intermediate_responses
    assert (author, [p.text for p in parts]) == ("planner", ["asking the weather tool"])
    assert [(c.name, c.args) for c in loaded.tool_calls()] == [("get_weather", {"city": "Paris"})]


def test_older_adk_rs_intermediate_contents_still_load(tmp_path: Path) -> None:
    inv = {
        "user_content": _text("user", "q"),
        "final_response": _text("model", "a"),
        "intermediate_data": {"intermediate_responses": [_text("model", "thinking")]},
    }
    outcome = load(_write(tmp_path, [inv]))
    assert isinstance(outcome, LoadedEvalSet)
    [loaded] = outcome.eval_set.eval_cases[0].invocations()
    assert loaded.intermediate_data is not None
    [(author, parts)] = loaded.intermediate_data.intermediate_responses
    assert (author, parts[0].text) == ("model", "thinking")


def test_a_case_id_may_be_eval_id_as_adk_rs_writes_it_now(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"user_content": _text("user", "hi")}], case_key="eval_id")
    outcome = load(path)
    assert isinstance(outcome, LoadedEvalSet)
    assert [c.eval_id for c in outcome.eval_set.eval_cases] == ["case-1"]


def test_adk_rs_sets_get_adk_rs_metrics_and_defaults(tmp_path: Path) -> None:
    outcome = load(_write(tmp_path, [{"user_content": _text("user", "hi")}]))
    assert isinstance(outcome, LoadedEvalSet)
    assert {m.name: m.threshold for m in outcome.metrics.metrics} == {
        "tool_trajectory_avg_score": 1.0,  # TrajectoryMatch::default
        "final_response_match_v1": 0.8,  # ResponseMatch::default
    }


def test_a_malformed_intermediate_response_is_one_message_with_its_path(tmp_path: Path) -> None:
    inv = {
        "user_content": _text("user", "q"),
        "intermediate_data": {"intermediate_responses": [42]},
    }
    outcome = load(_write(tmp_path, [inv]))
    assert isinstance(outcome, Failed)
    message = str(outcome.error)
    assert "rs.evalset.json" in message
    assert "intermediate_responses" in message
    assert "Traceback" not in message
