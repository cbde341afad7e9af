"""GenAI messages as trace_genai reads them (agentevals-cli 0.11.0, ``genai/messages.py`` and
the message sources of ``genai/overlay.py``): ``{"role", "parts": [{"type": "text" |
"tool_call" | "tool_call_response" | …}]}`` from the semantic conventions' JSON, OpenAI-style
``content``, Google ``Content`` (ADK's), and the deprecated per-message events. Unlike
agentevals, a messages value that is not JSON or not a list of messages is an input error
naming its span."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ci_eval.connectors.trace_shapes import Span
from ci_eval.connectors.trace_shapes import error as _error
from ci_eval.errors import InputError
from ci_eval.io.jsonpos import parse_json

PLACEHOLDERS = frozenset({"<REDACTED>", "<elided>", ""})
ADK_LLM_REQUEST = "gcp.vertex.agent.llm_request"
ADK_LLM_RESPONSE = "gcp.vertex.agent.llm_response"

Message = dict[str, Any]

# --- messages -------------------------------------------------------------------------------


def placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.strip() in PLACEHOLDERS


def json_of(value: str, key: str, span: Span, path: str) -> Any:
    try:
        return parse_json(value, path, positions_wanted=False).data
    except InputError as exc:
        raise _error(f"{key}: not JSON ({exc.message})", path, span.where) from None


def text_part(content: Any) -> dict[str, Any]:
    return {"type": "text", "content": content}


def google_parts(parts: Iterable[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("text") is not None:
            out.append(
                {"type": "reasoning" if part.get("thought") else "text", "content": part["text"]}
            )
        elif isinstance(part.get("function_call"), dict):
            call = part["function_call"]
            out.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("args"),
                }
            )
        elif isinstance(part.get("function_response"), dict):
            response = part["function_response"]
            out.append(
                {
                    "type": "tool_call_response",
                    "id": response.get("id"),
                    "name": response.get("name"),
                    "response": response.get("response"),
                }
            )
    return out


def content_parts(content: Any) -> list[dict[str, Any]]:
    """OpenAI-style ``content``: a string, typed items, or Google ``Content``."""
    if content is None or placeholder(content):
        return []
    if isinstance(content, str):
        return [text_part(content)]
    if isinstance(content, dict):
        if isinstance(content.get("parts"), list):
            return google_parts(content["parts"])
        return [text_part(json.dumps(content, sort_keys=True))]
    if isinstance(content, list):
        parts: list[dict[str, Any]] = []
        for item in content:
            if isinstance(item, str):
                parts.append(text_part(item))
            elif isinstance(item, dict):
                kind = item.get("type")
                if kind == "text" and "content" in item:
                    parts.append(dict(item))
                elif kind == "text" or "text" in item:
                    parts.append(text_part(item.get("text")))
                elif isinstance(kind, str):
                    parts.append(dict(item))
        return parts
    return [text_part(json.dumps(content))]


def message_of(raw: Any) -> Message | None:
    if not isinstance(raw, dict):
        return None
    role = raw.get("role") if isinstance(raw.get("role"), str) and raw.get("role") else "user"
    parts = raw.get("parts")
    if not isinstance(parts, list):
        parts = content_parts(raw.get("content")) if "content" in raw else []
    return {"role": role, "parts": [dict(p) for p in parts if isinstance(p, dict)]}


def has_content(messages: Iterable[Message]) -> bool:
    for message in messages:
        for part in message["parts"]:
            kind = part.get("type")
            if kind == "text":
                if not placeholder(part.get("content")) and part.get("content") is not None:
                    return True
            elif kind:
                return True
    return False


def messages_of(value: Any, key: str, span: Span, path: str) -> list[Message] | None:
    """A message list, the JSON text of one, or one message; None when absent, a placeholder
    or empty. Anything else is an input error (agentevals skips it)."""
    if value is None or placeholder(value):
        return None
    data = json_of(value, key, span, path) if isinstance(value, str) else value
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        raise _error(f"{key}: expected a list of messages", path, span.where)
    out = [m for m in map(message_of, data) if m is not None]
    return out if has_content(out) else None


def texts(messages: Iterable[Message] | None) -> str | None:
    chunks = []
    for message in messages or ():
        for part in message["parts"]:
            if part.get("type") != "text" or placeholder(part.get("content")):
                continue
            content = part.get("content")
            text = content if isinstance(content, str) else None
            if text is None and content is not None:
                text = json.dumps(content, sort_keys=True, default=str)
            if text:
                chunks.append(text)
    return "".join(chunks) or None


def user_turn(messages: list[Message] | None) -> list[Message]:
    """The trailing run of user messages with text."""
    out: list[Message] = []
    for message in reversed(messages or []):
        if message["role"] == "user" and texts([message]):
            out.append(message)
        elif out:
            break
    return out[::-1]


def parsed(value: Any) -> Any:
    """A JSON text's value, or the text itself when it is none (agentevals' ``_json_or_raw``)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def tool_calls_of(messages: Iterable[Message] | None) -> list[dict[str, Any]]:
    out = []
    for message in messages or ():
        for part in message["parts"]:
            name = part.get("name")
            if part.get("type") == "tool_call" and isinstance(name, str) and name:
                out.append(
                    {
                        "id": part.get("id") or None,
                        "name": name,
                        "arguments": parsed(part.get("arguments")),
                    }
                )
    return out


def tool_responses_of(messages: Iterable[Message] | None) -> list[dict[str, Any]]:
    return [
        {
            "id": part.get("id") or None,
            "name": part.get("name"),
            "response": parsed(part.get("response")),
        }
        for message in messages or ()
        for part in message["parts"]
        if part.get("type") == "tool_call_response"
    ]


def legacy_events(span: Span) -> tuple[list[Message], list[Message]]:
    """The deprecated per-message events: the span's own events, else its log records."""
    names = (
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
    )
    found = [e for e in span.events if e.name in names]
    events = [e for e in found if e.body is None] or [e for e in found if e.body is not None]
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in events:
        body: Any = event.attributes if event.body is None else event.body
        if isinstance(body, str):
            value = parsed(body)
            body = value if isinstance(value, dict) else {"content": body}
        body = body if isinstance(body, dict) else {}
        content = body.get("content")
        if event.name == "gen_ai.user.message":
            inputs.append({"role": "user", "parts": content_parts(content)})
        elif event.name == "gen_ai.assistant.message":
            inputs.append(
                {"role": "assistant", "parts": content_parts(content) + openai_calls(body)}
            )
        elif event.name == "gen_ai.tool.message":
            part = {
                "type": "tool_call_response",
                "id": body.get("id"),
                "response": parsed(content),
            }
            inputs.append({"role": "tool", "parts": [part]})
        else:
            message = body.get("message") if isinstance(body.get("message"), dict) else None
            if message is not None:
                parts = content_parts(message.get("content")) + openai_calls(message)
            else:
                parts = content_parts(content)
            outputs.append({"role": "assistant", "parts": parts})
    return [m for m in inputs if m["parts"]], [m for m in outputs if m["parts"]]


def openai_calls(body: dict[str, Any]) -> list[dict[str, Any]]:
    parts = []
    for call in body.get("tool_calls") if isinstance(body.get("tool_calls"), list) else []:
        if not isinstance(call, dict):
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        if isinstance(fn.get("name"), str):
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": fn["name"],
                    "arguments": parsed(fn.get("arguments")),
                }
            )
    return parts


def adk_messages(span: Span, path: str) -> tuple[list[Message] | None, list[Message] | None]:
    def read(key: str) -> Any:
        value = span.attributes.get(key)
        return json_of(value, key, span, path) if isinstance(value, str) else None

    inputs = outputs = None
    request = read(ADK_LLM_REQUEST)
    if isinstance(request, dict) and isinstance(request.get("contents"), list):
        found = [google_message(c, "user") for c in request["contents"]]
        inputs = [m for m in found if m and m["parts"]] or None
    response = read(ADK_LLM_RESPONSE)
    if isinstance(response, dict):
        message = google_message(response.get("content"), "assistant")
        outputs = [message] if message and message["parts"] else None
    return inputs, outputs


def google_message(content: Any, role: str) -> Message | None:
    if not isinstance(content, dict):
        return None
    parts = google_parts(content.get("parts") or [])
    role = content.get("role") if isinstance(content.get("role"), str) else role
    role = "assistant" if role == "model" else role
    if parts and all(p["type"] == "tool_call_response" for p in parts):
        role = "tool"
    return {"role": role, "parts": parts}
