"""A trpc-agent-go case's context messages and tool mocks reach the agent: the http/command
contract's request carries them as the eval set gives them (and nothing more for other
cases)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_eval.connectors.contract import request
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model import Content, Part
from tests.conftest import CORPUS, SAMPLES
from tests.helpers import load

TRPC = CORPUS / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation"


def _first_request(path: Path, root: Path) -> dict:
    loaded = load(path, root=root)
    assert isinstance(loaded, LoadedEvalSet)
    case = loaded.eval_set.eval_cases[0]
    user = case.conversation[0].user_content or Content(role="user", parts=[Part(text="")])
    return request(case, loaded.eval_set.eval_set_id, 1, 1, "s", user)


def test_a_cases_context_messages_are_sent() -> None:
    path = TRPC / "contextmessage/data/contextmessage-app/contextmessage-basic.evalset.json"
    if not path.is_file():
        pytest.skip("../shared/corpus is not here")
    body = _first_request(path, CORPUS)
    assert body["context_messages"] == [{"role": "system", "content": "You are trpc-agent-go bot."}]
    assert "tool_mock" not in body


def test_a_turns_tool_mock_is_sent() -> None:
    path = TRPC / "toolmock/data/toolmock-app/toolmock-weather.evalset.json"
    if not path.is_file():
        pytest.skip("../shared/corpus is not here")
    body = _first_request(path, CORPUS)
    assert body["tool_mock"]["actual"][0]["name"] == "get_weather"
    assert body["tool_mock"]["actual"][0]["result"]["city"] == "Shenzhen"


def test_other_cases_send_what_they_always_sent() -> None:
    body = _first_request(SAMPLES / "evals/weather_basic.evalset.json", SAMPLES)
    assert set(body) == {
        "session_id",
        "eval_set_id",
        "eval_id",
        "run",
        "turn",
        "message",
        "user_content",
        "state",
    }
