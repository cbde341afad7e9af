"""The sample agent's brain: deterministic, LLM-free, standard library only.

It answers weather, local-time and arithmetic questions through tool calls, the way an LLM agent
would, so that eval sets have real trajectories to score. Shared by the ADK agent (agent.py) and
the JSON-lines command agent (command_agent.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

WEATHER = {
    "Paris": {"condition": "sunny", "temp_c": 22},
    "London": {"condition": "rainy", "temp_c": 15},
    "Tokyo": {"condition": "cloudy", "temp_c": 18},
}
TIMES = {"Paris": "14:00", "London": "13:00", "Tokyo": "21:00"}
GREETING = "Hello! I can tell you the weather or the time in a city."
# asked when the weather is wanted without a city: the answer comes in the user's next turn
WHICH_CITY = "Which city would you like the weather for?"
_OPS = {
    "plus": "+",
    "minus": "-",
    "times": "*",
    "divided by": "/",
    "+": "+",
    "-": "-",
    "*": "*",
    "x": "*",
    "/": "/",
}
_ARITH = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*(plus|minus|times|divided by|[-+*/x])\s*(-?\d+(?:\.\d+)?)"
)


@dataclass
class ToolCall:
    name: str
    args: dict[str, Any]
    result: dict[str, Any]


@dataclass
class Reply:
    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""


def get_weather(city: str) -> dict[str, Any]:
    return dict(WEATHER[city]) if city in WEATHER else {"error": f"unknown city {city}"}


def get_time(city: str) -> dict[str, Any]:
    return {"time": TIMES[city]} if city in TIMES else {"error": f"unknown city {city}"}


def calculate(expression: str) -> dict[str, Any]:
    left, op, right = expression.split(" ")
    a, b = float(left), float(right)
    value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else float("nan")}[op]
    return {"result": int(value) if value == int(value) else round(value, 6)}


def _number(text: str) -> str:
    return str(int(float(text))) if float(text) == int(float(text)) else text


def _named_city(message: str) -> str | None:
    """A bare answer to WHICH_CITY: "Paris", "Paris, please", "I'm in Tokyo"."""
    words = re.findall(r"\b[A-Z][a-zA-Z]+\b", message)
    known = [w for w in words if w in WEATHER]
    others = [w for w in words if w not in ("I", "In", "The", "It", "Please", "Thanks")]
    return (known or others or [None])[0]


def respond(message: str, previous: str | None = None) -> Reply:
    """The reply to one user message; ``previous`` is the agent's last reply in this session
    (the agent remembers that it asked for a city)."""
    lowered = message.lower()
    city_match = re.search(r"\bin\s+([A-Z][a-zA-Z]+)", message)
    city = city_match.group(1) if city_match else None
    reply = Reply()
    texts = []
    if previous == WHICH_CITY and not city:
        city = _named_city(message)
        if city:
            lowered += " weather"
    if not city and "weather" in lowered:
        reply.text = WHICH_CITY
        return reply
    if city and "weather" in lowered:
        result = get_weather(city)
        reply.calls.append(ToolCall("get_weather", {"city": city}, result))
        texts.append(
            f"Sorry, I do not know the weather in {city}."
            if "error" in result
            else f"It is {result['condition']} in {city}, {result['temp_c']} degrees."
        )
    if city and "time" in lowered:
        result = get_time(city)
        reply.calls.append(ToolCall("get_time", {"city": city}, result))
        texts.append(
            f"Sorry, I do not know the time in {city}."
            if "error" in result
            else f"The local time in {city} is {result['time']}."
        )
    arith = _ARITH.search(lowered)
    if arith and not texts:
        expression = f"{_number(arith.group(1))} {_OPS[arith.group(2)]} {_number(arith.group(3))}"
        result = calculate(expression)
        reply.calls.append(ToolCall("calculate", {"expression": expression}, result))
        texts.append(f"{expression} = {result['result']}")
    if not texts:
        greeting = re.match(r"\s*(hi|hello|hey)\b", lowered)
        texts.append(
            GREETING
            if greeting
            else "Sorry, I can only help with the weather, the time and arithmetic."
        )
    reply.text = " ".join(texts)
    return reply
