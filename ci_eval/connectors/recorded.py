"""What an ADK recording says besides its actual invocations, for ``--agent replay``: the
expected invocations it was scored against, the ``response_match_score`` it recorded, and,
where the file's shape tells, which google-adk wrote it.

A replayed case's score can differ from the recorded one for two reasons the run then says,
so that the difference is not taken for the agent's:

- the eval set was edited after the recording: its expected invocations (user message,
  expected response, expected tool calls) are no longer the ones the recording holds;
- the configuration changed after the recording: a metric's threshold is not the one the
  recording was scored against, so a case's status can flip on the same score;
- another google-adk recorded it. ADK wrote its result files as a JSON string (``json.dumps``
  of the JSON text) up to 1.21, plain JSON from 1.22; up to 1.4 its ``response_match_score`` was
  the Vertex AI SDK's ``rouge_1``, without stemming, and from 1.5 rouge-score's, whose
  tokenizer drops every letter outside a-z. google-adk 2.13, whose score ci-eval reproduces,
  stems English words and keeps every script's.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from ci_eval.connectors.base import RECORDED_SCORES
from ci_eval.model import EvalCase, Invocation
from ci_eval.model.results import RunResults
from ci_eval.text.plural import plural

# a 1.x result file: ADK 1.21 and earlier wrote json.dumps(model_dump_json())
JSON_STRING_WRITER = (
    "google-adk 1.21 or earlier (the file is a JSON string, as those wrote theirs), whose "
    "response_match_score was not google-adk 2.13's ROUGE-1 (up to 1.4 without stemming, from "
    "1.5 with rouge-score's tokenizer, which drops letters outside a-z)"
)
COMPARED = "response_match_score"  # no option changes it: a recorded score is reproducible

# per turn, hashes of: the user's message, the expected response, the expected tool calls,
# packed (hashes, not the texts: every recording is held for the whole run, and is compared
# in this process only)
_TURN = struct.Struct("3q")


@dataclass(slots=True)
class Recorded:
    """One recorded case result's own facts."""

    expected: bytes | None  # its turns (see _TURN); None: the file holds none
    score: float | None  # its response_match_score, when it recorded one
    file: str = ""
    writer: str | None = None  # which google-adk wrote the file, when its shape says
    # per metric, the case's recorded score (overall_eval_metric_results) and the threshold
    # it was scored against, where the recording holds one
    scores: dict[str, float] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    # per recorded invocation, its metrics' scores (eval_metric_result_per_invocation)
    per_invocation: list[dict[str, float]] = field(default_factory=list)


def _number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (null, a string, NaN, a bool)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _threshold(result: dict[str, Any]) -> float | None:
    """The threshold an ``EvalMetricResult`` was scored against: its criterion's, else its
    own (eval_metrics.py, _get_metric_threshold)."""
    criterion = result.get("criterion")
    if isinstance(criterion, dict) and _number(criterion.get("threshold")) is not None:
        return _number(criterion.get("threshold"))
    return _number(result.get("threshold"))


def _scores(results: Any) -> dict[str, float]:
    """Metric name → score of a list of ``EvalMetricResult`` (the unscored ones left out)."""
    out: dict[str, float] = {}
    for m in results if isinstance(results, list) else []:
        if isinstance(m, dict) and isinstance(m.get("metric_name"), str):
            score = _number(m.get("score"))
            if score is not None:
                out.setdefault(m["metric_name"], score)
    return out


def _calls(calls: list[list[Any]]) -> int:
    return hash(json.dumps(calls, sort_keys=True, ensure_ascii=False, default=str))


def turns(invocations: Sequence[Invocation]) -> bytes:
    """What of each expected invocation a score depends on."""
    return b"".join(
        _TURN.pack(
            hash(inv.user_content.text()),
            hash(inv.final_response.text() if inv.final_response is not None else None),
            _calls([[c.name, c.args] for c in inv.tool_calls()]),
        )
        for inv in invocations
    )


def _raw_text(content: Any) -> str | None:
    """``Content.text()`` of a content's JSON (None for none)."""
    if content is None:
        return None
    return "\n".join(p["text"] for p in content.get("parts") or [] if p.get("text"))


_FIELDS = ("user_content", "final_response", "intermediate_data", "invocation_events")
_CAMEL = {key: to_camel(key) for key in (*_FIELDS, "function_call", "tool_uses")}


def _raw(value: dict[str, Any], key: str) -> Any:
    """A field in either spelling, as the models read it."""
    return value[key] if key in value else value.get(_CAMEL[key])


def raw_turns(invocations: Sequence[dict[str, Any]]) -> bytes:
    """:func:`turns` of invocations as JSON, read without validating them (a recording's
    expected invocations are read for this only): what the models would give."""
    out = []
    for inv in invocations:
        data = _raw(inv, "intermediate_data") or {}
        events = _raw(data, "invocation_events")
        if events is not None:
            calls = [
                _raw(part, "function_call")
                for event in events
                for part in (event.get("content") or {}).get("parts") or []
                if _raw(part, "function_call") is not None
            ]
        else:
            calls = _raw(data, "tool_uses") or []
        out.append(
            _TURN.pack(
                hash(_raw_text(_raw(inv, "user_content"))),
                hash(_raw_text(_raw(inv, "final_response"))),
                _calls([[c.get("name"), c.get("args")] for c in calls]),
            )
        )
    return b"".join(out)


def of_adk_result(result: dict[str, Any]) -> Recorded:
    """An ADK ``EvalCaseResult``'s facts; whatever of them it lacks or holds unreadably is
    left unknown (replaying needs only its actual invocations)."""
    try:
        raw = [p.get("expected_invocation") for p in result["eval_metric_result_per_invocation"]]
        expected = None if None in raw else raw_turns(raw)
    except (AttributeError, KeyError, TypeError):  # not what ADK writes: nothing to compare
        expected = None
    overall = result.get("overall_eval_metric_results")
    scores = _scores(overall)
    thresholds = {
        m["metric_name"]: threshold
        for m in (overall if isinstance(overall, list) else [])
        if isinstance(m, dict) and isinstance(m.get("metric_name"), str)
        if (threshold := _threshold(m)) is not None
    }
    per = result.get("eval_metric_result_per_invocation")
    per_invocation = [
        _scores(p.get("eval_metric_results")) if isinstance(p, dict) else {}
        for p in (per if isinstance(per, list) else [])
    ]
    if not any(per_invocation):
        per_invocation = []
    return Recorded(
        expected,
        scores.get(COMPARED),
        scores=scores,
        thresholds=thresholds,
        per_invocation=per_invocation,
    )


def marked(invocations: list[Invocation], facts: Recorded | None) -> list[Invocation]:
    """The replayed invocations, each carrying what its recording scored
    (:data:`RECORDED_SCORES`: the file, the case's scores, the invocation's own), for the
    metrics ci-eval scores as recorded; unchanged when the recording holds no scores."""
    if facts is None or not (facts.scores or facts.per_invocation):
        return invocations
    for n, inv in enumerate(invocations):
        own = facts.per_invocation[n] if n < len(facts.per_invocation) else {}
        inv.extensions[RECORDED_SCORES] = {
            "file": facts.file,
            "case": facts.scores,
            "invocation": own,
        }
    return invocations


def tell(runs: Iterable[list[Any]], file: str, json_string: bool, data: dict[str, Any]) -> None:
    """Each of an ADK result file's recordings: which file, and which google-adk wrote it
    when the file's shape says. A JSON string with ADK's every-field dump (``session_details``
    in its case results) is google-adk's 1.x; trpc-agent-go's first result files were JSON
    strings too, without those fields."""
    adk = json_string and any(
        isinstance(r, dict) and "session_details" in r for r in data.get("eval_case_results") or []
    )
    for recordings in runs:
        for recording in recordings:
            facts = recording.recorded
            if facts is not None:
                facts.file, facts.writer = file, JSON_STRING_WRITER if adk else None


def difference(recorded: bytes, now: bytes) -> str:
    """What the eval set changed of a recording's expected invocations, in a few words."""
    if len(recorded) != len(now):
        count, now_count = len(recorded) // _TURN.size, len(now) // _TURN.size
        return f"{plural(count, 'expected turn')} recorded, {now_count} now"
    pairs = zip(_TURN.iter_unpack(recorded), _TURN.iter_unpack(now), strict=True)
    for n, (was, is_) in enumerate(pairs, 1):
        if was != is_:
            what = [
                name
                for name, a, b in zip(
                    ("user message", "expected response", "expected tool calls"),
                    was,
                    is_,
                    strict=True,
                )
                if a != b
            ]
            return f"turn {n}'s " + " and ".join(what)
    return "nothing"


def stale_notice(case: str, file: str, what: str) -> str:
    return (
        f"warning: {case}: its recording in {file} was scored against other expected "
        f"invocations than the eval set has now ({what}): the eval set changed after the "
        "recording, so scores may differ from the recorded ones"
    )


@dataclass
class Checks:
    """What a replay finds out of its recordings as its cases open, said at the run's end."""

    compared: set[tuple[str, str, str]] = field(default_factory=set)  # (set, case, file)
    stale: dict[tuple[str, str, str], str] = field(default_factory=dict)  # → its notice
    set_ids: dict[str, list[str]] | None = None  # case id → the eval sets recording one

    def compare(self, eval_set_id: str, case: EvalCase, facts: Recorded | None) -> None:
        """Whether the recording was scored against the eval set's expected invocations as
        they are now; once per case and file."""
        if facts is None or facts.expected is None:
            return
        key = (eval_set_id, case.eval_id, facts.file)
        if key in self.compared:
            return
        self.compared.add(key)
        now = turns(case.invocations())
        if now != facts.expected:
            self.stale[key] = stale_notice(
                f"{eval_set_id}:{case.eval_id}", facts.file, difference(facts.expected, now)
            )

    def missing(
        self,
        paths: Sequence[Path],
        recordings: Iterable[tuple[str, str]],
        eval_set_id: str,
        eval_id: str,
    ) -> str:
        """Why a case has no recording to replay, in one line naming the files given."""
        shown = ", ".join(str(p) for p in paths[:3])
        if len(paths) > 3:
            shown += f" and {len(paths) - 3} more"
        if self.set_ids is None:  # at the first case missing, once
            self.set_ids = {}
            for set_id, case_id in recordings:
                self.set_ids.setdefault(case_id, []).append(set_id)
        elsewhere = sorted(s for s in self.set_ids.get(eval_id, []) if s != eval_set_id)
        return f"no recording of this case in {shown}" + (
            f" (a case {eval_id!r} is recorded in the eval set {elsewhere[0]!r})"
            if elsewhere
            else ""
        )

    def notices(
        self, results: RunResults, recording_of: Callable[[str, str, int], Recorded | None]
    ) -> list[str]:
        """The cases whose eval set changed since their recording, the thresholds changed
        since, then the recorded scores ci-eval does not reproduce."""
        unreproduced = unreproduced_notices(results, recording_of, set(self.stale))
        return [*self.stale.values(), *threshold_notices(results, recording_of), *unreproduced]


@dataclass
class _Moved:
    """A metric whose threshold the run applies is not the one its recordings were scored
    against: the files saying so, and the cases whose status on it flips."""

    files: list[str] = field(default_factory=list)
    now_pass: set[str] = field(default_factory=set)  # failed then
    now_fail: set[str] = field(default_factory=set)  # passed then


def threshold_notices(
    results: RunResults, recording_of: Callable[[str, str, int], Recorded | None]
) -> list[str]:
    """Per eval set and metric, a threshold the recordings were scored against that is not the
    one the run applies: recorded → now, and how many cases the same recorded score passes or
    fails now that it did not then (score ≥ threshold, as ADK decides it). Two recorded
    thresholds of one metric are said apart."""
    moved: dict[tuple[str, str, float, float], _Moved] = {}
    for set_record in results.sets:
        for case in set_record.cases:
            if case.skipped is not None or case.error is not None:
                continue
            for metric in case.metrics:
                now = metric.threshold
                if now is None or metric.informational:
                    continue
                for run in range(1, len(metric.runs) + 1):
                    facts = recording_of(set_record.eval_set_id, case.eval_id, run)
                    was = facts.thresholds.get(metric.name) if facts is not None else None
                    if facts is None or was is None or math.isclose(was, now, abs_tol=1e-12):
                        continue
                    key = (set_record.eval_set_id, metric.name, was, now)
                    found = moved.setdefault(key, _Moved())
                    if facts.file not in found.files:
                        found.files.append(facts.file)
                    score = facts.scores.get(metric.name)
                    if score is not None and (score >= was) != (score >= now):
                        (found.now_pass if score >= now else found.now_fail).add(case.eval_id)
    notices = []
    for (_, name, was, now), found in moved.items():
        files = found.files[0] + (
            f" (and {plural(len(found.files) - 1, 'other file')})" if len(found.files) > 1 else ""
        )
        flips = [
            f"{plural(len(cases), 'case')} {one if len(cases) == 1 else many} it now that "
            f"{then} it then"
            for cases, one, many, then in (
                (found.now_pass, "passes", "pass", "failed"),
                (found.now_fail, "fails", "fail", "passed"),
            )
            if cases
        ]
        notices.append(
            f"warning: {files}: {name}'s threshold was {was:g} when recorded, {now:g} now: "
            + ("; ".join(flips) if flips else "no case's status on it changes")
        )
    return notices


def unreproduced_notices(
    results: RunResults,
    recording_of: Callable[[str, str, int], Recorded | None],
    stale: set[tuple[str, str, str]],
) -> list[str]:
    """Per recorded file, its ``response_match_score`` scores that ci-eval's differ from (the
    eval set unchanged since): which google-adk recorded them, where the file says."""
    off: dict[str, list[str]] = {}
    writers: dict[str, str | None] = {}
    for set_record in results.sets:
        for case in set_record.cases:
            if case.skipped is not None or case.error is not None:
                continue  # a run that errored: its runs and the recordings no longer pair
            metric = next((m for m in case.metrics if m.name == COMPARED), None)
            for run, score in enumerate(metric.runs if metric else [], 1):
                recorded = recording_of(set_record.eval_set_id, case.eval_id, run)
                if (
                    recorded is None
                    or recorded.score is None
                    or score is None
                    or (set_record.eval_set_id, case.eval_id, recorded.file) in stale
                    or math.isclose(recorded.score, score, rel_tol=1e-9, abs_tol=1e-9)
                ):
                    continue
                writers[recorded.file] = recorded.writer
                off.setdefault(recorded.file, []).append(
                    f"{set_record.eval_set_id}:{case.eval_id}: recorded {recorded.score:.4g}, "
                    f"now {score:.4g}"
                )
    notices = []
    for file, cases in off.items():
        count = f"{len(cases)} of its recorded {COMPARED} scores differ"
        if len(cases) == 1:
            count = f"1 of its recorded {COMPARED} scores differs"
        example = cases[0] + (f"; and {len(cases) - 1} more" if len(cases) > 1 else "")
        writer = writers[file]
        notices.append(
            f"warning: {file}: recorded by {writer}: {count} from ci-eval's, google-adk "
            f"2.13's ({example})"
            if writer
            else f"warning: {file}: {count} from ci-eval's, google-adk 2.13's ({example}); "
            "the file does not say which google-adk version recorded it"
        )
    return notices
