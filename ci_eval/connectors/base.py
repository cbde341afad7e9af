"""What every agent connector shares: the session interface, one turn's outcome, and the rule by
which ADK's eval service turns a turn's events into an actual invocation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import ValidationError

from ci_eval.connectors import usage as reported
from ci_eval.io.jsonfast import MAX_NESTING, TooDeep, check_nesting
from ci_eval.model import (
    Content,
    EvalCase,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    Part,
)
from ci_eval.model.results import Trajectory
from ci_eval.model.usage import Usage
from ci_eval.net.deadline import Deadline
from ci_eval.text import redact


class AgentError(Exception):
    """The agent could not answer a turn (unreachable, timed out, crashed, malformed reply).

    ``retries`` counts the retries spent before giving up; the message is one line and never
    holds a secret (it is redacted here, whoever builds it).
    """

    def __init__(self, message: str, retries: int = 0) -> None:
        super().__init__(redact.text(message))
        self.retries = retries


class AgentUnreachable(AgentError):
    """Nothing answered at the agent's address (refused, no such host, timed out): the
    infrastructure's failure, not the user's input."""


@dataclass
class ActualTurn:
    """What the agent did in one user turn, as ADK's eval service records it."""

    final_response: Content | None = None
    tool_uses: list[FunctionCall] = field(default_factory=list)
    tool_responses: list[FunctionResponse] = field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = field(default_factory=list)
    retries: int = 0
    # for a simulated user, who said what: the agent's ADK events when it sent them, else
    # the author its contract reply named
    events: list[Any] | None = None
    author: str | None = None
    recorded_duration_s: float | None = None  # replay: how long the recorded turn took
    # what the agent's own model calls spent, as it reported them (None: it did not say)
    usage: Usage | None = None
    # replay: the recorded invocation's dialect data (trpc's executionTrace, contextMessages),
    # which trpc-agent-go's judges read
    extensions: dict[str, Any] = field(default_factory=dict)
    # with --otlp: where the tool calls came from (reply or spans), and the seconds spent
    # after the reply waiting for the turn's spans (not the agent's time: not in its duration)
    trajectory: Trajectory | None = None
    waited_s: float = 0.0

    def to_invocation(self, expected: Invocation, duration: float) -> Invocation:
        """The actual invocation this turn makes of ``expected`` (its id and user content)."""
        inv = Invocation(
            invocation_id=expected.invocation_id,
            user_content=expected.user_content,
            final_response=self.final_response,
            duration=round(duration, 6),
            intermediate_data=IntermediateData(
                tool_uses=self.tool_uses,
                tool_responses=self.tool_responses,
                intermediate_responses=self.intermediate_responses,
            ),
        )
        inv.extensions.update(self.extensions)
        return inv


# what one case's run may keep of its agent's replies (every turn's, as the results file holds
# them): each reply is capped where it is read, and this caps their sum, so that no run of many
# large replies fills the results file, the JUnit report and memory
MAX_RUN_REPLIES = 16 * 2**20
TOO_MUCH = (
    f"the agent's replies in this run passed {MAX_RUN_REPLIES // 2**20} MiB, a ceiling: "
    "this turn's reply is not kept"
)
# a replayed file's recording of a run that cannot be read (a field of the wrong type): the
# case's run errors with this and where, the other cases are replayed; the run exits 2
UNREADABLE = "unreadable recording: "
# a replayed invocation's extension: why what it recorded cannot be scored (a trace that
# captured no message content); every metric but the informational ones is then NOT_EVALUATED
NOT_CAPTURED = "ci_eval.not_captured"
# a replayed invocation's extension: what its recording scored (recorded.marked), so that a
# metric ci-eval cannot score without a judge can be scored as recorded (ci_eval.score.as_recorded)
RECORDED_SCORES = "ci_eval.recorded_scores"


@dataclass
class KeptReplies:
    """The bytes of a run's actual invocations so far, as JSON."""

    size: int = 0

    def fits(self, actual: Invocation) -> bool:
        """Count ``actual`` in; False once the run's replies pass MAX_RUN_REPLIES."""
        self.size += len(Invocation.__pydantic_serializer__.to_json(actual))
        return self.size <= MAX_RUN_REPLIES


class AgentSession(Protocol):
    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        """Play one user turn by ``deadline`` (wall clock; by default the connector's timeout
        from now); raise AgentError when the agent cannot answer, with the deadline's message
        (``no reply within N s`` or ``cancelled``) when it ran out."""
        ...

    def close(self) -> None: ...


class Connector(Protocol):
    """Opens one fresh agent session per (case, run). A connector whose ``open`` is a request
    to the agent may say ``opens_ahead = True``: the runner then opens the next cases' sessions
    while the current turns are in flight (from another thread, so ``open`` must be
    thread-safe, as it is for concurrent workers anyway). The rest is optional: what
    :class:`Features` gives a connector that does not say otherwise."""

    kind: str
    opens_ahead: bool
    warning: str | None  # said once before the run (why it runs as it does)
    announce: str | None  # said before the run, as it is
    recordings: Mapping[tuple[str, str], Any]  # a replay's, by (eval set id, case id)

    def describe(self) -> str:
        """One line saying which agent this is, for reports (no secrets)."""
        ...

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> AgentSession: ...

    def close(self) -> None: ...

    def verify(self, cases: Iterable[EvalCase]) -> None:
        """Check, before any case runs, that the agent can be reached (AgentError if not)."""
        ...

    def max_recordings(self) -> int:
        """The most runs a case has to replay (a replay of every recording)."""
        ...

    def runs_recorded(self, eval_set_id: str, case: EvalCase) -> int | None:
        """How many different runs of the case the connector can give (a replay: the runs it
        recorded; a run past them would replay one again); None: as many as asked (an agent)."""
        ...

    def notices(self, results: Any) -> list[str]:
        """What the connector says of the finished run (a replay: recordings edited since)."""
        ...


class Features:
    """The optional part of :class:`Connector`, as a connector has it unless it says more:
    nothing to verify, one recording, nothing to say; ci-eval's connectors inherit it, and a
    plugin's connector that does not gets it (:func:`with_features`)."""

    opens_ahead: ClassVar[bool] = False
    warning: str | None = None
    announce: str | None = None  # said before the run, as it is (--otlp: where it listens)
    # a replay's recorded runs by (eval set id, case id): what a simulated case replays
    recordings: ClassVar[Mapping[tuple[str, str], Any]] = {}

    def verify(self, cases: Iterable[EvalCase]) -> None:
        return None

    def max_recordings(self) -> int:
        return 1

    def runs_recorded(self, eval_set_id: str, case: EvalCase) -> int | None:
        return None

    def notices(self, results: Any) -> list[str]:
        return []


@dataclass
class _Plugin(Features):
    """A plugin's connector, with the optional part it does not have."""

    inner: Any

    @property
    def kind(self) -> str:  # type: ignore[override]
        return str(self.inner.kind)

    @property
    def opens_ahead(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "opens_ahead", False))

    def describe(self) -> str:
        return str(self.inner.describe())

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> AgentSession:
        return self.inner.open(eval_set_id, case, run)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def with_features(connector: Any) -> Connector:
    """``connector`` with the whole protocol: its own features, :class:`Features`' others."""
    if isinstance(connector, Features):
        return connector  # type: ignore[return-value]
    plugin = _Plugin(connector)
    for name in ("verify", "max_recordings", "runs_recorded", "notices", "warning", "recordings"):
        if hasattr(connector, name):  # the plugin's own, where it has one
            setattr(plugin, name, getattr(connector, name))
    return plugin  # type: ignore[return-value]


def _parts(event: dict[str, Any]) -> list[Part]:
    content = event.get("content") or {}
    if not isinstance(content, dict):
        return []
    try:
        return list(Content.model_validate(content).parts or [])
    except ValidationError as exc:
        raise AgentError(f"malformed event content: {exc.errors()[0]['msg']}") from None


def _is_final(event: dict[str, Any], parts: list[Part]) -> bool:
    """ADK's ``Event.is_final_response`` on an event as api_server serialises it."""
    actions = event.get("actions") or {}
    if actions.get("skipSummarization") or actions.get("skip_summarization"):
        return True
    if event.get("longRunningToolIds") or event.get("long_running_tool_ids"):
        return True
    if any(p.function_call or p.function_response for p in parts):
        return False
    return not event.get("partial")


def shallow_enough(data: Any) -> None:
    """An agent's reply nesting deeper than :data:`MAX_NESTING` levels (tool arguments 300
    deep) is the turn's error, said so: no eval needs it, and no report could write it."""
    if isinstance(data, dict | list):
        try:
            check_nesting(data, MAX_NESTING)
        except TooDeep:
            raise AgentError(
                f"the reply nests deeper than {MAX_NESTING} levels (in its tool calls or "
                "events): no turn needs that"
            ) from None


def events_to_turn(events: list[Any], user_author: str = "user") -> ActualTurn:
    """One turn's events → tool uses, tool responses, final and intermediate responses.

    Mirrors google-adk 2.13's ``EvaluationGenerator.convert_events_to_eval_invocations``: every
    function_call part is a tool use (in order), every function_response part a tool response,
    the last final-response event with content is the final response (a text one wins over a
    text-less one), and other authored text is an intermediate response ``(author, parts)``.
    """
    if not isinstance(events, list):
        raise AgentError("expected a JSON list of events")
    shallow_enough(events)
    turn = ActualTurn()
    final_index = None
    candidates: list[tuple[str, list[Part]]] = []
    for event in events:
        if not isinstance(event, dict):
            raise AgentError("expected each event to be a JSON object")
        author = str(event.get("author") or "")
        if author.lower() == user_author:
            continue
        parts = _parts(event)
        if not parts:
            continue
        for part in parts:
            if part.function_call:
                turn.tool_uses.append(part.function_call)
            if part.function_response:
                turn.tool_responses.append(part.function_response)
        if _is_final(event, parts):
            final_has_text = turn.final_response is not None and any(
                p.text for p in turn.final_response.parts or []
            )
            if not final_has_text or any(p.text for p in parts):
                turn.final_response = Content.model_validate(event["content"])
                final_index = len(candidates)
        if any(p.text for p in parts):
            candidates.append((author, [p for p in parts if p.text is not None]))
        else:
            candidates.append(("", []))
    turn.intermediate_responses = [c for i, c in enumerate(candidates) if i != final_index and c[1]]
    turn.events = events
    try:
        turn.usage = reported.from_events(events, user_author)
    except reported.MalformedUsage as exc:
        raise AgentError(f"malformed event {exc}") from None
    return turn


@dataclass
class Unanswered(Features):
    """An agent that did not answer the check before the first case: every case is an ERROR
    with that reason, none calls it again, and every report still lists every case (exit 3, as
    an ``http`` agent that never answers gives)."""

    reason: str
    kind: str
    described: str

    def describe(self) -> str:
        return self.described

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> AgentSession:
        raise AgentUnreachable(self.reason)

    def close(self) -> None:
        return None
