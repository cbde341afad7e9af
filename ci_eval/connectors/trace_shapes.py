"""The shapes a trace file comes in, each read into one list of :class:`Span`.

The shapes agentevals-cli 0.11 reads (``agentevals/loader/auto.py``, ``otel/decode.py``), one
reader each, registered in :data:`SHAPES` in the order they are tried:

- **Jaeger** JSON: ``{"data": [{"traceID", "spans": [{"spanID", "operationName", "tags"}]}]}``;
- **OTLP JSON** as the collector's file exporter writes it (``resourceSpans`` → ``scopeSpans`` →
  ``spans``), and its variants: protobuf field names (``resource_spans``, ``span_id``; Go's
  ``UseProtoNames``), Tempo's export (``batches``, ``instrumentationLibrarySpans``, the
  ``{"trace": …}`` wrapper), attributes as a flat or nested object, and the log records of
  ``resourceLogs`` (OpenTelemetry's GenAI log events), kept with the span they name;
- **bare spans**: a list of OTLP span objects with no resource around them.

A file of **JSON lines** (one document or bare span per line, as a collector's file exporter
appends them) is read line by line (:func:`spans_of_lines`), each line by the readers above.

Every reader is strict where agentevals is lenient: a malformed span is one input error naming
its JSON path, never a span dropped in silence. Pure: JSON values in, spans out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ci_eval.errors import InputError

# a trace file is read whole; these bound what agent text can make of it
MAX_SPANS = 200_000
MAX_VALUE_DEPTH = 64  # an attribute's nested AnyValue, as agentevals bounds it


@dataclass
class SpanEvent:
    """A span event, or a log record that names the span (a GenAI log event)."""

    name: str
    attributes: dict[str, Any]
    body: Any = None  # a log record's body


@dataclass
class Span:
    """One span, whichever shape it came in."""

    span_id: str
    parent_id: str | None
    name: str
    start: int  # only compared within one file
    order: int  # its place in the file: ties in start time keep it
    attributes: dict[str, Any]
    where: str  # its JSON path, for errors
    trace_id: str = ""
    resource: dict[str, Any] = field(default_factory=dict)  # its resource's attributes
    events: list[SpanEvent] = field(default_factory=list)
    status_code: int = 0  # OTLP's: 0 unset, 1 ok, 2 error


STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_JAEGER_STATUS = {"UNSET": STATUS_UNSET, "OK": STATUS_OK, "ERROR": STATUS_ERROR}


def otlp_status(raw: dict[str, Any]) -> int:
    """``status.code`` as agentevals 0.11 decodes it: a number (or its text) or the enum's name;
    anything else is unset."""
    status = raw.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    if isinstance(code, str) and code in _STATUS_NAMES:
        return _STATUS_NAMES[code]
    if isinstance(code, bool):
        return STATUS_UNSET
    for number in (int, float) if isinstance(code, str | int | float) else ():
        try:
            return int(number(code))
        except (ValueError, OverflowError):
            continue
    return STATUS_UNSET


def jaeger_status(tags: dict[str, Any]) -> int:
    """Jaeger's ``otel.status_code`` tag (any case), else error when its ``error`` tag is true."""
    status = _JAEGER_STATUS.get(str(tags.get("otel.status_code", "")).upper(), STATUS_UNSET)
    return STATUS_ERROR if status == STATUS_UNSET and tags.get("error") is True else status


def error(message: str, path: str, where: str) -> InputError:
    return InputError(message, path=path, json_path=where)


def as_list(value: Any, path: str, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise error("expected a list", path, where)
    return value


def as_object(value: Any, path: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise error("expected an object", path, where)
    return value


def _key(data: dict[str, Any], *names: str) -> str:
    """The first of ``names`` the object has (the first when it has none)."""
    return next((name for name in names if name in data), names[0])


# --- Jaeger ---------------------------------------------------------------------------------


def _is_jaeger(data: Any) -> bool:
    traces = data.get("data") if isinstance(data, dict) else None
    return (
        isinstance(traces, list)
        and bool(traces)
        and isinstance(traces[0], dict)
        and "spans" in traces[0]
    )


def _jaeger_spans(data: Any, path: str, first: int) -> list[Span]:
    spans: list[Span] = []
    for t, trace in enumerate(as_list(data.get("data"), path, "$.data")):
        trace = as_object(trace, path, f"$.data[{t}]")
        trace_id = trace.get("traceID") if isinstance(trace.get("traceID"), str) else ""
        for s, raw in enumerate(as_list(trace.get("spans"), path, f"$.data[{t}].spans")):
            where = f"$.data[{t}].spans[{s}]"
            raw = as_object(raw, path, where)
            parent = raw.get("parentSpanID")
            for r, ref in enumerate(as_list(raw.get("references"), path, f"{where}.references")):
                ref = as_object(ref, path, f"{where}.references[{r}]")
                if ref.get("refType") == "CHILD_OF":
                    parent = ref.get("spanID")
            attributes: dict[str, Any] = {}
            for g, tag in enumerate(as_list(raw.get("tags"), path, f"{where}.tags")):
                tag = as_object(tag, path, f"{where}.tags[{g}]")
                if isinstance(tag.get("key"), str):
                    attributes[tag["key"]] = tag.get("value")
            span = _span(raw, ("spanID",), ("operationName",), ("startTime",), parent, path, where)
            span.order, span.attributes = first + len(spans), attributes
            span.status_code = jaeger_status(attributes)
            span.trace_id = raw.get("traceID") if isinstance(raw.get("traceID"), str) else trace_id
            _bounded(span.order, path, where)
            spans.append(span)
    return spans


# --- OTLP JSON ------------------------------------------------------------------------------


_ROOTS = ("resourceSpans", "resource_spans", "batches")
_LOG_ROOTS = ("resourceLogs", "resource_logs")


def _is_otlp(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    if any(key in data for key in (*_ROOTS, *_LOG_ROOTS)):
        return True
    inner = data.get("trace")  # Tempo v2's wrapper
    return isinstance(inner, dict) and any(key in inner for key in _ROOTS)


def value_of(value: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` (camelCase or protobuf names) as a plain value."""
    if not isinstance(value, dict) or depth > MAX_VALUE_DEPTH:
        return None
    if "stringValue" in value:  # nearly every attribute a trace holds
        return value["stringValue"]
    for kind in ("string", "bool", "int", "double", "bytes"):
        for key in (f"{kind}Value", f"{kind}_value"):
            if key in value:
                found = value[key]
                if kind == "int" and isinstance(found, str):  # 64-bit ints are JSON strings
                    try:
                        return int(found)
                    except ValueError:
                        return found
                return found
    for key in ("arrayValue", "array_value"):
        if key in value:
            inner = value[key] if isinstance(value[key], dict) else {}
            items = inner.get("values") if isinstance(inner.get("values"), list) else []
            return [value_of(item, depth + 1) for item in items]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            inner = value[key] if isinstance(value[key], dict) else {}
            items = inner.get("values") if isinstance(inner.get("values"), list) else []
            return {
                item["key"]: value_of(item.get("value"), depth + 1)
                for item in items
                if isinstance(item, dict) and isinstance(item.get("key"), str)
            }
    return None


def _flattened(data: dict[str, Any], prefix: str, out: dict[str, Any], depth: int) -> None:
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and depth < MAX_VALUE_DEPTH:
            _flattened(value, name, out, depth + 1)
        else:
            out[name] = value


def attributes_of(raw: Any, path: str, where: str) -> dict[str, Any]:
    """OTLP's ``[{"key", "value": AnyValue}]``, or an object of attributes (flat or nested, as
    JSON-column exports write them; nested keys joined with dots)."""
    out: dict[str, Any] = {}
    if isinstance(raw, dict):
        _flattened(raw, "", out, 0)
        return out
    for a, attr in enumerate(as_list(raw, path, where)):
        if not isinstance(attr, dict):  # the JSON path only when it is said
            raise error("expected an object", path, f"{where}[{a}]")
        key = attr.get("key")
        if isinstance(key, str):
            out[key] = value_of(attr.get("value"))
    return out


def _otlp_spans(data: Any, path: str, first: int) -> list[Span]:
    base = "$"
    inner = data.get("trace")
    if not any(key in data for key in (*_ROOTS, *_LOG_ROOTS)) and isinstance(inner, dict):
        data, base = inner, "$.trace"
    spans: list[Span] = []
    top = _key(data, *_ROOTS)
    for r, resource in enumerate(as_list(data.get(top), path, f"{base}.{top}")):
        at = f"{base}.{top}[{r}]"
        resource = as_object(resource, path, at)
        described = resource.get("resource")
        attributes_here = (
            attributes_of(described.get("attributes"), path, f"{at}.resource.attributes")
            if isinstance(described, dict)
            else {}
        )
        scope_key = _key(
            resource,
            "scopeSpans",
            "instrumentationLibrarySpans",
            "instrumentation_library_spans",
            "scope_spans",
        )
        for c, scope in enumerate(as_list(resource.get(scope_key), path, f"{at}.{scope_key}")):
            scope = as_object(scope, path, f"{at}.{scope_key}[{c}]")
            raws = as_list(scope.get("spans"), path, f"{at}.{scope_key}[{c}].spans")
            for s, raw in enumerate(raws):
                span = _otlp_span(raw, path, f"{at}.{scope_key}[{c}].spans[{s}]")
                span.order, span.resource = first + len(spans), attributes_here
                _bounded(span.order, path, span.where)
                spans.append(span)
    _attach_logs(data, spans, path, base)
    return spans


def _otlp_span(raw: Any, path: str, where: str) -> Span:
    raw = as_object(raw, path, where)
    parent = raw.get("parentSpanId") or raw.get("parent_span_id") or None
    span = _span(
        raw,
        ("spanId", "span_id"),
        ("name",),
        ("startTimeUnixNano", "start_time_unix_nano"),
        parent,
        path,
        where,
    )
    span.attributes = attributes_of(raw.get("attributes"), path, f"{where}.attributes")
    span.status_code = otlp_status(raw)
    trace_id = raw.get("traceId") or raw.get("trace_id")
    span.trace_id = trace_id if isinstance(trace_id, str) else ""
    for e, event in enumerate(as_list(raw.get("events"), path, f"{where}.events")):
        event = as_object(event, path, f"{where}.events[{e}]")
        name = event.get("name") if isinstance(event.get("name"), str) else ""
        attributes = attributes_of(event.get("attributes"), path, f"{where}.events[{e}].attributes")
        span.events.append(SpanEvent(name, attributes))
    return span


def _attach_logs(data: dict[str, Any], spans: list[Span], path: str, base: str) -> None:
    """``resourceLogs``' records that name a span of the file, as that span's events (the
    GenAI semantic conventions' log events carry a conversation's messages)."""
    top = _key(data, *_LOG_ROOTS)
    if top not in data:
        return
    by_id = {span.span_id: span for span in spans}
    for r, resource in enumerate(as_list(data.get(top), path, f"{base}.{top}")):
        at = f"{base}.{top}[{r}]"
        resource = as_object(resource, path, at)
        scope_key = _key(resource, "scopeLogs", "instrumentationLibraryLogs", "scope_logs")
        for c, scope in enumerate(as_list(resource.get(scope_key), path, f"{at}.{scope_key}")):
            scope = as_object(scope, path, f"{at}.{scope_key}[{c}]")
            records_key = _key(scope, "logRecords", "log_records")
            where = f"{at}.{scope_key}[{c}].{records_key}"
            for n, record in enumerate(as_list(scope.get(records_key), path, where)):
                record = as_object(record, path, f"{where}[{n}]")
                span = by_id.get(record.get("spanId") or record.get("span_id") or "")
                if span is None:
                    continue
                attributes = attributes_of(record.get("attributes"), path, f"{where}[{n}]")
                name = record.get("eventName") or record.get("event_name")
                for key in ("event.name", "otel.event.name"):
                    name = name or attributes.get(key)
                span.events.append(
                    SpanEvent(str(name or ""), attributes, value_of(record.get("body")))
                )


# --- bare spans -----------------------------------------------------------------------------


def _is_bare(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and ("spanId" in item or "span_id" in item) for item in data)
    )


def _bare_spans(data: Any, path: str, first: int) -> list[Span]:
    spans = []
    for s, raw in enumerate(data):
        span = _otlp_span(raw, path, f"$[{s}]")
        span.order = first + s
        _bounded(span.order, path, span.where)
        spans.append(span)
    return spans


# --- the registry ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceShape:
    """One shape of trace file: how it is told (by its top level) and read."""

    name: str
    recognise: Callable[[Any], bool]
    read: Callable[[Any, str, int], list[Span]]  # (data, path, first span's order)


SHAPES: list[TraceShape] = []


def register_shape(shape: TraceShape) -> TraceShape:
    SHAPES.append(shape)
    return shape


register_shape(TraceShape("jaeger", _is_jaeger, _jaeger_spans))
register_shape(TraceShape("otlp", _is_otlp, _otlp_spans))
register_shape(TraceShape("otlp-spans", _is_bare, _bare_spans))


def shape_of(data: Any) -> TraceShape | None:
    return next((shape for shape in SHAPES if shape.recognise(data)), None)


def spans_of(data: Any, path: str) -> list[Span]:
    """The spans of a trace file's JSON value (one of :data:`SHAPES`)."""
    shape = shape_of(data)
    if shape is None:
        raise InputError("not a trace file of any shape read", path=path)
    return shape.read(data, path, 0)


def spans_of_lines(lines: list[tuple[int, Any]], path: str) -> list[Span]:
    """A JSON-lines file's spans: each (line number, JSON value) a document or a bare span."""
    spans: list[Span] = []
    for number, data in lines:
        try:
            if isinstance(data, dict) and ("spanId" in data or "span_id" in data):
                span = _otlp_span(data, path, "$")
                span.order = len(spans)
                _bounded(span.order, path, "$")
                spans.append(span)
                continue
            shape = shape_of(data)
            if shape is None:
                raise error("not a trace document or an OTLP span", path, "$")
            spans += shape.read(data, path, len(spans))
        except InputError as exc:
            raise InputError(exc.message, path=path, line=number, json_path=exc.json_path) from None
    return spans


def _bounded(order: int, path: str, where: str) -> None:
    if order >= MAX_SPANS:
        raise error(f"more than {MAX_SPANS} spans", path, where)


def _span(
    raw: dict[str, Any],
    id_keys: tuple[str, ...],
    name_keys: tuple[str, ...],
    start_keys: tuple[str, ...],
    parent: Any,
    path: str,
    where: str,
) -> Span:
    id_key, name_key, start_key = _key(raw, *id_keys), _key(raw, *name_keys), _key(raw, *start_keys)
    span_id, name = raw.get(id_key), raw.get(name_key)
    if not isinstance(span_id, str) or not span_id:
        raise error(f"{id_key}: expected a non-empty string", path, where)
    if not isinstance(name, str):
        raise error(f"{name_key}: expected a string", path, where)
    start = raw.get(start_key, 0)
    try:  # OTLP writes its 64-bit times as strings
        start = int(start)
    except (TypeError, ValueError):
        raise error(f"{start_key}: expected a number", path, where) from None
    return Span(span_id, parent if isinstance(parent, str) else None, name, start, 0, {}, where)
