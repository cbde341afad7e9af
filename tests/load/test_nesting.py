"""Nesting has a ceiling where it is read: an eval set, or an agent's reply, deeper than 100
levels (tool arguments nested 300 deep) is refused there with where it is — not an internal
error when the results are written, with no report at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_eval.connectors.base import AgentError
from ci_eval.connectors.contract import parse_reply
from ci_eval.errors import InputError
from ci_eval.io.jsonpos import parse_json
from tests.helpers import run_cli


def _deep(levels: int) -> dict:
    value: dict = {"x": 1}
    for _ in range(levels):
        value = {"a": value}
    return value


def _evalset(args: dict) -> str:
    call = {"name": "get_weather", "args": args}
    turn = {
        "user_content": {"role": "user", "parts": [{"text": "hi"}]},
        "intermediate_data": {"tool_uses": [call]},
    }
    return json.dumps(
        {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [turn]}]}
    )


def test_an_eval_set_nested_past_the_ceiling_is_refused_with_its_place() -> None:
    with pytest.raises(InputError) as caught:
        parse_json(_evalset(_deep(300)), "deep.evalset.json")
    assert "nested" in str(caught.value) and caught.value.line == 1


def test_validate_names_the_file_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "deep.evalset.json").write_text(_evalset(_deep(300)))
    done = run_cli("validate", str(tmp_path))
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "deep.evalset.json" in said and "too deep to be an eval set" in said
    assert "internal error" not in said


def test_an_agent_reply_nested_past_the_ceiling_is_the_turns_error() -> None:
    reply = {"final_response": "ok", "tool_calls": [{"name": "f", "args": _deep(300)}]}
    with pytest.raises(AgentError, match="nests deeper than 100 levels"):
        parse_reply(reply)


def test_an_ordinary_reply_is_read_as_before() -> None:
    turn = parse_reply({"final_response": "ok", "tool_calls": [{"name": "f", "args": _deep(5)}]})
    assert turn.tool_uses[0].name == "f"


@pytest.mark.parametrize("depth", [300, 5_000])
def test_a_ci_eval_toml_nested_too_deeply_is_one_line_naming_the_file(
    tmp_path: Path, depth: int
) -> None:
    nested = "[" * depth + "1" + "]" * depth
    config = tmp_path / "ci-eval.toml"
    config.write_text(f"[metrics]\nresponse_match_score = {{ threshold = 0.5, x = {nested} }}\n")
    done = run_cli("run", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"ci-eval: {config}: arrays or tables nested deeper than 100 levels: no setting is"
    ]


def test_an_acceptance_file_nested_too_deeply_is_one_line_naming_it(tmp_path: Path) -> None:
    from ci_eval.gate import accept

    path = tmp_path / "accept.toml"
    path.write_text("x = " + "[" * 5_000 + "]" * 5_000 + "\n")
    with pytest.raises(InputError, match="nested deeper than 100 levels"):
        accept.load(path)
