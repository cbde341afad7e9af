"""Which conversation a trace is part of, as agentevals 0.11 groups traces
(``genai/grouping.py``): the first identity present, the spans in start order — the resource's
``agentevals.session_name``, then ``gen_ai.conversation.id`` on a span then on the resource,
then ``session.id`` the same way; none, and the trace stands alone. Values are the producer's
text, coerced and capped before use. Pure."""

from __future__ import annotations

from typing import Any

from ci_eval.connectors.trace_shapes import Span

CONVERSATION_ID = "gen_ai.conversation.id"
SESSION_ID = "session.id"
SESSION_NAME = "agentevals.session_name"


def conversation_key(spans: list[Span]) -> tuple[str, str] | None:
    """agentevals' ``conversation_key``: the first identity present, spans in start order."""
    ordered = sorted(spans, key=lambda s: (s.start, s.span_id))
    for span in ordered:
        if (name := key_text(span.resource.get(SESSION_NAME))) is not None:
            return "name", name
    for key in (CONVERSATION_ID, SESSION_ID):
        for attributes in [s.attributes for s in ordered] + [s.resource for s in ordered]:
            if (value := key_text(attributes.get(key))) is not None:
                return key, value
    return None


def key_text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()[:256]
    return text or None
