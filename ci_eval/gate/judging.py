"""What a run changes of how its cases are judged, against what main's history recorded: a
gating metric's threshold (or the metric no longer applied), a metric's options (its criterion:
match type, ``ignore_args``, judge options, rubrics…, from the set's config or sidecar file), a
metric main did not gate on, a case's own rubrics and its expected conversation (user turns,
expected tool calls, expected responses: its fingerprint).

Eval sets and their configs travel with the pull request, so these apply — and each is said
in the verdict, before → after. ``--fail-on judging-changed`` makes each one block until an
``[[accept]]`` entry of ``.ci-eval/accept.toml`` accepts it (``case = "SET:*"`` for a set's
metric options, ``"SET:CASE"`` for a case). Pure: no I/O.

The baseline records each set's criteria (``criteria``: metric → options) and its cases'
rubrics (``rubrics``: case → digest) from the job that last ran the set; a baseline written
before it recorded them says only that the metric configuration differs.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ci_eval.gate.items import clip
from ci_eval.model.baseline import StoredCase
from ci_eval.model.comparison import Acceptance, ChangeKind, JudgingChange
from ci_eval.model.results import CaseRecord, SetRecord

VALUE_LIMIT = 80  # a criterion value in a line: a rubric's text is cut, and says how much
UNSET = "(default)"


def fingerprint(case: CaseRecord) -> str | None:
    """The case's content, hashed: its user turns, expected tool calls and expected final
    responses (or, for a simulated user, its scenario), as its first run recorded them; None
    when no run did. Renaming a case leaves it unchanged; editing what it expects changes it."""
    if case.scenario:
        content: Any = {"scenario": case.scenario}
    else:
        runs = case.runs
        if not len(runs) or not runs[0].invocations:
            return None
        content = []
        for record in runs[0].invocations:
            expected = record.expected
            content.append(
                [
                    expected.user_content.text() if expected.user_content else None,
                    [[c.name, c.args] for c in expected.tool_calls()],
                    expected.final_response.text() if expected.final_response else None,
                ]
            )
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def criteria(s: SetRecord) -> dict[str, Any]:
    """The set's gating metrics' options, as the baseline records them."""
    return {m.name: m.criterion for m in s.applied_metrics if m.threshold is not None}


def rubrics_digest(case: CaseRecord) -> str | None:
    if not case.rubrics:
        return None
    text = json.dumps(case.rubrics, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rubric_digests(s: SetRecord) -> dict[str, str]:
    """Each scored case's own rubrics, hashed (cases without any are not listed)."""
    return {c.eval_id: d for c in s.cases if c.metrics and (d := rubrics_digest(c)) is not None}


def thresholds(moved: dict[tuple[str, str, str, float, float | None], int]) -> list[JudgingChange]:
    """``moved``: (set, its metrics' file, metric, main's threshold, now's) → cases."""
    return [
        JudgingChange(
            ChangeKind.THRESHOLD,
            set_id,
            "*",
            metric,
            where=source,
            before=f"{before:g}",
            after="no longer applied" if after is None else f"{after:g}",
            cases=n,
        )
        for (set_id, source, metric, before, after), n in moved.items()
    ]


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested options as dotted keys: ``{"a": {"b": 1}}`` → ``{"a.b": 1}``."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value} if prefix else {}


def _shown(value: Any) -> str:
    if value is _MISSING:
        return UNSET
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return clip(text, VALUE_LIMIT)


_MISSING = object()


def criterion_changes(s: SetRecord, recorded: dict[str, Any]) -> list[JudgingChange]:
    """Each option of a gating metric that differs from main's record, one change each; a
    gating metric main's record does not have, one change."""
    out = []
    for name, now in criteria(s).items():
        if name not in recorded:
            threshold = next(m.threshold for m in s.applied_metrics if m.name == name)
            out.append(
                JudgingChange(
                    ChangeKind.CRITERION,
                    s.eval_set_id,
                    "*",
                    name,
                    where=s.metrics.source,
                    before="not applied",
                    after=f"applied (threshold {threshold:g})",
                )
            )
            continue
        was, is_ = _flat(recorded[name] or {}), _flat(now or {})
        for option in sorted(set(was) | set(is_)):
            before, after = was.get(option, _MISSING), is_.get(option, _MISSING)
            if before == after:
                continue
            out.append(
                JudgingChange(
                    ChangeKind.CRITERION,
                    s.eval_set_id,
                    "*",
                    f"{name} {option}",
                    where=s.metrics.source,
                    before=_shown(before),
                    after=_shown(after),
                )
            )
    return out


def case_changes(
    s: SetRecord, case: CaseRecord, base: StoredCase, rubrics: dict[str, str] | None
) -> list[JudgingChange]:
    """The case's expected conversation and its own rubrics against main's record of them
    (``rubrics``: the set's record, None when the baseline predates it)."""
    out = []
    where = case.file or s.file
    was = base.fingerprint
    if was:
        now = fingerprint(case)
        if now is not None and now != was:
            out.append(
                JudgingChange(
                    ChangeKind.EXPECTED,
                    s.eval_set_id,
                    case.eval_id,
                    "expected conversation",
                    where=where,
                    before=f"main's ({was[:8]})",
                    after=f"this run's ({now[:8]})",
                )
            )
    if rubrics is not None:
        before, after = rubrics.get(case.eval_id), rubrics_digest(case)
        if before != after:
            out.append(
                JudgingChange(
                    ChangeKind.CRITERION,
                    s.eval_set_id,
                    case.eval_id,
                    "rubrics",
                    where=where,
                    before="none" if before is None else f"main's ({before[:8]})",
                    after="none" if after is None else f"this run's ({after[:8]})",
                )
            )
    return out


def accept(changes: list[JudgingChange], accepted: list[Acceptance]) -> None:
    """Each change an ``[[accept]]`` entry matches carries its reason (and the entry is used).
    A set-wide change is ``SET:*`` to match; its metric names the entry's ``metrics``."""
    for change in changes:
        metric = change.metric.split(" ", 1)[0]
        named = change.kind in (ChangeKind.THRESHOLD, ChangeKind.CRITERION, ChangeKind.CODE)
        names = [metric] if named and metric != "rubrics" else []
        for entry in accepted:
            if entry.matches(change.set_id, change.case_id, names):
                entry.used = True
                change.accepted = entry.reason
                break
