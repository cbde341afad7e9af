"""The worker's protocol: one JSON object a line each way, sizes bounded.

A request is ``{"id": N, "op": NAME, "args": {...}}``; its answer ``{"id": N, "ok": {...}}`` or
``{"id": N, "error": MESSAGE, "kind": KIND}`` (KIND: ``not_applicable``, ``failure``,
``input``, ``agent``), each with ``files``: the workspace files the worker executed since its
previous answer. What the worker answers is data from code a pull request controls: the
trusted side reads it as it reads an agent's reply (bounded, checked, never executed).
"""

from __future__ import annotations

import json
from typing import Any

MAX_LINE = 32 * 1024 * 1024  # an answer (an ADK turn's events, a metric's details) at most


class ProtocolError(Exception):
    """The other side sent something that is not a message of this protocol."""


def encode(message: dict[str, Any]) -> bytes:
    """A message as one line; anything JSON cannot hold becomes its repr."""
    text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), default=repr)
    return text.encode("ascii") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line read (at most MAX_LINE + 1 bytes) as a message."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a message over {MAX_LINE // (1024 * 1024)} MB")
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("id"), int):
        raise ProtocolError("not a message (an object with an integer id)")
    return message
