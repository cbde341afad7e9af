"""What the trip agent answers and which tools it calls, by user message; no LLM."""

from __future__ import annotations

from typing import Any

ANSWERS: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "Plan a weekend in Lisbon": (
        "A weekend in Lisbon: trams, Belem and fado.",
        [("find_sights", {"city": "Lisbon"})],
    ),
    "And the weather?": ("Sunny in Lisbon all weekend.", [("get_weather", {"city": "Lisbon"})]),
    # more calls than the tool_calls metric allows, and an answer that says nothing
    "Plan a day in Porto": (
        "Hmm.",
        [("find_sights", {"city": "Porto"}), ("get_weather", {"city": "Porto"}), ("book", {})],
    ),
}


def answer(message: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    return ANSWERS.get(message, ("I cannot help with that.", []))
