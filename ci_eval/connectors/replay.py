"""No agent: actual invocations come from recorded results, matched to cases by ids.

Reads ADK ``.evalset_result.json`` (2.x plain JSON and 1.x JSON-string-wrapped), trpc-agent-go
result files and ci-eval's own results JSON. A folder such as ADK's ``.adk/eval_history`` holds
one file per ``adk eval`` run; files are ordered by their own timestamp (ADK's
``creation_timestamp``, trpc's ``creationTimestamp``, ci-eval's ``started``; the file's
modification time when it has none), newest first, never by name. ``--replay-pick`` chooses:

- ``newest`` (default): the newest file that recorded the case;
- ``oldest``: the oldest one;
- ``all``: every recording of the case, newest first, run 1 replaying the first.

Within the picked file(s), run 1 gets the first recording of the case, run 2 the second, and
with ``newest``/``oldest`` the last one again when there are fewer (a ci-eval results file
with several runs replays run for run).

Jaeger and OTLP JSON traces of ADK agents (see traces) replay too: their sessions carry no eval
case ids, so each case replays the traced sessions that match it (its session id, else its
first user message), in the order the files were given; run n replays the n-th of them.
"""

from __future__ import annotations

import marshal
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, overload

from pydantic import TypeAdapter, ValidationError

from ci_eval.connectors import adk_rs_report, orchestrate_recordings, recorded, traces
from ci_eval.connectors import usage as reported
from ci_eval.connectors.base import NOT_CAPTURED, UNREADABLE, ActualTurn, AgentError, Features
from ci_eval.connectors.trace_shapes import spans_of_lines
from ci_eval.dialects import trpc
from ci_eval.errors import InputError
from ci_eval.io.jsonfast import NotStreamable, parse_streaming, paused_gc
from ci_eval.io.jsonpos import JsonDocument, parse_json, read_json_text
from ci_eval.io.readfile import max_results_bytes
from ci_eval.model import (
    Content,
    EvalCase,
    IntermediateData,
    Invocation,
    InvocationEvents,
    PlainInvocation,
)
from ci_eval.model.results import RunResults
from ci_eval.model.usage import Usage
from ci_eval.net.deadline import Deadline
from ci_eval.settings.parse import REPLAY_PICKS

_RUN: TypeAdapter[list[Invocation]] = TypeAdapter(list[Invocation])
_USAGE: TypeAdapter[Usage | None] = TypeAdapter(Usage | None)


class Recording(Sequence[Invocation]):
    """One recorded run's actual invocations. Held as the JSON values they were validated from,
    marshalled (a fraction of the memory of the models), until a case's session opens, and
    validated from them again then, as they were when loading; invocations a dialect built
    itself (trpc's, with extensions) are held as they are. ``marshal``: the fastest exact copy
    of JSON values the standard library has, read back only from what this process wrote."""

    __slots__ = (
        "_count",
        "_invocations",
        "_raw",
        "expected",
        "recorded",
        "reported",
        "unreadable",
        "usage",
    )

    def __init__(
        self, invocations: list[Invocation], expected: list[Invocation] | None = None
    ) -> None:
        self._count = len(invocations)
        self._invocations: list[Invocation] | None = invocations
        self._raw = b""
        # per invocation, the usage a ci-eval results file recorded beside it (ADK's
        # recordings carry theirs in the invocation's events)
        self.usage: list[Usage | None] = []
        # an ADK recording's expected invocations, recorded score and writer (see recorded)
        self.recorded: recorded.Recorded | None = None
        # a run an adk-rs report gives: its scores as adk-rs reported them, no conversation
        self.reported: dict[str, Any] | None = None
        # the expected invocations the recording holds beside its own (trpc's expected runner)
        self.expected = expected
        # why the recorded run cannot be replayed (a field of the wrong type, with its JSON
        # path): its case's run errors, and every other case is replayed and scored
        self.unreadable: str | None = None

    @classmethod
    def broken(cls, why: str) -> Recording:
        recording = cls([])
        recording.unreadable = why
        return recording

    @classmethod
    def from_raw(
        cls, raw: list[Any], usage: list[Usage | None] | None = None, marked: Sequence[Any] = ()
    ) -> Recording:
        """A recording of the JSON values ``raw``, each already validated as an Invocation;
        with ``marked`` (a trace's), validated here, each held as its model with its
        :data:`NOT_CAPTURED` extension where it is marked."""
        if any(marked):
            invocations = _RUN.validate_python(raw)
            for inv, why in zip(invocations, marked, strict=True):
                if why:
                    inv.extensions[NOT_CAPTURED] = why
            return cls(invocations)
        recording = cls([])
        recording._count, recording._invocations = len(raw), None
        recording._raw = marshal.dumps(raw)
        recording.usage = usage or []
        return recording

    @classmethod
    def of_report(cls, scores: dict[str, Any]) -> Recording:
        """A run of an adk-rs report: the scores it reported, no invocations."""
        recording = cls([])
        recording.reported = scores
        return recording

    def invocations(self) -> list[Invocation]:
        """A fresh list (of fresh models, for the JSON held): a session may consume it."""
        if self._invocations is not None:
            return list(self._invocations)
        return _RUN.validate_python(marshal.loads(self._raw))

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Invocation: ...

    @overload
    def __getitem__(self, index: slice) -> list[Invocation]: ...

    def __getitem__(self, index: int | slice) -> Invocation | list[Invocation]:
        return self.invocations()[index]

    def __iter__(self) -> Iterator[Invocation]:
        return iter(self.invocations())


def invocation_to_turn(inv: Invocation, usage: Usage | None = None) -> ActualTurn:
    """A recorded invocation as the turn it was; its usage, ``usage`` when the recording kept
    it beside the invocation, else what its ADK events carry."""
    turn = ActualTurn(
        final_response=inv.final_response,
        tool_uses=inv.tool_calls(),
        recorded_duration_s=inv.duration,  # reports keep the recorded time, not ~0 s
        usage=usage,
        extensions=dict(inv.extensions),
    )
    data = inv.intermediate_data
    if isinstance(data, IntermediateData):
        turn.tool_responses = list(data.tool_responses)
        turn.intermediate_responses = list(data.intermediate_responses)
    elif isinstance(data, InvocationEvents):
        if usage is None:
            try:
                turn.usage = reported.from_invocation_events(data.invocation_events)
            except reported.MalformedUsage as exc:
                raise AgentError(f"the recorded invocation's {exc}") from None
        for event in data.invocation_events:
            parts = (event.content.parts if event.content else None) or []
            turn.tool_responses += [p.function_response for p in parts if p.function_response]
            texts = [p for p in parts if p.text]
            if texts:
                turn.intermediate_responses.append((event.author, texts))
    return turn


def _unwrap(doc: JsonDocument) -> Any:
    data = doc.data
    if isinstance(data, str):  # ADK 1.x / trpc gen 1 wrote json.dumps(json_string)
        try:  # read as every JSON file is: bounded (depth, integers, NaN), errors said
            return parse_json(data, doc.path, positions_wanted=False).data
        except InputError as exc:
            raise InputError(
                f"a JSON string that is not a result file ({exc.message})", path=doc.path
            ) from None
    return data


@dataclass
class _AdkResult:
    """An ADK eval case result as it streamed past: its ids and its recording."""

    eval_set_id: str | None
    eval_id: str
    recording: Recording


def _adk_result(result: Any, offset: int = 0) -> _AdkResult:
    """The plain shape only: anything else raises, and the file is read the usual way (whose
    errors say what is wrong)."""
    set_id, eval_id = result.get("eval_set_id"), result["eval_id"]
    if not isinstance(eval_id, str) or not isinstance(set_id, str | None):
        raise TypeError("not the plain shape")
    raw = [p["actual_invocation"] for p in result.get("eval_metric_result_per_invocation") or []]
    for inv in raw:  # validated as Invocation is (the plain model is enough, and faster)
        PlainInvocation.model_validate(inv)
    recording = Recording.from_raw(raw)
    recording.recorded = recorded.of_adk_result(result)
    return _AdkResult(set_id, eval_id, recording)


def _adk_runs(data: dict[str, Any], path: str) -> dict[tuple[str, str], list[Recording]]:
    runs: dict[tuple[str, str], list[Recording]] = {}
    for result in data.get("eval_case_results") or []:
        if isinstance(result, _AdkResult):
            key = (result.eval_set_id or data.get("eval_set_id") or "", result.eval_id)
            runs.setdefault(key, []).append(result.recording)
            continue
        key = (result.get("eval_set_id") or data.get("eval_set_id") or "", result["eval_id"])
        raw = []
        try:  # each in turn, as the first problem is the one reported
            for p in result.get("eval_metric_result_per_invocation") or []:
                raw.append(p["actual_invocation"])
                Invocation.model_validate(raw[-1])
        except (ValidationError, KeyError, TypeError) as exc:
            at = f"eval_metric_result_per_invocation[{len(raw) - 1 if raw else 0}]"
            why = exc.errors()[0] if isinstance(exc, ValidationError) else None
            place = f"{at}.actual_invocation" + (_loc(why["loc"]) if why else "")
            what = why["msg"] if why else f"missing {exc}"
            runs.setdefault(key, []).append(
                Recording.broken(f"{path} case {key[1]!r}: {place}: {what}")
            )
            continue
        recording = Recording.from_raw(raw)
        recording.recorded = recorded.of_adk_result(result)
        runs.setdefault(key, []).append(recording)
    return runs


def _ci_eval_runs(data: dict[str, Any], path: str) -> dict[tuple[str, str], list[Recording]]:
    runs: dict[tuple[str, str], list[Recording]] = {}
    for eval_set in data.get("sets") or []:
        for case in eval_set.get("cases") or []:
            key = (eval_set["eval_set_id"], case["eval_id"])
            for run in case.get("runs") or []:
                if run.get("error"):
                    continue
                raw, usage = [], []
                try:  # each in turn, as the first problem is the one reported
                    for n, inv in enumerate(run.get("invocations") or []):
                        if inv.get("actual"):
                            raw.append(inv["actual"])
                            where = f"invocations[{n}].actual"
                            Invocation.model_validate(raw[-1])
                            where = f"invocations[{n}].usage"
                            usage.append(_USAGE.validate_python(inv.get("usage")))
                except ValidationError as exc:
                    why = exc.errors()[0]
                    runs.setdefault(key, []).append(
                        Recording.broken(
                            f"{path} case {key[1]!r}: {where}{_loc(why['loc'])}: {why['msg']}"
                        )
                    )
                    continue
                runs.setdefault(key, []).append(Recording.from_raw(raw, usage))
    return runs


def _loc(loc: Sequence[Any]) -> str:
    """A pydantic error's place as a JSON path's tail: ``.parts[0].text``."""
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in loc)


def _read_traced(
    sessions: list[traces.TracedSession],
    path: str,
    traced: list[tuple[traces.TracedSession, Recording]] | None,
) -> tuple[dict[str, Any], dict[tuple[str, str], list[Recording]]]:
    """A trace file's sessions, each a recording of whichever case it matches (``traced``)."""
    if not sessions:
        raise InputError(
            "a trace file with no agent turns to replay (no ADK call_llm spans, no GenAI "
            "invoke_agent / chat spans)",
            path=path,
        )
    for session in sessions:
        session.path = path
        session.marked = [inv.pop(NOT_CAPTURED, None) for inv in session.invocations]
        if traced is not None:
            traced.append((session, _traced_recording(session)))
    return {}, {}


def _traced_recording(session: traces.TracedSession) -> Recording:
    try:
        _RUN.validate_python(session.invocations)
        return Recording.from_raw(session.invocations, marked=session.marked)
    except ValidationError as exc:
        why = exc.errors()[0]
        return Recording.broken(
            f"{session.path} session {session.session_id!r}: invocations{_loc(why['loc'])}: "
            f"{why['msg']}"
        )


def _json_lines(text: str, path: str) -> list[tuple[int, Any]] | None:
    """A file of JSON lines whose first line is a trace document or an OTLP span (a
    collector's file exporter appends one export per line), each line parsed; None when the
    file is not one (the caller's parse error stands)."""
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(numbered) < 2:
        return None
    try:
        head = parse_json(numbered[0][1], path, positions_wanted=False).data
    except InputError:
        return None
    spanlike = isinstance(head, dict) and ("spanId" in head or "span_id" in head)
    if not (spanlike or traces.is_trace_file(head)):
        return None
    lines = [(numbered[0][0], head)]
    for number, line in numbered[1:]:
        try:
            lines.append((number, parse_json(line, path, positions_wanted=False).data))
        except InputError as exc:
            raise InputError(exc.message, path=path, line=number) from None
    return lines


def _read_recorded(
    file: Path, traced: list[tuple[traces.TracedSession, Recording]] | None = None
) -> tuple[dict[str, Any], dict[tuple[str, str], list[Recording]]]:
    """One recorded file's top level and its recordings per (eval set id, case id); a trace
    file's sessions go to ``traced`` (they name no case)."""
    shown = str(file)
    text = read_json_text(file, shown, max_results_bytes())
    try:
        # ADK's result files: each case result is made a recording as it is parsed (a
        # large file is never all in memory as JSON); anything unusual, the usual way
        data = parse_streaming(text, {"eval_case_results": _adk_result})
        doc = JsonDocument(data=data, text=text, path=shown)
    except NotStreamable:
        # recorded results are big and their errors name no line: the fast parser
        try:
            doc = parse_json(text, shown, positions_wanted=False)
        except InputError:
            lines = _json_lines(text, shown)
            if lines is None:
                raise
            del text
            return _read_traced(
                traces.sessions_of(spans_of_lines(lines, shown), shown), shown, traced
            )
        data = _unwrap(doc)
    del text
    if orchestrate_recordings.is_ibm_output(file.name, data):  # its messages, or beside them
        runs = orchestrate_recordings.recorded_runs(data, file.name, doc.path)
        return {}, {key: [Recording(run) for run in found] for key, found in runs.items()}
    if traces.is_trace_file(data):
        return _read_traced(traces.read_sessions(data, doc.path), doc.path, traced)
    if not isinstance(data, dict):
        raise InputError("not a result file (expected an object)", path=doc.path)
    try:
        if "eval_case_results" in data:
            found = _adk_runs(data, doc.path)
            recorded.tell(found.values(), doc.path, isinstance(doc.data, str), data)
        elif "evalCaseResults" in data:
            found = {
                key: [Recording(run, expected) for run, expected in runs]
                for key, runs in trpc.recorded_runs(doc, data).items()
            }
        elif "schema_version" in data and "sets" in data:
            found = _ci_eval_runs(data, doc.path)
        elif adk_rs_report.is_report(data):
            found = {
                key: [
                    Recording.broken(scores)
                    if isinstance(scores, str)
                    else Recording.of_report(scores)
                    for scores in runs
                ]
                for key, runs in adk_rs_report.reported_runs(data, doc.path).items()
            }
        else:
            raise InputError(
                "not a result file ADK, trpc-agent-go, adk-rs or ci-eval wrote", path=doc.path
            )
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"unreadable result file (missing {exc})", path=doc.path) from None
    return data, found


def _file_time(data: dict[str, Any], file: Path) -> float:
    """When the file's run happened, by its own field; its modification time otherwise."""
    for key in ("creation_timestamp", "creationTimestamp"):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    started = data.get("started")
    if isinstance(started, str):
        try:
            return datetime.fromisoformat(started).timestamp()
        except ValueError:
            pass
    try:
        return file.stat().st_mtime
    except OSError:
        return 0.0


def load_recordings(
    paths: list[Path],
    pick: str = "newest",
    traced: list[tuple[traces.TracedSession, Recording]] | None = None,
) -> dict[tuple[str, str], list[Recording]]:
    """Recordings per (eval set id, case id), in the order runs replay them; the sessions of
    trace files, in the order given, to ``traced``."""
    if pick not in REPLAY_PICKS:
        raise InputError(f"--replay-pick {pick!r}: choose one of " + ", ".join(REPLAY_PICKS))
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.json"))
        elif path.is_file():
            files.append(path)
        else:
            raise InputError("no such replay file or directory", path=str(path))
    # per case: (file time, file order, that file's recordings of the case)
    per_file: dict[tuple[str, str], list[tuple[float, int, list[Recording]]]] = {}
    with paused_gc():  # what is read holds no cycles
        for order, file in enumerate(files):
            data, found = _read_recorded(file, traced)
            when = _file_time(data, file)
            for key, runs in found.items():
                per_file.setdefault(key, []).append((when, order, runs))
    recordings: dict[tuple[str, str], list[Recording]] = orchestrate_recordings.Recordings()
    for key, entries in per_file.items():
        # newest first; files with the same time keep the order they were given in
        entries.sort(key=lambda e: (-e[0], e[1]))
        if pick == "newest":
            recordings[key] = list(entries[0][2])
        elif pick == "oldest":
            oldest = min(entries, key=lambda e: (e[0], e[1]))
            recordings[key] = list(oldest[2])
        else:
            recordings[key] = [run for _, _, runs in entries for run in runs]
    return recordings


@dataclass
class ReplayConnector(Features):
    paths: list[Path]
    kind: str = "replay"
    pick: str = "newest"
    recordings: dict[tuple[str, str], list[Recording]] = field(default_factory=dict)
    # what the recordings' own facts tell as cases open (see recorded)
    checks: recorded.Checks = field(default_factory=recorded.Checks, repr=False)
    # the sessions of trace files, matched to cases as they open
    traced: list[tuple[traces.TracedSession, Recording]] = field(default_factory=list)
    _index: traces.SessionIndex | None = field(default=None, init=False, repr=False)
    _lone: str | None = field(default=None, init=False, repr=False)  # see verify

    def __post_init__(self) -> None:
        self.recordings = load_recordings(self.paths, self.pick, self.traced)
        if self.traced:  # indexed once, before the workers open cases
            self._index = traces.SessionIndex([session for session, _ in self.traced])

    def describe(self) -> str:
        return f"replay ({self.pick}) of " + ", ".join(str(p) for p in self.paths)

    def max_recordings(self) -> int:
        """The most recordings any case has: the number of runs ``--replay-pick all`` needs."""
        return max((len(r) for r in self.recordings.values()), default=1)

    def runs_recorded(self, eval_set_id: str, case: EvalCase) -> int | None:
        """The case's recorded runs: a confirmation rerun past them would replay one of them
        again, and count one recorded failure twice."""
        return len(self.recordings.get((eval_set_id, case.eval_id)) or self._traced_runs(case))

    def _traced_runs(self, case: EvalCase) -> list[Recording]:
        session_id = case.session_input.session_id if case.session_input else None
        expected = case.invocations()
        first = expected[0].user_content.text() if expected else None
        if first is None and case.conversation_scenario is not None:
            first = case.conversation_scenario.starting_prompt
        if self._index is None:
            return []
        found = self._index.find(session_id, first, case.eval_id)
        if not found and self._lone == case.eval_id:
            found = [0]
        return [self.traced[i][1] for i in found]

    def _unmatched(self) -> str:
        """Why no traced session is this case's, when the trace cannot say: its sessions
        hold no user message to pair them by (recorded without message content)."""
        silent = sum(1 for session, _ in self.traced if not session.first_user_text())
        if not silent or silent < len(self.traced):
            return ""
        return (
            f": the trace's {silent} session{'s' * (silent != 1)} hold no user message to pair "
            "a case by (recorded without message content): give each case its "
            "session_input.session_id, or record with "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"
        )

    def verify(self, cases: Iterable[EvalCase]) -> None:
        """Before the first case: with no multi-turn case, traces are sessions of their own
        (``_by_trace``); one eval case and one traced session are paired whatever their first
        user messages say (agentevals 0.11's ``single_case``: the pairing is the user's,
        nothing is guessed)."""
        every = list(cases)
        if self.traced and not any(
            len(case.invocations()) > 1 or case.conversation_scenario is not None for case in every
        ):
            self._by_trace()
        if len(self.traced) != 1 or self.recordings:
            return
        if len(every) == 1 and self.traced[0][0].case_id in (None, every[0].eval_id):
            self._lone = every[0].eval_id

    def _by_trace(self) -> None:
        """No case has more than one turn: each trace is a session of its own, as agentevals
        0.11 evaluates traces (its ``group_by`` auto), so a conversation's turns pair with
        single-turn cases one by one."""
        sessions = [session for session, _ in self.traced]
        split = traces.by_trace(sessions)
        if len(split) == len(sessions):
            return
        kept = {id(session): recording for session, recording in self.traced}
        self.traced = [(s, kept.get(id(s)) or _traced_recording(s)) for s in split]
        self._index = traces.SessionIndex(split)

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _ReplaySession:
        runs = self.recordings.get((eval_set_id, case.eval_id)) or self._traced_runs(case)
        if not runs:
            raise AgentError(
                self.checks.missing(self.paths, self.recordings, eval_set_id, case.eval_id)
                + self._unmatched()
            )
        if self.pick == "all" and run > len(runs):
            raise AgentError(
                f"run {run}: {eval_set_id}:{case.eval_id} has only {len(runs)} recording(s)"
            )
        recording = self._replayed(runs, run)
        if recording.unreadable is not None:
            raise AgentError(f"{UNREADABLE}{recording.unreadable}")
        self.checks.compare(eval_set_id, case, recording.recorded)
        return _ReplaySession.of(recording)

    def _replayed(self, runs: list[Recording], run: int) -> Recording:
        return runs[run - 1] if self.pick == "all" else runs[min(run, len(runs)) - 1]

    def facts(self, eval_set_id: str, eval_id: str, run: int) -> recorded.Recorded | None:
        """What the recording run ``run`` of a case replays said of itself (None: nothing)."""
        runs = self.recordings.get((eval_set_id, eval_id))
        if not runs or (self.pick == "all" and run > len(runs)):
            return None
        return self._replayed(runs, run).recorded

    def notices(self, results: RunResults) -> list[str]:
        """What the recordings explain of the run's scores, once they are scored."""
        return self.checks.notices(results, self.facts)

    def close(self) -> None:
        return None


@dataclass
class _ReplaySession:
    invocations: list[Invocation]
    usage: list[Usage | None] = field(default_factory=list)  # beside them, when recorded so
    reported: dict[str, Any] | None = None  # scores a report gave instead of a conversation
    expected: list[Invocation] | None = None  # what the recording expected (see Recording)

    @classmethod
    def of(cls, recording: Recording) -> _ReplaySession:
        invocations = recorded.marked(recording.invocations(), recording.recorded)
        return cls(invocations, list(recording.usage), recording.reported, recording.expected)

    def send(self, user_content: Content, deadline: Deadline | None = None) -> ActualTurn:
        if not self.invocations:
            raise AgentError("the recording has fewer turns than the eval case")
        return invocation_to_turn(
            self.invocations.pop(0), self.usage.pop(0) if self.usage else None
        )

    def recorded_usage(self) -> list[Usage | None]:
        """Each invocation's usage as its turn would carry it (a conversation replayed whole,
        as a simulated case's is)."""
        usage = self.usage + [None] * (len(self.invocations) - len(self.usage))
        return [
            invocation_to_turn(inv, given).usage
            for inv, given in zip(self.invocations, usage, strict=True)
        ]

    def close(self) -> None:
        return None
