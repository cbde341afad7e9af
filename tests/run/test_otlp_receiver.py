"""The OTLP/HTTP receiver ``--otlp`` starts, against hostile senders: a request too large
(before or after gzip), too deep, of ids no turn sent, a flood of spans for one turn, too many
senders at once, a sender that never finishes — each bounded, answered as OTLP exporters
expect, and said in one line at the end of the run."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from ci_eval.connectors import live_spans
from ci_eval.connectors.base import ActualTurn, with_features
from ci_eval.connectors.live_spans import MAX_SPANS_PER_TURN, SpanBook, TurnTrace
from ci_eval.connectors.otlp_decode import Malformed, decode
from ci_eval.connectors.span_trajectory import merged
from ci_eval.net import otlp_receiver
from ci_eval.net.otlp_receiver import JSON, MAX_BODY, PROTOBUF, OtlpReceiver


@pytest.fixture
def book() -> SpanBook:
    return SpanBook()


@pytest.fixture
def receiver(book: SpanBook) -> Iterator[OtlpReceiver]:
    served = OtlpReceiver(book.deliver).start()
    try:
        yield served
    finally:
        served.close()


def _span(trace: str, span: str, parent: str = "", name: str = "s", **attrs: str) -> dict:
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": "1",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def _otlp(*spans: dict) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def _protobuf(*spans: dict) -> bytes:
    """The same export as protobuf, as the SDK's exporter sends it."""
    message = ExportTraceServiceRequest()
    scope = message.resource_spans.add().scope_spans.add()
    for s in spans:
        span = scope.spans.add()
        span.trace_id, span.span_id = bytes.fromhex(s["traceId"]), bytes.fromhex(s["spanId"])
        if s["parentSpanId"]:
            span.parent_span_id = bytes.fromhex(s["parentSpanId"])
        span.name, span.start_time_unix_nano = s["name"], 1
        for a in s["attributes"]:
            kv = span.attributes.add()
            kv.key, kv.value.string_value = a["key"], a["value"]["stringValue"]
    return message.SerializeToString()


def _post(receiver: OtlpReceiver, body: bytes, kind: str = PROTOBUF, **headers: str) -> Any:
    return requests.post(
        f"{receiver.endpoint()}/v1/traces",
        data=body,
        headers={"Content-Type": kind, **headers},
        timeout=30,
    )


def _said(book: SpanBook, receiver: OtlpReceiver) -> list[str]:
    return book.said(2.0, receiver.problems, receiver.refused)


def _lines(book: SpanBook, receiver: OtlpReceiver) -> list[str]:
    """What the run says after one more turn, which got no span (a run says nothing of spans
    before a turn has been scored)."""
    turn = _turn(book)
    book.take(turn, 0)
    book.account(merged(ActualTurn(), []), turn)
    return _said(book, receiver)


def _turn(book: SpanBook) -> TurnTrace:
    return book.expect("set › case, run 1, turn 1")


def test_a_turns_spans_come_in_protobuf_and_json_alike(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    turn = _turn(book)
    top = _span(turn.trace_id, "a" * 16, turn.span_id, "invoke_agent")
    tool = _span(turn.trace_id, "b" * 16, "a" * 16, "execute_tool")
    assert _post(receiver, _protobuf(tool)).status_code == 200
    answer = _post(receiver, json.dumps(_otlp(top)).encode(), JSON)
    assert answer.status_code == 200 and answer.json() == {}
    book.take(turn, 5.0)
    assert [s.span_id for s in turn.spans] == ["b" * 16, "a" * 16]
    assert [s.trace_id for s in turn.spans] == [turn.trace_id] * 2
    assert turn.top_seen


def test_the_wait_ends_when_the_agents_top_span_comes(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    turn = _turn(book)
    late = threading.Timer(
        0.2, lambda: _post(receiver, _protobuf(_span(turn.trace_id, "a" * 16, turn.span_id)))
    )
    late.start()
    started = time.monotonic()
    book.take(turn, 10.0)
    assert 0.1 < time.monotonic() - started < 5
    assert turn.top_seen


def test_a_request_over_the_ceiling_is_refused_unread(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    answer = _post(receiver, b"\0" * (MAX_BODY + 1))
    assert answer.status_code == 413
    assert "warning: live spans: 1 × a request over 8 MiB, not read" in _lines(book, receiver)


def test_a_gzip_bomb_is_cut_at_the_ceiling(book: SpanBook, receiver: OtlpReceiver) -> None:
    bomb = gzip.compress(b"\0" * (MAX_BODY + 1024))
    assert len(bomb) < MAX_BODY // 100
    answer = _post(receiver, bomb, **{"Content-Encoding": "gzip"})
    assert answer.status_code == 413
    assert any(
        "a gzip request that is not gzip or is over 8 MiB" in x for x in _lines(book, receiver)
    )


def test_a_gzip_request_is_read(book: SpanBook, receiver: OtlpReceiver) -> None:
    turn = _turn(book)
    body = gzip.compress(_protobuf(_span(turn.trace_id, "a" * 16, turn.span_id)))
    assert _post(receiver, body, **{"Content-Encoding": "gzip"}).status_code == 200
    book.take(turn, 5.0)
    assert len(turn.spans) == 1


def _deep_protobuf(depth: int) -> bytes:
    """An attribute whose value nests ``depth`` kvlists deep."""
    message = ExportTraceServiceRequest()
    span = message.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\1" * 16, b"\2" * 8, "deep"
    value = span.attributes.add().value
    for _ in range(depth):
        kv = value.kvlist_value.values.add()
        kv.key = "k"
        value = kv.value
    value.string_value = "bottom"
    return message.SerializeToString()


def test_a_request_nested_too_deep_is_refused_in_one_line(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    answer = _post(receiver, _deep_protobuf(200))
    assert answer.status_code == 400
    deep_json = '{"resourceSpans": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert _post(receiver, deep_json.encode(), JSON).status_code == 400
    lines = [x for x in _lines(book, receiver) if "malformed" in x]
    assert len(lines) == 2, lines
    assert all(len(x) < 400 for x in lines)


def test_spans_of_traces_no_turn_started_are_unmatched_and_said(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    strangers = [_span(f"{n:032x}", f"{n + 1:016x}") for n in range(1, 6)]
    assert _post(receiver, _protobuf(*strangers)).status_code == 200
    assert (
        "warning: live spans: 5 spans of traces no turn started, not used: does the agent start "
        "its spans under the turn's traceparent?"
    ) in _lines(book, receiver)


def test_spans_after_their_turns_wait_are_late_and_said(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    turn = _turn(book)
    book.take(turn, 0)
    assert _post(receiver, _protobuf(_span(turn.trace_id, "a" * 16, turn.span_id))).ok
    late = [x for x in _lines(book, receiver) if "after their turn's wait" in x]
    assert late == [
        "warning: live spans: 1 spans that came after their turn's wait, not used (raise "
        "--otlp-wait?); first: set › case, run 1, turn 1"
    ]


def test_a_flood_for_one_turn_keeps_the_ceiling_and_says_the_rest(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    turn = _turn(book)
    flood = [_span(turn.trace_id, f"{n:016x}") for n in range(1, MAX_SPANS_PER_TURN + 501)]
    answer = _post(receiver, _protobuf(*flood))
    assert answer.status_code == 200
    partial = ExportTraceServiceResponse.FromString(answer.content).partial_success
    assert partial.rejected_spans == 500
    book.take(turn, 0)
    assert len(turn.spans) == MAX_SPANS_PER_TURN and turn.dropped == 500
    book.account(merged(ActualTurn(), turn.spans, turn.dropped, False), turn)
    dropped = [x for x in _said(book, receiver) if "dropped" in x]
    assert dropped == [
        "warning: live spans: 500 spans over the ceiling of 1,000 spans or 16 MiB per turn and "
        "10,000 spans per case, dropped; first: set › case, run 1, turn 1"
    ]


def test_senders_past_the_handlers_are_told_to_retry(receiver: OtlpReceiver) -> None:
    held = []
    for _ in range(otlp_receiver.MAX_HANDLERS):  # each sends its headers, never its body
        s = socket.create_connection(("127.0.0.1", receiver.port))
        s.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: 100\r\n\r\n"
        )
        held.append(s)
    slots = receiver._server.slots
    try:
        for _ in range(250):  # until the held senders' handlers have taken every slot
            if not slots.acquire(blocking=False):
                break
            slots.release()
            time.sleep(0.02)
        answer = _post(receiver, _protobuf())
        assert answer.status_code == 503
        assert answer.headers["Retry-After"] == "1"
    finally:
        for s in held:
            s.close()


def test_a_sender_that_never_finishes_is_cut_off(
    book: SpanBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp_receiver._Handler, "timeout", 0.3)
    served = OtlpReceiver(book.deliver).start()
    try:
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nContent-Length: 100\r\n")
            s.settimeout(10)
            started = time.monotonic()
            assert s.recv(100) == b""  # the receiver closed the connection
            assert time.monotonic() - started < 5
    finally:
        served.close()


@pytest.mark.parametrize(
    ("path", "kind", "status"),
    [("/v1/metrics", PROTOBUF, 404), ("/v1/traces", "text/plain", 415)],
)
def test_what_is_not_a_trace_export_is_refused_with_its_status(
    receiver: OtlpReceiver, path: str, kind: str, status: int
) -> None:
    answer = requests.post(
        f"{receiver.endpoint()}{path}", data=b"x", headers={"Content-Type": kind}, timeout=10
    )
    assert answer.status_code == status


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=2048), kind=st.sampled_from([PROTOBUF, JSON]))
def test_any_body_decodes_to_spans_or_one_malformed_line(body: bytes, kind: str) -> None:
    try:
        spans = decode(body, kind)
    except Malformed as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert all(isinstance(s.span_id, str) for s in spans)


def test_listening_in_the_image_binds_every_address_and_says_the_containers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ci_eval.settings import AgentSettings

    monkeypatch.setattr(live_spans, "own_address", lambda: "172.17.0.5")
    live = live_spans.listen(AgentSettings(kind="http", otlp=True), {"CI_EVAL_IMAGE": "slim"})
    try:
        assert live.receiver.host == "0.0.0.0"
        assert live.announce.startswith(
            f"live spans: listening for OTLP/HTTP traces at http://172.17.0.5:{live.receiver.port}"
            f" (the container's address; http://127.0.0.1:{live.receiver.port} inside it)"
        )
        env = live.child_env({"PATH": "/bin", "OTEL_BSP_SCHEDULE_DELAY": "500"})
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://127.0.0.1:{live.receiver.port}"
        assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].endswith("/v1/traces")
        assert env["OTEL_BSP_SCHEDULE_DELAY"] == "500"  # the agent's own setting kept
    finally:
        live.receiver.close()


def test_spans_with_ids_of_the_wrong_shape_are_unmatched_or_refused(
    book: SpanBook, receiver: OtlpReceiver
) -> None:
    turn = _turn(book)
    short = ExportTraceServiceRequest()
    span = short.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes.fromhex(turn.trace_id)[:5], b"\1" * 8, "s"
    assert _post(receiver, short.SerializeToString()).status_code == 200
    odd = _otlp(_span("not-hex!", "x"), _span(turn.trace_id.upper() + "00", "y"))
    assert _post(receiver, json.dumps(odd).encode(), JSON).status_code == 200
    no_id = _otlp(_span(turn.trace_id, ""))
    refused = _post(receiver, json.dumps(no_id).encode(), JSON)
    assert refused.status_code == 400
    book.take(turn, 0)
    assert turn.spans == []
    lines = _lines(book, receiver)
    assert (
        "warning: live spans: 3 spans of traces no turn started, not used: does the agent start "
        "its spans under the turn's traceparent?"
    ) in lines
    assert (
        "warning: live spans: 1 × a malformed request (spanId: expected a non-empty string at "
        "$.resourceSpans[0].scopeSpans[0].spans[0]), not read"
    ) in lines


def test_a_cases_turns_together_keep_at_most_the_ceiling_per_case(
    book: SpanBook, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_spans, "MAX_SPANS_PER_CASE", 15)

    class Answering:
        traceparent = None

        def send(self, content: Any, deadline: Any = None) -> ActualTurn:
            trace = self.traceparent.split("-")[1]
            spans = [_span(trace, f"{n:016x}") for n in range(1, 11)]
            assert _post(receiver, _protobuf(*spans)).ok
            return ActualTurn()

        def close(self) -> None:
            return None

    connector = live_spans.LiveSpansConnector(with_features(Answering()), receiver, book, wait=0)  # type: ignore[arg-type]
    session = live_spans._LiveSession(connector, Answering(), "set › case, run 1")
    kept = [session.send(None).trajectory.spans for _ in range(3)]  # type: ignore[arg-type, union-attr]
    assert kept == [10, 5, 0]


def test_in_an_image_without_a_network_loopback_is_said_as_the_only_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ci_eval.settings import AgentSettings

    monkeypatch.setattr(live_spans, "own_address", lambda: "127.0.0.1")
    live = live_spans.listen(AgentSettings(kind="command", otlp=True), {"CI_EVAL_IMAGE": "adk"})
    try:
        assert live.announce.startswith(
            f"live spans: listening for OTLP/HTTP traces at http://127.0.0.1:{live.receiver.port}"
            " (in the container, which has no address but loopback);"
        )
    finally:
        live.receiver.close()
