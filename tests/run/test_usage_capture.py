"""What the agent's own model calls spent, captured per turn: from the contract reply's
``usage`` object (``http``, ``command``), from ADK events' ``usageMetadata`` counted as ADK
counts them, and kept by the results file so that a replay of it carries it again. A usage
claim that is not one (negative, not an integer, past the bounds) is the turn's error, naming
the field. (ADK's own api_server, runner and ``adk eval``: ``test_run_adk_usage``.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_eval.connectors.base import AgentError, events_to_turn
from ci_eval.connectors.contract import parse_reply
from ci_eval.model.usage import Usage
from tests.helpers import run_cli
from tests.loopback import Loopback, QuietHandler

# --- the contract reply's usage object -----------------------------------------------------


def test_a_replys_usage_object_is_the_turns_usage() -> None:
    usage = {"input_tokens": 1200, "output_tokens": 85, "cached_tokens": 1024, "model_calls": 2}
    turn = parse_reply({"final_response": "hi", "usage": usage})
    assert turn.usage == Usage(1200, 85, 1024, 2)


def test_a_reply_without_usage_reported_none_which_is_not_zero() -> None:
    assert parse_reply({"final_response": "hi"}).usage is None
    assert parse_reply({"final_response": "hi", "usage": {}}).usage is None


def test_counts_the_agent_leaves_out_stay_unknown() -> None:
    turn = parse_reply({"final_response": "hi", "usage": {"model_calls": 3, "output_tokens": None}})
    assert turn.usage == Usage(model_calls=3)


def test_unknown_usage_keys_are_ignored() -> None:
    turn = parse_reply({"usage": {"input_tokens": 5, "reasoning_tokens": 2, "cost_usd": 0.1}})
    assert turn.usage == Usage(input_tokens=5)


@pytest.mark.parametrize(
    ("usage", "where"),
    [
        ({"input_tokens": -1}, "usage.input_tokens"),
        ({"output_tokens": "12"}, "usage.output_tokens"),
        ({"cached_tokens": 1.5}, "usage.cached_tokens"),
        ({"model_calls": True}, "usage.model_calls"),
        ({"input_tokens": 10**13}, "usage.input_tokens"),
        ({"model_calls": 10**6}, "usage.model_calls"),
        ("lots", "usage"),
    ],
)
def test_a_malformed_usage_is_the_turns_error_naming_the_field(usage: Any, where: str) -> None:
    with pytest.raises(AgentError) as raised:
        parse_reply({"final_response": "hi", "usage": usage})
    message = str(raised.value)
    assert message.startswith(f"malformed reply: {where}: ") and "\n" not in message


# --- ADK events, counted as ADK counts them --------------------------------------------------


def _event(author: str = "agent", text: str | None = "x", **more: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"author": author, **more}
    if text is not None:
        event["content"] = {"role": "model", "parts": [{"text": text}]}
    return event


def test_each_event_with_usage_or_a_model_version_is_one_model_call() -> None:
    turn = events_to_turn(
        [
            _event(usageMetadata={"promptTokenCount": 100, "candidatesTokenCount": 7}),
            _event(modelVersion="gemini-x"),  # a call that reported no tokens
            _event(
                usageMetadata={
                    "promptTokenCount": 50,
                    "toolUsePromptTokenCount": 5,
                    "thoughtsTokenCount": 3,
                    "cachedContentTokenCount": 40,
                }
            ),
        ]
    )
    assert turn.usage == Usage(input_tokens=155, output_tokens=10, cached_tokens=40, model_calls=3)


def test_events_adk_leaves_out_of_an_invocation_are_not_counted() -> None:
    spent = {"usageMetadata": {"promptTokenCount": 1000}, "modelVersion": "m"}
    turn = events_to_turn(
        [
            _event("user", **spent),  # the user's own message
            _event(text="", **spent),  # no text, no call, no data
            _event(text=None, **spent),  # no content
            _event(text=None, groundingMetadata={}, usageMetadata={"promptTokenCount": 3}),
        ]
    )
    assert turn.usage == Usage(input_tokens=3, model_calls=1)


def test_events_without_usage_made_no_model_call_and_reported_no_tokens() -> None:
    assert events_to_turn([_event(), _event(text="done")]).usage == Usage(model_calls=0)


def test_usage_recorded_in_snake_case_counts_too() -> None:
    turn = events_to_turn(
        [_event(usage_metadata={"prompt_token_count": 9, "candidates_token_count": 1})]
    )
    assert turn.usage == Usage(input_tokens=9, output_tokens=1, model_calls=1)


@pytest.mark.parametrize(
    ("metadata", "where"),
    [
        ({"promptTokenCount": -5}, "usageMetadata.promptTokenCount"),
        ({"candidatesTokenCount": "many"}, "usageMetadata.candidatesTokenCount"),
        ({"thoughtsTokenCount": 10**13}, "usageMetadata.thoughtsTokenCount"),
        ([1, 2], "usageMetadata"),
    ],
)
def test_malformed_usage_metadata_is_the_turns_error_naming_the_field(
    metadata: Any, where: str
) -> None:
    with pytest.raises(AgentError, match=f"^malformed event {where}: "):
        events_to_turn([_event(usageMetadata=metadata)])


def test_a_turns_total_past_the_bound_is_an_error() -> None:
    big = {"promptTokenCount": 10**12}
    with pytest.raises(AgentError, match="passes 1,000,000,000,000 tokens"):
        events_to_turn([_event(usageMetadata=big), _event(usageMetadata=big)])


def test_an_events_reply_counts_its_events_usage() -> None:
    turn = parse_reply({"events": [_event(usageMetadata={"promptTokenCount": 4})]})
    assert turn.usage == Usage(input_tokens=4, model_calls=1)


def test_a_usage_object_wins_over_what_the_events_carry() -> None:
    events = [_event(usageMetadata={"promptTokenCount": 4})]
    turn = parse_reply({"events": events, "usage": {"input_tokens": 40, "model_calls": 2}})
    assert turn.usage == Usage(input_tokens=40, model_calls=2)


# --- end to end: the results file holds it, a replay carries it ------------------------------

EVALSET = {
    "eval_set_id": "metered",
    "eval_cases": [
        {
            "eval_id": "two_turns",
            "conversation": [
                {"user_content": {"role": "user", "parts": [{"text": "one two three"}]}},
                {"user_content": {"role": "user", "parts": [{"text": "four"}]}},
            ],
        }
    ],
}
# the agent spends by the message: tokens per word, one call per turn; "four" says nothing
AGENT = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)["message"]
    reply = {"final_response": "ok"}
    if message != "four":
        words = len(message.split())
        reply["usage"] = {"input_tokens": 100 * words, "output_tokens": words,
                          "cached_tokens": 10, "model_calls": 1}
    print(json.dumps(reply), flush=True)
"""


def _invocations(results: Path) -> list[dict[str, Any]]:
    [case] = json.loads(results.read_text())["sets"][0]["cases"]
    [run] = case["runs"]
    return run["invocations"]


def _run_metrics(results: Path) -> dict[str, Any]:
    [case] = json.loads(results.read_text())["sets"][0]["cases"]
    return {m["name"]: (m["status"], m["score"]) for m in case["runs"][0]["metrics"]}


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A results file of the command agent above."""
    (tmp_path / "metered.evalset.json").write_text(json.dumps(EVALSET))
    (tmp_path / "agent.py").write_text(AGENT)
    command = f"{sys.executable} agent.py"
    done = run_cli(
        "run", "metered.evalset.json", "--agent", "command", "--agent-command", command,
        "--results", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return tmp_path / "r.json"


def test_the_command_agents_usage_is_each_invocations_in_the_results(recorded: Path) -> None:
    assert [i["usage"] for i in _invocations(recorded)] == [
        {"input_tokens": 300, "output_tokens": 3, "cached_tokens": 10, "model_calls": 1},
        None,
    ]
    metrics = _run_metrics(recorded)
    # tokens: (303 + none reported) / 2 turns, as ADK averages; calls: of the turns that said
    assert metrics["token_usage_v1"] == ("INFO", 151.5)
    assert metrics["inference_call_count_v1"] == ("INFO", 1.0)


def test_a_replay_of_the_results_carries_the_usage_again(recorded: Path) -> None:
    folder = recorded.parent
    done = run_cli(
        "run", "metered.evalset.json", "--agent", "replay", "--replay", "r.json",
        "--results", "again.json", cwd=folder,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    usage = [i["usage"] for i in _invocations(folder / "again.json")]
    assert usage == [i["usage"] for i in _invocations(recorded)]


def test_a_replayed_results_file_with_a_malformed_usage_errors_its_case_in_one_line(
    recorded: Path,
) -> None:
    data = json.loads(recorded.read_text())
    data["sets"][0]["cases"][0]["runs"][0]["invocations"][0]["usage"] = {"model_calls": "2"}
    recorded.write_text(json.dumps(data))
    done = run_cli(
        "run", "metered.evalset.json", "--agent", "replay", "--replay", "r.json",
        cwd=recorded.parent,
    )  # fmt: skip
    assert done.returncode == 2  # bad input: the other cases are still replayed and reported
    said = "unreadable recording: r.json case 'two_turns': invocations[0].usage.model_calls: "
    assert said in done.stdout


class _MeteredHttpAgent(QuietHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        usage = {"input_tokens": len(body["message"]), "output_tokens": 2, "model_calls": 1}
        self.reply(200, json.dumps({"final_response": "ok", "usage": usage}).encode())


def test_the_http_agents_usage_is_each_invocations_in_the_results(tmp_path: Path) -> None:
    (tmp_path / "metered.evalset.json").write_text(json.dumps(EVALSET))
    with Loopback(_MeteredHttpAgent) as agent:
        url = f"http://127.0.0.1:{agent.port}/turn"
        done = run_cli(
            "run", "metered.evalset.json", "--agent", "http", "--agent-url", url,
            "--results", "r.json", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert [i["usage"] for i in _invocations(tmp_path / "r.json")] == [
        {"input_tokens": 13, "output_tokens": 2, "cached_tokens": None, "model_calls": 1},
        {"input_tokens": 4, "output_tokens": 2, "cached_tokens": None, "model_calls": 1},
    ]
