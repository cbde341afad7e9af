"""What every simulated user shares: the turn it produces, its statuses and errors, and the
``UserSimulator`` interface the conversation loop drives."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

# simulated user turns of one case, whatever the eval set or config says (ADK's -1 is "no
# limit"): each turn is an agent turn and an LLM call with a longer prompt than the last
HARD_MAX_TURNS = 100


def turn_limit(configured: int) -> int:
    """The turns a simulated conversation may take: as configured, never past the ceiling."""
    return HARD_MAX_TURNS if configured < 0 or configured > HARD_MAX_TURNS else configured


class Status(enum.StrEnum):
    """ADK's ``simulation.user_simulator.Status``, value for value."""

    SUCCESS = "success"
    TURN_LIMIT_REACHED = "turn_limit_reached"
    STOP_SIGNAL_DETECTED = "stop_signal_detected"
    NO_MESSAGE_GENERATED = "no_message_generated"


@dataclass
class NextTurn:
    status: Status
    text: str | None = None  # the user's message, when status is SUCCESS
    said: str | None = None  # what the LLM answered when it stopped (kept for the record)


class SimulatorError(Exception):
    """The simulated user could not produce a turn (LLM unreachable, empty answer)."""


# An agent event as ADK's api_server serialises it: {"author": …, "content": {genai Content}}
Event = dict[str, Any]


class UserSimulator(Protocol):
    """One simulated user for one (case, run): ``next_turn`` gets the whole conversation so far
    as events (the user's own turns authored ``user``)."""

    llm_calls: int

    def next_turn(self, events: list[Event]) -> NextTurn: ...

    def describe(self) -> dict[str, Any]:
        """What played the user, for the results (model, instructions' source, limits)."""
        ...
