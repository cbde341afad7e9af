"""The simulated conversation: ask the user simulator for a turn, send it to the agent in one
session, record it, repeat until the simulator stops (or the agent fails).

What is recorded per turn is what ADK's eval service records: the user message the simulator
wrote and the agent's invocation (tool calls, tool results, final and intermediate responses).
The turn that stops the conversation is not sent and not an invocation; the run's
``simulation`` record says why it ended, how many LLM calls the simulator made and which
instructions it followed.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from ci_eval.connectors.base import TOO_MUCH, ActualTurn, AgentError, Connector, KeptReplies
from ci_eval.model import Content, Invocation, Part
from ci_eval.model.usage import Usage
from ci_eval.results.file import InvocationRecord, RunRecord
from ci_eval.simulate.base import Event, SimulatorError, Status, UserSimulator


def turn_events(turn: ActualTurn) -> list[Event]:
    """The agent's events for one turn: as the agent sent them when it speaks ADK's event JSON,
    else rebuilt from the contract reply (intermediate text, tool calls and results, answer)."""
    if turn.events is not None:
        return [e for e in turn.events if isinstance(e, dict) and e.get("author") != "user"]
    author = turn.author or "agent"
    events: list[Event] = [
        {
            "author": who or author,
            "content": {
                "role": "model",
                "parts": [p.model_dump(mode="json", exclude_none=True) for p in parts],
            },
        }
        for who, parts in turn.intermediate_responses
    ]
    for call in turn.tool_uses:
        events.append(
            {
                "author": author,
                "content": {
                    "role": "model",
                    "parts": [{"function_call": call.model_dump(mode="json", exclude_none=True)}],
                },
            }
        )
    for result in turn.tool_responses:
        events.append(
            {
                "author": author,
                "content": {
                    "role": "user",
                    "parts": [
                        {"function_response": result.model_dump(mode="json", exclude_none=True)}
                    ],
                },
            }
        )
    if turn.final_response is not None:
        events.append(
            {
                "author": author,
                "content": turn.final_response.model_dump(mode="json", exclude_none=True),
            }
        )
    return events


def _invocation(n: int, user: Content, turn: ActualTurn, duration: float) -> Invocation:
    return turn.to_invocation(Invocation(invocation_id=f"sim-{n}", user_content=user), duration)


def run_simulated(
    connector: Connector,
    user: UserSimulator,
    eval_set_id: str,
    case: Any,
    run: int,
    ceiling: Any = None,
) -> RunRecord:
    """``ceiling``: [budget]'s binding limits (ci_eval.run.ceiling), checked before each turn."""
    record = RunRecord(run=run)
    started = time.monotonic()
    record.simulation = user.describe()
    try:
        session = connector.open(eval_set_id, case, run)
    except AgentError as exc:
        record.error = f"cannot start a session: {exc}"
        record.duration_s = time.monotonic() - started
        return record
    events: list[Event] = []
    ended = None
    kept = KeptReplies()
    try:
        while True:
            try:
                nxt = user.next_turn(events)
            except SimulatorError as exc:
                record.error = f"turn {len(record.invocations) + 1}: {exc}"
                break
            if nxt.status != Status.SUCCESS or nxt.text is None:
                ended = nxt
                break
            content = Content(role="user", parts=[Part(text=nxt.text)])
            n = len(record.invocations) + 1
            refused = ceiling.agent_call() if ceiling is not None else None
            if refused is not None:
                record.error = f"turn {n}: not run: {refused}"
                break
            t0 = time.monotonic()
            try:
                turn = session.send(content)
            except AgentError as exc:
                record.error = f"turn {n}: {exc}"
                record.invocations.append(
                    InvocationRecord(
                        expected=Invocation(invocation_id=f"sim-{n}", user_content=content),
                        duration_s=time.monotonic() - t0,
                        retries=exc.retries,
                        error=str(exc),
                    )
                )
                break
            elapsed = time.monotonic() - t0 - turn.waited_s
            actual = _invocation(n, content, turn, elapsed)
            if not kept.fits(actual):
                record.error = f"turn {n}: {TOO_MUCH}"
                break
            if ceiling is not None:
                ceiling.agent_spent(turn.usage)
            record.invocations.append(
                InvocationRecord(
                    # a simulated case has no expected turn: the expectation is the user's
                    # message alone, so that reports line the turns up
                    expected=Invocation(invocation_id=f"sim-{n}", user_content=content),
                    actual=actual,
                    duration_s=elapsed,
                    retries=turn.retries,
                    usage=turn.usage,
                    trajectory=turn.trajectory,
                )
            )
            events.append(
                {"author": "user", "content": content.model_dump(mode="json", exclude_none=True)}
            )
            events += turn_events(turn)
    except Exception as exc:  # a connector bug must not take the other cases down
        record.error = f"{type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):  # closing is best effort
            session.close()
    record.simulation.update(
        {
            "ended": ended.status.value if ended else "error",
            "user_turns": len(record.invocations),
            "llm_calls": user.llm_calls,
        }
    )
    if ended is not None and ended.said is not None:
        record.simulation["last_message"] = ended.said
    if ended is not None and not record.invocations and record.error is None:
        record.error = "the user simulator ended the conversation before the first turn"
    record.duration_s = time.monotonic() - started
    return record


def replay_simulated(
    recording: list[Invocation],
    run: int,
    usage: list[Usage | None] | None = None,
    expected: list[Invocation] | None = None,
) -> RunRecord:
    """A recorded simulated conversation scored again: its user turns and agent replies as they
    were (with the agent's usage per turn, when recorded), no simulator and no agent. What the
    recording expected of each turn (trpc-agent-go's expected runner answered it) is the turn's
    expected invocation; else its user turn alone."""
    record = RunRecord(run=run)
    record.simulation = {"kind": "replay", "user_turns": len(recording), "llm_calls": 0}
    usage = usage or [None] * len(recording)
    if expected is None or len(expected) != len(recording):
        expected = [
            Invocation(invocation_id=inv.invocation_id, user_content=inv.user_content)
            for inv in recording
        ]
    record.invocations = [
        InvocationRecord(expected=exp, actual=inv, usage=used)
        for inv, exp, used in zip(recording, expected, usage, strict=True)
    ]
    return record
