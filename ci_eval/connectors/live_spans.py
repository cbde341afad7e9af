"""``--otlp``: the agent's OpenTelemetry spans, received while it runs, give each turn's
trajectory where its reply gives none.

ci-eval listens for OTLP/HTTP (:mod:`ci_eval.net.otlp_receiver`) and gives every turn a trace of
its own: a fresh trace id and span id, sent as W3C trace context (the ``traceparent`` header of
an ``http`` or ``adk-http`` request, the ``traceparent`` field of a ``command`` agent's request
line). A span of that trace is the turn's; the agent's top span of the turn is the one whose
parent is the turn's span id. After the reply the turn waits — at most ``--otlp-wait``
seconds — for that top span (an SDK ends and exports children before their parent, so its
arrival means the turn's spans are in), then its trajectory is set by
:func:`ci_eval.connectors.span_trajectory.merged`.

What the agent sends is the pull request's: spans per turn and their bytes are capped (the
rest dropped, counted and answered as OTLP's partial success), a span after its turn's wait is
late, a span of a trace no turn started is unmatched; each is counted and said once, in a line
naming the first turn it happened to."""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ci_eval.connectors.base import ActualTurn, AgentSession, Connector, Features
from ci_eval.connectors.otlp_decode import Malformed, decode
from ci_eval.connectors.span_trajectory import merged
from ci_eval.connectors.trace_shapes import Span
from ci_eval.errors import InputError
from ci_eval.model import Content, EvalCase
from ci_eval.model.describe import trajectory_line
from ci_eval.model.results import TrajectorySource
from ci_eval.net.deadline import Deadline
from ci_eval.net.otlp_receiver import PATH, Delivered, OtlpReceiver, own_address
from ci_eval.settings import AgentSettings

DEFAULT_WAIT = 2.0  # seconds a turn waits after its reply for its spans
MAX_WAIT = 60.0
MAX_SPANS_PER_TURN = 1_000
MAX_SPANS_PER_CASE = 10_000  # over a case's run, all its turns together
MAX_BYTES_PER_TURN = 16 * 2**20  # of the requests its spans came in, shared out per span
CEILING = (
    f"{MAX_SPANS_PER_TURN:,} spans or {MAX_BYTES_PER_TURN >> 20} MiB per turn and "
    f"{MAX_SPANS_PER_CASE:,} spans per case"
)


@dataclass
class TurnTrace:
    """One turn's trace: its ids, where it is (for messages), and the spans received so far."""

    trace_id: str
    span_id: str
    where: str  # "set › case, run 1, turn 2"
    spans: list[Span] = field(default_factory=list)
    size: int = 0
    dropped: int = 0
    top_seen: bool = False  # the agent's span under the turn's own came
    limit: int = MAX_SPANS_PER_TURN  # what it may keep: less once its case has kept many

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-01"  # sampled: a parent-based sampler records


@dataclass
class _Tally:
    """How many, and the first turn it happened to."""

    count: int = 0
    first: str | None = None

    def add(self, where: str | None, n: int = 1) -> None:
        self.count += n
        if self.first is None:
            self.first = where


class SpanBook:
    """The turns awaiting spans, by trace id, and what became of every span received."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open: dict[str, TurnTrace] = {}
        self._closed: dict[str, str] = {}  # trace id → where, once its turn took its spans
        self.received = 0
        self.late, self.unmatched, self.dropped = _Tally(), _Tally(), _Tally()
        self.no_spans, self.incomplete, self.unread = _Tally(), _Tally(), _Tally()
        self.disagreed = _Tally()
        self.first_disagreement: str | None = None
        self.sources: Counter[TrajectorySource] = Counter()

    def expect(self, where: str, limit: int = MAX_SPANS_PER_TURN) -> TurnTrace:
        """A new turn's trace, whose spans (at most ``limit``) are kept from now on."""
        turn = TurnTrace(secrets.token_hex(16), secrets.token_hex(8), where, limit=limit)
        with self._cond:
            self._open[turn.trace_id] = turn
        return turn

    def deliver(self, body: bytes, kind: str) -> Delivered:
        """One request's spans, each to its turn (called from the receiver's threads)."""
        try:
            spans = decode(body, kind)
        except Malformed as exc:
            return Delivered(refused=str(exc))
        share = len(body) // max(1, len(spans))
        rejected = 0
        with self._cond:
            for span in spans:
                trace = span.trace_id.lower()
                turn = self._open.get(trace)
                if turn is None:
                    if trace in self._closed:
                        self.late.add(self._closed[trace])
                    else:
                        self.unmatched.add(None)
                    continue
                if len(turn.spans) >= turn.limit or turn.size + share > MAX_BYTES_PER_TURN:
                    turn.dropped += 1
                    rejected += 1
                    continue
                span.order = len(turn.spans)
                turn.spans.append(span)
                turn.size += share
                self.received += 1
                if span.parent_id == turn.span_id:
                    turn.top_seen = True
            self._cond.notify_all()
        message = f"{rejected} spans over the ceiling of {CEILING}" if rejected else ""
        return Delivered(rejected, message)

    def take(self, turn: TurnTrace, wait: float) -> TurnTrace:
        """The turn's spans, once its top span came or ``wait`` seconds passed; later spans
        of its trace are late."""
        with self._cond:
            if wait > 0:
                self._cond.wait_for(lambda: turn.top_seen, timeout=wait)
            self._open.pop(turn.trace_id, None)
            self._closed[turn.trace_id] = turn.where
        return turn

    def account(self, turn: ActualTurn, trace: TurnTrace) -> None:
        """Count what the turn's spans gave (for :meth:`said`); called from every case's
        thread."""
        with self._cond:
            self._account(turn, trace)

    def _account(self, turn: ActualTurn, trace: TurnTrace) -> None:
        trajectory = turn.trajectory
        if trajectory is None:
            return
        self.sources[trajectory.source] += 1
        where = trace.where
        if not trace.spans:
            self.no_spans.add(where)
        elif not trace.top_seen:
            self.incomplete.add(where)
        if trace.dropped:
            self.dropped.add(where, trace.dropped)
        if trajectory.unread:
            self.unread.add(f"{where}: {trajectory.unread}")
        if trajectory.disagreement:
            self.disagreed.add(where)
            if self.first_disagreement is None:
                self.first_disagreement = f"{where}: {trajectory.disagreement}"

    def said(
        self, wait: float, problems: Mapping[str, int], refused: Mapping[str, int]
    ) -> list[str]:
        """What the run's spans came to: a line of where trajectories came from, then a
        warning line for each kind of span or request that was not used."""
        with self._cond:
            turns = sum(self.sources.values())
            if not turns:
                return []
            counts = {str(source): n for source, n in self.sources.items()}
            lines = [
                f"live spans: {_n(self.received, 'span')} received; tool calls "
                + trajectory_line(counts)
            ]
            if self.no_spans.count == turns:
                lines.append(
                    f"warning: live spans: no span came for any of the {_n(turns, 'turn')} "
                    f"within {wait:g} s of its reply: does the agent export to "
                    "OTEL_EXPORTER_OTLP_ENDPOINT, and start its spans under the turn's "
                    "traceparent?"
                )
            elif self.no_spans.count:
                lines.append(
                    f"warning: live spans: no span came for {_n(self.no_spans.count, 'turn')} "
                    f"within {wait:g} s of its reply (first: {self.no_spans.first})"
                )
            for tally, what in (
                (self.disagreed, "turns whose spans' tool calls differ from the reply's (the "
                 "reply's are scored)"),
                (self.incomplete, "turns whose wait ended before the agent's top span came "
                 "(scored on the spans that had come: raise --otlp-wait?)"),
                (self.late, "spans that came after their turn's wait, not used (raise "
                 "--otlp-wait?)"),
                (self.dropped, f"spans over the ceiling of {CEILING}, dropped"),
                (self.unread, "turns whose spans could not be read as a trajectory (the "
                 "reply's is scored)"),
            ):  # fmt: skip
                if tally.count:
                    first = self.first_disagreement if tally is self.disagreed else tally.first
                    lines.append(f"warning: live spans: {tally.count:,} {what}; first: {first}")
            if self.unmatched.count:
                lines.append(
                    f"warning: live spans: {_n(self.unmatched.count, 'span')} of traces no turn "
                    "started, not used: does the agent start its spans under the turn's "
                    "traceparent?"
                )
        for why, count in {
            **problems,
            **{f"a malformed request ({k})": v for k, v in refused.items()},
        }.items():
            lines.append(f"warning: live spans: {count:,} × {why}, not read")
        return lines


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


@dataclass
class LiveSpansConnector(Features):
    """``inner`` with each turn's trajectory completed from the agent's spans."""

    inner: Connector
    receiver: OtlpReceiver
    book: SpanBook
    wait: float = DEFAULT_WAIT
    announce: str | None = None  # where it listens, said before the run

    def __post_init__(self) -> None:
        self.warning = self.inner.warning

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.inner.kind

    @property
    def opens_ahead(self) -> bool:  # type: ignore[override]
        return bool(self.inner.opens_ahead)

    @property
    def recordings(self) -> Mapping[tuple[str, str], Any]:  # type: ignore[override]
        return self.inner.recordings

    def describe(self) -> str:
        return self.inner.describe()

    def verify(self, cases: Iterable[EvalCase]) -> None:
        self.inner.verify(cases)

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> AgentSession:
        session = self.inner.open(eval_set_id, case, run)
        return _LiveSession(self, session, f"{eval_set_id} › {case.eval_id}, run {run}")

    def notices(self, results: Any) -> list[str]:
        return self.inner.notices(results) + self.book.said(
            self.wait, self.receiver.problems, self.receiver.refused
        )

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.receiver.close()


@dataclass
class _LiveSession:
    connector: LiveSpansConnector
    inner: AgentSession
    where: str
    turns: int = 0
    kept: int = 0  # spans its turns kept so far

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        self.turns += 1
        book = self.connector.book
        limit = min(MAX_SPANS_PER_TURN, MAX_SPANS_PER_CASE - self.kept)
        trace = book.expect(f"{self.where}, turn {self.turns}", limit)
        if hasattr(self.inner, "traceparent"):  # ci-eval's connectors carry it
            self.inner.traceparent = trace.traceparent
        try:
            turn = self.inner.send(user_content, deadline)
        except BaseException:
            book.take(trace, 0)  # its spans from now on are late
            raise
        replied = time.monotonic()
        book.take(trace, self.connector.wait)
        turn.waited_s = time.monotonic() - replied
        self.kept += len(trace.spans)
        merged(turn, trace.spans, trace.dropped, trace.top_seen)
        book.account(turn, trace)
        return turn

    def close(self) -> None:
        self.inner.close()


@dataclass
class Listening:
    """A receiver started for a run, before its connector is built (a command agent's
    environment names it)."""

    receiver: OtlpReceiver
    book: SpanBook
    wait: float
    announce: str

    def child_env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """A command agent's environment with the OpenTelemetry SDK's variables pointing at
        the receiver: the endpoint (the traces' own variable too, which would win over it),
        the protocol the receiver speaks, and a batch processor's delay short enough for the
        wait (unless the environment sets its own)."""
        out = dict(os.environ if env is None else env)
        endpoint = self.receiver.endpoint()
        out["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        out["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = endpoint + PATH
        out["OTEL_EXPORTER_OTLP_PROTOCOL"] = out["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = (
            "http/protobuf"
        )
        out.setdefault("OTEL_TRACES_EXPORTER", "otlp")
        out.setdefault("OTEL_BSP_SCHEDULE_DELAY", "100")  # milliseconds (the SDK's default: 5 s)
        return out

    def around(self, inner: Connector) -> LiveSpansConnector:
        return LiveSpansConnector(inner, self.receiver, self.book, self.wait, self.announce)


def listen(agent: AgentSettings, env: Mapping[str, str]) -> Listening:
    """Start the receiver ``--otlp`` asks for: on loopback, or, in ci-eval's Docker image, on
    the container's every address (an agent in another container reaches it there)."""
    in_image = bool(env.get("CI_EVAL_IMAGE"))
    host = "0.0.0.0" if in_image else "127.0.0.1"
    book = SpanBook()
    try:
        receiver = OtlpReceiver(book.deliver, host, agent.otlp_port).start()
    except OSError as exc:
        port = agent.otlp_port or "a free port"
        raise InputError(
            f"{agent.name('otlp')}: cannot listen on {host}:{port} ({exc.strerror or exc}): "
            f"set {agent.name('otlp_port')} to a free port, or 0 for any"
        ) from None
    endpoint = receiver.endpoint()
    address = own_address() if in_image else "127.0.0.1"
    reached = receiver.endpoint(address)
    if not in_image:
        where = ""
    elif address.startswith("127."):
        where = " (in the container, which has no address but loopback)"
    else:
        where = f" (the container's address; {endpoint} inside it)"
    announce = (
        f"live spans: listening for OTLP/HTTP traces at {reached}{where}"
        + f"; command agents get OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}, a server agent "
        f"exports there; each turn waits up to {agent.otlp_wait:g} s after its reply for its "
        "spans"
    )
    return Listening(receiver, book, agent.otlp_wait, announce)
