"""One OTLP/HTTP trace request's body — protobuf, decoded with the ``opentelemetry-proto``
package, or OTLP/JSON — as the spans :mod:`trace_shapes` reads from an OTLP JSON file.

Protobuf decodes to OTLP/JSON's own shape (``google.protobuf.json_format``, camelCase) except for
its ids, which protobuf's JSON mapping writes in base64 and OTLP/JSON in hex: they are rewritten
to hex, so a span reads the same whichever encoding its exporter chose. Decoding is bounded as a
file's reading is: protobuf's own nesting limit (100 messages deep), then :mod:`trace_shapes`'
limits on values, and JSON through the bounded parser every JSON file goes through."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ci_eval.connectors.trace_shapes import Span, spans_of
from ci_eval.errors import InputError
from ci_eval.io.jsonpos import parse_json
from ci_eval.net.otlp_receiver import JSON, PROTOBUF

_IDS = ("traceId", "spanId", "parentSpanId")


class Malformed(ValueError):
    """The request is not an OTLP trace export (one line saying why)."""


def decode(body: bytes, kind: str, where: str = "an OTLP request") -> list[Span]:
    """The spans of one request's body (``kind``: PROTOBUF or JSON); Malformed when it is
    not a trace export."""
    if kind == PROTOBUF:
        document = _protobuf(body)
    elif kind == JSON:
        try:
            document = parse_json(body.decode("utf-8", "replace"), where, False).data
        except InputError as exc:
            raise Malformed(f"not JSON: {exc.message}") from None
    else:
        raise Malformed(f"content type {kind}: expected {PROTOBUF} or {JSON}")
    if not isinstance(document, dict):
        raise Malformed("not an OTLP trace export (expected an object with resourceSpans)")
    if not document:
        return []
    try:
        return spans_of(document, where)
    except InputError as exc:
        at = f" at {exc.json_path}" if exc.json_path else ""
        raise Malformed(f"{exc.message}{at}") from None


def _protobuf(body: bytes) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        message = ExportTraceServiceRequest.FromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        why = str(exc) or "cannot decode"
        raise Malformed(f"not an OTLP protobuf trace export ({why})") from None
    document = MessageToDict(message)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return document


def _hex_ids(item: dict[str, Any]) -> None:
    for key in _IDS:
        value = item.get(key)
        if isinstance(value, str):
            try:
                item[key] = base64.b64decode(value, validate=True).hex()
            except (binascii.Error, ValueError):
                item[key] = ""
