"""What trpc-agent-go's LLM judges put into their prompts, rendered as its Go code renders it.

Sources: trpc-group/trpc-agent-go at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1,
``evaluation/evaluator/llm/operator/messagesconstructor/`` (``internal/content/content.go``,
``knowledge.go``, ``grounding.go``, one constructor per evaluator) and ``prompt/text.go`` with
``internal/prompt/core/text.go`` (the template judge's ``{{name}}`` syntax). The prompts are
trpc's own text, shipped in ``trpc_judge_prompts/`` (see its NOTICE.md); Go's
``text/template`` fills ``{{.Field}}`` with the value as is, which :func:`render` does.

Values trpc marshals to JSON are written as Go's ``encoding/json`` writes them
(:func:`go_json`): map keys sorted, struct fields in declaration order, numbers as float64,
``<``, ``>`` and ``&`` escaped unless the encoder turned that off. Pure: the templates are
read once from the package, nothing else.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal
from importlib import resources
from typing import Any

from ci_eval.model import Content

NO_KNOWLEDGE = "No knowledge search results were found."
NO_VALIDATION_CONTEXT = "No validation context was captured."
# content/knowledge.go: the tools whose results are retrieved knowledge
KNOWLEDGE_TOOLS = frozenset({"knowledge_search", "knowledge_search_with_agentic_filter"})
_FIELD = re.compile(r"\{\{\.(\w+)\}\}")


class GoStruct(list[tuple[str, Any]]):
    """A Go struct's fields as ``encoding/json`` writes them: in order, omitted ones left out
    by the caller (a dict is a Go map: its keys are sorted)."""


class GoNumber(str):
    """A JSON number kept as its text (Go's ``json.Number``, ``Decoder.UseNumber``)."""


class GoJsonError(ValueError):
    """A value Go's encoder refuses (NaN, infinities)."""


@functools.cache
def template(name: str) -> str:
    """One of trpc's prompts as shipped (the Go raw string, byte for byte)."""
    shipped = resources.files("ci_eval.metrics").joinpath("trpc_judge_prompts").joinpath(name)
    return shipped.read_bytes().decode("utf-8")


def render(name: str, **values: str) -> str:
    """``text/template``'s Execute of one of trpc's prompts: each ``{{.Field}}`` its value, in
    one pass (a value holding ``{{.X}}`` stays as written)."""
    return _FIELD.sub(lambda m: values[m.group(1)], template(name))


# --- Go's encoding/json ---------------------------------------------------------------------


def _go_float(value: float) -> str:
    """strconv.AppendFloat as encoding/json calls it: shortest digits, 'f' format between
    1e-6 and 1e21, else 'e' with a two-digit exponent cut to its digits (1e-07 -> 1e-7)."""
    if math.isnan(value) or math.isinf(value):
        raise GoJsonError(f"json: unsupported value: {value}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = format(Decimal(repr(value)), "f")
        return text[:-2] if text.endswith(".0") else text
    mantissa, _, exponent = repr(value).partition("e")
    mantissa = mantissa[:-2] if mantissa.endswith(".0") else mantissa
    sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits}"


def _go_string(text: str, escape_html: bool) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif char == "\b":
            out.append("\\b")
        elif char == "\f":
            out.append("\\f")
        elif code < 0x20 or code in (0x2028, 0x2029) or (escape_html and char in "<>&"):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def go_json(value: Any, indent: str | None = None, escape_html: bool = True) -> str:
    """``json.Marshal`` (or ``MarshalIndent(v, "", indent)``) of a decoded JSON value."""

    def encode(item: Any, depth: int) -> str:
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, GoNumber):
            return str(item)
        if isinstance(item, str):
            return _go_string(item, escape_html)
        if isinstance(item, int | float):
            # a JSON number decoded into Go's `any` is a float64
            return _go_float(float(item))
        if isinstance(item, GoStruct):
            pairs = list(item)
        elif isinstance(item, dict):
            pairs = sorted(((str(k), v) for k, v in item.items()), key=lambda p: p[0])
        elif isinstance(item, list | tuple):
            return wrap("[", "]", [encode(v, depth + 1) for v in item], depth)
        else:
            raise GoJsonError(f"json: unsupported type {type(item).__name__}")
        colon = ": " if indent is not None else ":"
        members = [_go_string(k, escape_html) + colon + encode(v, depth + 1) for k, v in pairs]
        return wrap("{", "}", members, depth)

    def wrap(open_: str, close: str, members: list[str], depth: int) -> str:
        if not members:
            return open_ + close
        if indent is None:
            return open_ + ",".join(members) + close
        inner = "\n" + indent * (depth + 1)
        return open_ + inner + ("," + inner).join(members) + "\n" + indent * depth + close

    return encode(value, 0)


# --- what the constructors read from an invocation -------------------------------------------


def message_text(content: Content | None) -> str:
    """content.ExtractTextFromContent: a message's content, "" for none."""
    return content.text() if content is not None else ""


def rubrics_text(rubrics: list[dict[str, Any]]) -> str:
    """content.ExtractRubrics: ``id: text`` per rubric that has content, each line ended."""
    return "".join(
        f"{r.get('id') or ''}: {(r.get('content') or {}).get('text') or ''}\n"
        for r in rubrics
        if isinstance(r, dict) and r.get("content") is not None
    )


def _go_field(obj: dict[str, Any], name: str) -> Any:
    """A struct field as Go's decoder finds it: the exact key, else one equal but for case."""
    if name in obj:
        return obj[name]
    for key, value in obj.items():
        if key.lower() == name.lower():
            return value
    return None


def _knowledge_response(result: Any) -> GoStruct:
    """tool.KnowledgeSearchResponse decoded from a tool result and marshalled back: documents
    (id, text, metadata, score), message; what Go's decoder rejects is an error here too."""
    if result is None:
        return GoStruct([("documents", None)])
    if not isinstance(result, dict):
        raise ValueError(
            "json: cannot unmarshal into Go value of type tool.KnowledgeSearchResponse"
        )
    documents = _go_field(result, "documents")
    if documents is not None and not isinstance(documents, list):
        raise ValueError(
            "json: cannot unmarshal into field documents of type []*tool.DocumentResult"
        )
    docs: list[Any] | None = None
    if documents is not None:
        docs = []
        for doc in documents:
            if doc is None:
                docs.append(None)
                continue
            if not isinstance(doc, dict):
                raise ValueError("json: cannot unmarshal into Go value of type tool.DocumentResult")
            fields = {k: _go_field(doc, k) for k in ("id", "text", "metadata", "score")}
            for key, kind in (("id", str), ("text", str), ("metadata", dict)):
                if fields[key] is not None and not isinstance(fields[key], kind):
                    raise ValueError(f"json: cannot unmarshal into field {key}")
            score = fields["score"]
            if score is not None and (
                isinstance(score, bool) or not isinstance(score, int | float)
            ):
                raise ValueError("json: cannot unmarshal into field score of type float64")
            doc_struct = GoStruct()
            if fields["id"]:
                doc_struct.append(("id", fields["id"]))
            doc_struct.append(("text", fields["text"] or ""))
            if fields["metadata"]:
                doc_struct.append(("metadata", fields["metadata"]))
            doc_struct.append(("score", float(score or 0)))
            docs.append(doc_struct)
    out = GoStruct([("documents", docs)])
    message = _go_field(result, "message")
    if message is not None and not isinstance(message, str):
        raise ValueError("json: cannot unmarshal into field message of type string")
    if message:
        out.append(("message", message))
    return out


def knowledge_recall(tools: list[dict[str, Any]]) -> str:
    """content.ExtractKnowledgeRecall: each knowledge-search result re-marshalled, one a line."""
    lines = []
    for tool in tools:
        if tool["name"] not in KNOWLEDGE_TOOLS:
            continue
        try:
            response = _knowledge_response(tool["result"])
        except ValueError as exc:
            raise ValueError(f"parse tool {tool['name']} response: {exc}") from None
        lines.append(go_json(response) + "\n")
    return "".join(lines)


def grounding_context(
    user: Content | None, context_messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> str:
    """content.ExtractGroundingContext of one invocation: the user prompt, context messages,
    tool calls and tool outputs (indented JSON), each section only when it has something."""
    sections = []
    prompt = message_text(user).strip()
    if prompt:
        sections.append("User prompt:\n" + prompt)
    lines = []
    for message in context_messages:
        text = str(message.get("content") or "").strip() if isinstance(message, dict) else ""
        if text:
            lines.append(f"- [{message.get('role') or ''}] {text}\n")
    messages = "".join(lines).strip()
    if messages:
        sections.append("Context messages:\n" + messages)
    calls, outputs = [], []
    for tool in tools:
        call, output = GoStruct(), GoStruct()
        for struct, key, value in (
            (call, "id", tool.get("id")),
            (call, "name", tool.get("name")),
            (call, "args", tool.get("arguments")),
            (output, "id", tool.get("id")),
            (output, "name", tool.get("name")),
            (output, "output", tool.get("result")),
        ):
            # omitempty: a nil interface is left out, and so is an empty string field (id,
            # name); an empty string held by an interface (args, output) is kept
            if value is None or (value == "" and key in ("id", "name")):
                continue
            struct.append((key, value))
        calls.append(call)
        outputs.append(output)
    for title, payload in (("tool_calls", calls), ("tool_outputs", outputs)):
        text = go_json(payload, indent="  ").strip()
        if text and text != "[]":
            sections.append(f"{title}:\n{text}")
    return "\n\n".join(sections) if sections else NO_VALIDATION_CONTEXT
