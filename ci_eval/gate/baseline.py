"""The stored baseline: each case's recent runs on main, grouped by the job (push) that ran
them, per metric; the file's format is :mod:`ci_eval.gate.baseline_file`.

``update`` appends one results file — one job on main — as a push: every run of every measured
case, in order, errors included (an errored run is marked, its scores null), so a push's runs
line up across cases and the gate can treat a job's runs of a case as one cluster and compare
per-push suite totals. The last ``window`` runs of a case are what the gate reads
(:func:`gate_view`); the file also keeps every run of main's last ``HISTORY_PUSHES`` pushes,
which ``ci-eval history`` draws. A case not measured this
time (skipped, not started, another shard) keeps what it had; cases gone from an eval set that
ran in full are dropped, unless a new case has the same content (its fingerprint: user turns,
expected tool calls, expected final response), which is then the same case renamed and keeps
its history. Per case, ``failing_since`` and ``passing_since`` name the commit where its latest
scored run last changed from passing to failing or back. Pass or fail is judged against
today's threshold when compared, so a threshold change re-reads the history.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ci_eval import __version__
from ci_eval.gate.baseline_file import (
    DEFAULT_WINDOW,
    FORMAT,
    Baseline,
    age_days,
    dumps,
    load,
    parse,
    read,
    read_at_ref,
    to_data,
    write,
)
from ci_eval.gate.history import run_fails, stored_fails
from ci_eval.gate.judging import criteria, rubric_digests
from ci_eval.gate.judging import fingerprint as fingerprint  # re-exported
from ci_eval.io.git import GitError as GitError  # re-exported: read_at_ref raises it
from ci_eval.model.baseline import (
    HISTORY_PUSHES,
    Provenance,
    Push,
    StoredCase,
    StoredMetric,
    StoredSet,
)
from ci_eval.model.status import Status
from ci_eval.results.file import CaseRecord, RunRecord, RunResults, SetRecord
from ci_eval.results.usage_totals import run_tokens
from ci_eval.settings.model import DEFAULT_BASELINE

__all__ = [
    "DEFAULT_PATH",
    "DEFAULT_WINDOW",
    "FORMAT",
    "Baseline",
    "GitError",
    "UpdateReport",
    "age_days",
    "dumps",
    "fingerprint",
    "from_results",
    "gate_view",
    "load",
    "metrics_digest",
    "parse",
    "read",
    "read_at_ref",
    "to_data",
    "update",
    "write",
]

DEFAULT_PATH = DEFAULT_BASELINE  # (ci_eval.settings: ci-eval.toml places it)
RECORDED = (Status.PASSED, Status.FAILED, Status.NOT_EVALUATED, Status.ERROR)


def metrics_digest(results: RunResults) -> str:
    """A fingerprint of the metric configuration, to warn when it changed."""
    config = sorted(
        (s.eval_set_id, m.name, m.threshold, json.dumps(m.criterion, sort_keys=True))
        for s in results.sets
        for m in s.applied_metrics
    )
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()[:16]


@dataclass
class UpdateReport:
    """What ``update`` did, for the one line it prints."""

    recorded: int = 0  # cases whose history grew
    kept: list[str] = field(default_factory=list)  # measured before, not this time: history kept
    new: int = 0
    dropped: list[str] = field(default_factory=list)  # no longer in an eval set that fully ran
    renamed: list[str] = field(default_factory=list)  # "OLD -> NEW": same content, history kept
    duplicate: bool = False  # these results were recorded already


def _gating(case: CaseRecord) -> dict[str, float | None]:
    """The gating metrics of the case (name → threshold)."""
    return {
        m.name: m.threshold
        for m in case.metrics
        if not m.informational and m.status != Status.ERROR
    }


# one run as the history keeps it: its error, its wall time, each gating metric's score, and
# each one's own verdict (did the run fail it) where the metric gave one (see CaseMetric)
Row = tuple[str | None, float | None, dict[str, float | None], dict[str, bool | None]]


def _rows(case: CaseRecord, names: Iterable[str]) -> list[Row]:
    """The case's runs in order, errored ones included (scores null). A metric's per-run
    scores cover the runs the agent finished, in order; without the runs themselves (a
    summary of them), the scores alone."""
    names = list(names)
    scores = {m.name: [None if v is None else float(v) for v in m.runs] for m in case.metrics}
    own = {m.name: list(m.run_fails) for m in case.metrics}
    count = max((len(scores.get(n) or []) for n in names), default=0)

    def at(values: dict[str, list[Any]], i: int) -> dict[str, Any]:
        return {n: (values.get(n) or [None] * (i + 1))[i] for n in names}

    runs: list[RunRecord] = list(case.runs)
    if sum(1 for r in runs if r.error is None) != count:
        return [(None, None, at(scores, i), at(own, i)) for i in range(count)]
    rows: list[Row] = []
    done = 0
    for run in runs:
        latency = None if run.replayed else round(run.duration_s, 3)
        if run.error is not None:
            rows.append((run.error, latency, dict.fromkeys(names), dict.fromkeys(names)))
        else:
            rows.append((None, latency, at(scores, done), at(own, done)))
            done += 1
    return rows


def latest_failed(entry: StoredCase) -> bool | None:
    """Did the case's latest scored run fail? None when no run was scored."""
    per_metric = [
        stored_fails(m, m.threshold) for m in entry.metrics.values() if m.threshold is not None
    ]
    return next((f for f in reversed(run_fails(per_metric)) if f is not None), None)


def _append(
    entry: StoredCase,
    rows: list[Row],
    names: dict[str, float | None],
    seq: int,
    tokens: list[int | None],
) -> None:
    """The case's runs of this push, appended to its aligned lists (:func:`_close` trims them).
    A metric's own verdicts (``fails``) are kept only while some run has one."""
    old_length = len(entry.push)
    entry.metrics = {  # a metric no longer applied leaves with its config
        name: _appended(entry.metrics.get(name), name, threshold, rows, old_length)
        for name, threshold in names.items()
    }

    def grown(values: list[Any], more: list[Any]) -> list[Any]:
        return [*(values or [None] * old_length), *more]

    entry.push = grown(entry.push, [seq] * len(rows))
    entry.error = grown(entry.error, [row[0] for row in rows])
    entry.latency_s = grown(entry.latency_s, [row[1] for row in rows])
    # each run's agent tokens (None: not reported), kept once some run reported them
    if entry.usage is not None or any(t is not None for t in tokens):
        entry.usage = grown(entry.usage or [], tokens)


def _appended(
    was: StoredMetric | None,
    name: str,
    threshold: float | None,
    rows: list[Row],
    old_length: int,
) -> StoredMetric:
    """One metric's scores with this push's appended, and its own verdicts while some run
    has one (those recorded under another threshold are not kept)."""
    was = was or StoredMetric()
    before = was.scores or [None] * old_length
    scores = [*before, *(row[2][name] for row in rows)]
    merged = StoredMetric(scores, threshold)
    now_own = [row[3][name] for row in rows]
    kept = was.fails if was.threshold == threshold else None
    if kept or any(v is not None for v in now_own):
        fails = [*(kept or [None] * len(before)), *now_own]
        merged.fails = [None] * (len(scores) - len(fails)) + fails
    return merged


def _absent(
    sets: dict[str, StoredSet], present: set[tuple[str, str]]
) -> dict[str, list[tuple[str, str]]]:
    """The history's cases this run did not have, by fingerprint: a new case with one's
    content is a rename."""
    absent: dict[str, list[tuple[str, str]]] = {}
    for set_id, stored in sets.items():
        for case_id, entry in stored.cases.items():
            if (set_id, case_id) not in present and entry.fingerprint:
                absent.setdefault(entry.fingerprint, []).append((set_id, case_id))
    return absent


def _record_case(
    data: Baseline,
    stored: StoredSet,
    set_id: str,
    case: CaseRecord,
    absent: dict[str, list[tuple[str, str]]],
    push: tuple[int, int, str],
    report: UpdateReport,
) -> None:
    """One case's runs of this push into its history (a rename takes the old id's)."""
    seq, _, since = push
    key = f"{set_id}:{case.eval_id}"
    entry = stored.cases.get(case.eval_id)
    names = _gating(case) or {
        name: m.threshold for name, m in (entry.metrics if entry else {}).items()
    }
    rows = _rows(case, names) if case.status in RECORDED else []
    if not rows:
        if entry is not None:
            report.kept.append(key)
        return
    mark = fingerprint(case)
    if entry is None:
        entry = _new_entry(data, stored, key, case.eval_id, absent.get(mark or "", []), report)
    was_failing = latest_failed(entry)
    tokens = run_tokens(case) if len(case.runs) == len(rows) else [None] * len(rows)
    _append(entry, rows, names, seq, tokens)
    entry.fingerprint = mark
    now_failing = latest_failed(entry)
    if now_failing and not was_failing:
        entry.failing_since, entry.passing_since = since, None
    elif now_failing is False and was_failing is not False:
        entry.failing_since, entry.passing_since = None, since
    report.recorded += 1


def _new_entry(
    data: Baseline,
    stored: StoredSet,
    key: str,
    case_id: str,
    same: list[tuple[str, str]],
    report: UpdateReport,
) -> StoredCase:
    """A case the history has not under this id: the one absent case of the same content
    renamed (its history taken), else a new entry."""
    if len(same) == 1:
        was_set, was_id = same.pop()
        entry = stored.cases[case_id] = data.sets[was_set].cases.pop(was_id)
        report.renamed.append(f"{was_set}:{was_id} -> {key}")
        return entry
    report.new += 1
    entry = stored.cases[case_id] = StoredCase()
    return entry


def _judged_by(stored: StoredSet, s: SetRecord) -> None:
    """What a scored set was judged by, as it was: each gating metric's options, and the
    rubrics of the cases scored now (the others', a selection ran, kept)."""
    stored.criteria = criteria(s)
    scored = {c.eval_id for c in s.cases if c.metrics}
    digests = {k: v for k, v in stored.rubrics.items() if k not in scored} | rubric_digests(s)
    stored.rubrics = dict(sorted(digests.items()))


def _record_set(
    data: Baseline,
    s: SetRecord,
    absent: dict[str, list[tuple[str, str]]],
    push: tuple[int, int, str],
    complete: bool,
    report: UpdateReport,
) -> None:
    """One set's cases into the history; after a complete run, its cases gone dropped."""
    stored = data.sets.setdefault(s.eval_set_id, StoredSet())
    stored.file = s.file
    for case in s.cases:
        _record_case(data, stored, s.eval_set_id, case, absent, push, report)
    if any(c.metrics for c in s.cases):  # scored: what it was judged by, as it was
        _judged_by(stored, s)
    if complete:
        for case_id in sorted(set(stored.cases) - {c.eval_id for c in s.cases}):
            del stored.cases[case_id]
            report.dropped.append(f"{s.eval_set_id}:{case_id}")
            stored.rubrics.pop(case_id, None)


def update(
    old: Baseline | None,
    results: RunResults,
    commit: str | None = None,
    window: int = DEFAULT_WINDOW,
) -> tuple[Baseline, UpdateReport]:
    """The baseline with this results file appended as one push (see the module), recorded
    as ``commit``'s (None: unknown). Pure: the caller says which commit this is."""
    from ci_eval.errors import InputError

    if window < 1:
        raise InputError("--window must be at least 1")
    report = UpdateReport()
    data = copy.deepcopy(old) if old else Baseline()
    previous = data.provenance.recorded if data.provenance is not None else []
    # which results file this is: its start (to the second) alone does not tell two runs apart
    legacy_id = f"{results.started}|{results.agent}"  # as format 2 recorded it
    run_id = results.run_id or f"{legacy_id}|{results.duration_s:.4f}"
    since = (commit or "unknown")[:12]
    recorded = legacy_id in previous or any(p.id == run_id for p in data.pushes)
    if results.started and recorded:
        report.duplicate = True
        return data, report
    seq = max((p.seq for p in data.pushes), default=0) + 1
    complete = not results.interrupted and not results.settings.selected
    present = {(s.eval_set_id, c.eval_id) for s in results.sets for c in s.cases}
    absent = _absent(data.sets, present)
    for s in results.sets:
        _record_set(data, s, absent, (seq, window, since), complete, report)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    push = Push(seq, run_id, commit, now, results.settings.num_runs, cost_usd=_cost(results))
    _close(data, push, window)
    data.provenance = Provenance(
        commit=commit,
        date=now,
        ci_eval_version=__version__,
        agent=results.agent,
        metrics_digest=metrics_digest(results),
        # results recorded before format 3, which its pushes' ids now say
        recorded=previous[-window:],
    )
    return data, report


def _cost(results: RunResults) -> float | None:
    """What the agent's first runs cost, where the run was priced (None: not priced)."""
    if not results.settings.prices:
        return None
    from ci_eval.results.usage_totals import summary

    return summary(results)["agent"]["cost_usd"]


def _kept_from(case: StoredCase, window: int, oldest: int) -> int:
    """How many of the case's latest runs the file keeps: its last ``window``, and every run
    of a push from ``oldest`` on (a case's runs are in push order: those are its last ones)."""
    recent = sum(1 for seq in case.push if seq >= oldest)
    return max(window, recent)


def _last(values: list[Any] | None, count: int) -> list[Any] | None:
    """The last ``count`` entries of a per-run list (one the file does not hold stays so)."""
    if values is None:
        return None
    return values[len(values) - count :] if len(values) > count else values


def _trimmed(case: StoredCase, count: int) -> StoredCase:
    """The case with only its last ``count`` runs (the same object when it has no more)."""
    longest = max([len(case.push)] + [len(m.scores) for m in case.metrics.values()])
    if longest <= count:
        return case
    metrics = {
        name: StoredMetric(_last(m.scores, count) or [], m.threshold, _last(m.fails, count))
        for name, m in case.metrics.items()
    }
    return StoredCase(
        metrics,
        _last(case.push, count) or [],
        _last(case.error, count) or [],
        _last(case.latency_s, count) or [],
        _last(case.usage, count),
        case.failing_since,
        case.passing_since,
        case.fingerprint,
    )


def _referenced(data: Baseline) -> list[Push]:
    held = {seq for st in data.sets.values() for e in st.cases.values() for seq in e.push}
    return [p for p in data.pushes if p.seq in held]


def gate_view(data: Baseline) -> Baseline:
    """The baseline as the gate reads it: each case's last ``window`` runs and the pushes they
    come from. The file keeps more (main's last ``HISTORY_PUSHES`` pushes, for the trend
    pages); the gate's bar is its window, as it always was. The same object when it holds no
    more than that."""
    window = data.window
    if all(len(e.push) <= window for s in data.sets.values() for e in s.cases.values()) and all(
        len(m.scores) <= window for s in data.sets.values() for e in s.cases.values()
        for m in e.metrics.values()
    ):  # fmt: skip
        return data
    view = copy.copy(data)
    view.sets = {
        set_id: StoredSet(
            {cid: _trimmed(e, window) for cid, e in stored.cases.items()},
            stored.file,
            stored.criteria,
            stored.rubrics,
        )
        for set_id, stored in data.sets.items()
    }
    view.pushes = _referenced(view)
    return view


def _close(data: Baseline, push: Push, window: int) -> None:
    """The push recorded; each case's runs trimmed to its last ``window`` and main's last
    ``HISTORY_PUSHES`` pushes; only the pushes some case's runs still come from kept."""
    data.pushes.append(push)
    seqs = sorted(p.seq for p in data.pushes)
    oldest = seqs[-HISTORY_PUSHES] if len(seqs) >= HISTORY_PUSHES else seqs[0]
    for stored in data.sets.values():
        for case_id, entry in stored.cases.items():
            stored.cases[case_id] = _trimmed(entry, _kept_from(entry, window, oldest))
    data.pushes = _referenced(data)
    data.format, data.window = FORMAT, window


def from_results(
    results: RunResults, commit: str | None = None, window: int = DEFAULT_WINDOW
) -> Baseline:
    """A fresh baseline from one run."""
    return update(None, results, commit, window)[0]
