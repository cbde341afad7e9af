"""The rule that sets a turn's spans beside its reply (``--otlp``): the reply's tool calls win
where it has some, and a disagreement is said; else the spans'; else none."""

from __future__ import annotations

import json

from ci_eval.connectors.base import ActualTurn
from ci_eval.connectors.span_trajectory import merged
from ci_eval.connectors.trace_shapes import Span
from ci_eval.model import FunctionCall, Part
from ci_eval.model.results import TrajectorySource

TOP = "a" * 16


def _spans(*calls: tuple[str, dict]) -> list[Span]:
    agent = Span(
        TOP, "f" * 16, "invoke_agent a", 1, 0, {"gen_ai.operation.name": "invoke_agent"}, "$"
    )
    tools = [
        Span(
            f"{n:016x}",
            TOP,
            f"execute_tool {name}",
            n + 1,
            n,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.arguments": json.dumps(args),
                "gen_ai.tool.call.result": json.dumps({"ok": True}),
            },
            "$",
        )
        for n, (name, args) in enumerate(calls, 1)
    ]
    return [agent, *tools]


def _calls(turn: ActualTurn) -> list[tuple[str | None, dict | None]]:
    return [(c.name, c.args) for c in turn.tool_uses]


def test_a_reply_without_tool_calls_takes_the_spans_calls_and_responses() -> None:
    turn = merged(ActualTurn(), _spans(("get_weather", {"city": "Paris"}), ("get_time", {})))
    assert _calls(turn) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    assert [r.response for r in turn.tool_responses] == [{"ok": True}, {"ok": True}]
    assert turn.trajectory is not None
    assert turn.trajectory.source is TrajectorySource.SPANS
    assert turn.trajectory.spans == 3 and turn.trajectory.disagreement is None


def test_a_reply_with_tool_calls_wins_and_a_different_span_call_is_said() -> None:
    reply = ActualTurn(tool_uses=[FunctionCall(name="get_weather", args={"city": "Paris"})])
    turn = merged(reply, _spans(("get_weather", {"city": "Rome"})))
    assert _calls(turn) == [("get_weather", {"city": "Paris"})]
    assert turn.trajectory is not None and turn.trajectory.source is TrajectorySource.REPLY
    assert turn.trajectory.disagreement == (
        'the spans show get_weather(city="Rome"); the reply get_weather(city="Paris")'
    )


def test_the_same_calls_in_another_key_order_are_no_disagreement() -> None:
    reply = ActualTurn(tool_uses=[FunctionCall(name="f", args={"a": 1, "b": 2})])
    turn = merged(reply, _spans(("f", {"b": 2, "a": 1})))
    assert turn.trajectory is not None and turn.trajectory.disagreement is None


def test_spans_that_anchor_no_turn_are_no_disagreement() -> None:
    server = Span(TOP, None, "POST /", 1, 0, {"http.method": "POST"}, "$")
    reply = ActualTurn(tool_uses=[FunctionCall(name="f", args={})])
    turn = merged(reply, [server])
    assert turn.trajectory is not None
    assert turn.trajectory.disagreement is None and turn.trajectory.spans == 1


def test_no_call_in_either_is_a_turn_that_called_none() -> None:
    turn = merged(ActualTurn(intermediate_responses=[("a", [Part(text="hm")])]), _spans())
    assert turn.tool_uses == []
    assert turn.trajectory is not None and turn.trajectory.source is TrajectorySource.NONE


def test_spans_that_cannot_be_read_leave_the_reply_and_say_why() -> None:
    bad = _spans(("f", {}))
    bad[0].attributes["gen_ai.input.messages"] = "{not json"
    turn = merged(ActualTurn(), bad)
    assert turn.tool_uses == []
    assert turn.trajectory is not None and turn.trajectory.unread
    assert turn.trajectory.unread.startswith("gen_ai.input.messages")
