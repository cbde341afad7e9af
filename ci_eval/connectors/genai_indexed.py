"""OpenLLMetry's legacy indexed messages as trace_genai reads them (agentevals-cli 0.11.0,
``genai/overlay.py`` ``_legacy_indexed``): ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``
attributes — ``role`` (default ``user``), ``content``, ``finish_reason``,
``tool_calls.M.{id,name,arguments}``, and a ``tool`` message's ``tool_call_id`` with its
``content`` as the response — read only when the span's messages come from nowhere else."""

from __future__ import annotations

from typing import Any

from ci_eval.connectors import genai_messages as gm
from ci_eval.connectors.genai_messages import Message

PROMPT, COMPLETION = "gen_ai.prompt.", "gen_ai.completion."


def _indexed(attributes: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    by_index: dict[int, dict[str, Any]] = {}
    for name, value in attributes.items():
        if not name.startswith(prefix):
            continue
        index, _, sub = name[len(prefix) :].partition(".")
        if index.isdigit() and sub:
            by_index.setdefault(int(index), {})[sub] = value
    return by_index


def _tool_calls(entry: dict[str, Any]) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for sub, value in entry.items():
        head, _, rest = sub.partition(".")
        number, _, field_name = rest.partition(".")
        if head == "tool_calls" and number.isdigit() and field_name:
            calls.setdefault(int(number), {})[field_name] = value
    return [
        {
            "type": "tool_call",
            "id": call.get("id"),
            "name": call["name"],
            "arguments": gm.parsed(call.get("arguments")),
        }
        for call in (calls[n] for n in sorted(calls))
        if isinstance(call.get("name"), str)
    ]


def _message(entry: dict[str, Any]) -> Message | None:
    role = entry.get("role") if isinstance(entry.get("role"), str) else "user"
    content = entry.get("content")
    if role == "tool":
        parts = [
            {
                "type": "tool_call_response",
                "id": entry.get("tool_call_id"),
                "response": gm.parsed(content),
            }
        ]
    else:
        parts = gm.content_parts(content) + _tool_calls(entry)
    message = gm.message_of({"role": role, "parts": parts})
    if message is not None and isinstance(entry.get("finish_reason"), str):
        message["finish_reason"] = entry["finish_reason"]
    return message


def indexed_messages(attributes: dict[str, Any], prefix: str) -> list[Message] | None:
    """The span's ``{prefix}N.*`` messages in index order; None when there are none with
    content (agentevals' ``parse_messages``)."""
    by_index = _indexed(attributes, prefix)
    messages = [m for m in (_message(by_index[i]) for i in sorted(by_index)) if m is not None]
    return messages if gm.has_content(messages) else None
