"""The exit codes (part of the interface), the quality gate that picks one, and its verdict in
one line: what decided, and what did not block.

:func:`verdict` is pure; every reporter (terminal, summary, comment, step outputs, JUnit)
renders the same :class:`Verdict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ci_eval.errors import EXIT_GATE, EXIT_INFRA, EXIT_INPUT, EXIT_OK, InputError  # noqa: F401
from ci_eval.model.status import Status

if TYPE_CHECKING:
    from ci_eval.results import RunResults

FAIL_ON = ("failure", "regression", "error", "not-evaluated")
NAMES_SHOWN = 3


@dataclass(frozen=True)
class Verdict:
    passed: bool
    exit_code: int
    line: str  # "gate failed: 1 regression (support:refund_policy); 1 known failure did not block"
    blocking: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was seen and did not block


def _names(keys: list[str]) -> str:
    shown = ", ".join(keys[:NAMES_SHOWN])
    more = len(keys) - NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def _not_evaluated(results: RunResults) -> list[str]:
    """``set:case (metric: why)`` for each case a gating metric could not be computed for."""
    out = []
    for s, c in results.cases():
        if c.status != Status.NOT_EVALUATED:
            continue
        why = next(
            (
                f"{m.name}: {m.reason}"
                for m in c.metrics
                if m.status == Status.NOT_EVALUATED and not m.informational and m.reason
            ),
            "no metric could be computed",
        )
        out.append(f"{s.eval_set_id}:{c.eval_id} ({why})")
    return out


def verdict(results: RunResults) -> Verdict:
    """The gate's decision per ``fail_on``, and why. Exit 3 when errors kept cases from being
    scored, 1 when the gate failed, 0 when it passed. Nothing evaluated never passes."""
    fail_on = set(results.fail_on)
    comparison = results.comparison
    keys: dict[Status, list[str]] = {
        status: []
        for status in (
            Status.PASSED,
            Status.FAILED,
            Status.ERROR,
            Status.NOT_EVALUATED,
            Status.SKIPPED,
        )
    }
    for s, c in results.cases():  # one pass: each report asks, at 20,000 cases
        bucket = keys.get(c.status)
        if bucket is not None:
            bucket.append(f"{s.eval_set_id}:{c.eval_id}")
    blocking: list[str] = []
    notes: list[str] = []
    infra = False
    if keys[Status.ERROR] or results.interrupted:
        text = (
            _count(len(keys[Status.ERROR]), "error") + f" ({_names(keys[Status.ERROR])})"
            if keys[Status.ERROR]
            else "the run was interrupted"
        )
        if "error" in fail_on:
            blocking.append(text)
            infra = True
        else:
            notes.append(f"{text} did not block")
    if not keys[Status.PASSED] and not keys[Status.FAILED]:
        blocking.append(f"nothing was evaluated ({_count(len(results.cases()), 'case')})")
    not_evaluated = _not_evaluated(results)
    if not_evaluated:
        text = f"{len(not_evaluated)} not evaluated: {_names(not_evaluated)}"
        if "not-evaluated" in fail_on:
            blocking.append(text)
        else:
            notes.append(f"{text} did not block")
    if keys[Status.FAILED] and "failure" in fail_on:
        blocking.append(
            _count(len(keys[Status.FAILED]), "failed case") + f" ({_names(keys[Status.FAILED])})"
        )
    if comparison is not None:
        from ci_eval.model.comparison import Judgement

        regressed = [j.key for j in comparison.judged(Judgement.REGRESSION)]
        suite = comparison.suite if comparison.suite_regressed else None
        if regressed:
            text = _count(len(regressed), "regression") + f" ({_names(regressed)})"
            (blocking if "regression" in fail_on else notes).append(
                text if "regression" in fail_on else f"{text} did not block"
            )
        unconfirmed = [
            j.key
            for j in comparison.judged(Judgement.NOT_SIGNIFICANT)
            if not j.history_failed and j.failed_now == j.runs_now
        ]
        if comparison.outage and unconfirmed:  # fail closed: not measured enough to pass
            blocking.append(
                f"{_count(len(unconfirmed), 'case')} failing every run could not be confirmed "
                f"({_names(unconfirmed)}): {comparison.outage}; run the job again"
            )
        if suite is not None:
            text = f"a broad drop across the suite: {suite.describe()}"
            if suite.caveat():  # nothing on main tells a PR's drop from a provider's bad day
                text += f"; {suite.caveat()}"
            (blocking if "regression" in fail_on else notes).append(
                text if "regression" in fail_on else f"{text} did not block"
            )
        if "failure" not in fail_on:
            known = comparison.judged(Judgement.KNOWN_FAILURE)
            noise = comparison.judged(Judgement.NOT_SIGNIFICANT)
            if known:
                notes.append(_count(len(known), "known failure") + " did not block")
            usual = [j for j in noise if j.history_failed]
            other = [j for j in noise if not j.history_failed]
            if usual:
                notes.append(
                    _count(len(usual), "failure")
                    + " each within its case's usual noise did not block ("
                    + _names([j.key for j in usual])
                    + ")"
                )
            if other:  # never failed on main: not "usual noise"; reruns did not confirm them
                notes.append(
                    _count(len(other), "unconfirmed failure")
                    + " did not block (flaky, new or too little history: "
                    + _names([j.key for j in other])
                    + ")"
                )
        accepted = comparison.judged(Judgement.ACCEPTED)
        if accepted:
            notes.append(
                _count(len(accepted), "accepted change") + f" ({_names([j.key for j in accepted])})"
            )
        if comparison.suite is not None and comparison.suite.accepted:
            notes.append("the suite-wide drop is accepted")
        if comparison.removed_cases:  # named: a PR can remove the cases it would fail
            removed = [f"{s}:{c}" for s, c in comparison.removed_cases]
            notes.append(f"{_count(len(removed), 'case')} on main not run here ({_names(removed)})")
        simple = comparison.short_history
        if simple:
            notes.append(
                _count(len(simple), "case")
                + f" with a short history (fewer than {comparison.min_history} runs on main)"
            )
    elif keys[Status.FAILED] and "failure" not in fail_on:
        notes.append(_count(len(keys[Status.FAILED]), "failed case") + " did not block")
    if blocking:
        exit_code = EXIT_INFRA if infra else EXIT_GATE
        line = "gate failed: " + "; ".join(blocking + notes)
        return Verdict(False, exit_code, line, blocking, notes)
    if comparison is not None:
        judged = len(comparison.cases)
        head = f"0 regressions against main's history ({_count(judged, 'case')} judged)"
    else:
        evaluated = len(keys[Status.PASSED]) + len(keys[Status.FAILED])
        head = f"{len(keys[Status.PASSED])} of {_count(evaluated, 'case')} passed"
    return Verdict(True, EXIT_OK, "gate passed: " + "; ".join([head, *notes]), [], notes)


def gate(results: RunResults) -> int:
    return verdict(results).exit_code


def parse_fail_on(values: list[str], name: str = "--fail-on") -> tuple[str, ...]:
    """``--fail-on`` values (repeated or comma-separated), checked against :data:`FAIL_ON`;
    ``name`` is how the user named the setting (in messages)."""
    items = tuple(x.strip() for v in values for x in v.split(",") if x.strip())
    unknown = [x for x in items if x not in FAIL_ON]
    if unknown:
        raise InputError(f"{name}: unknown {', '.join(unknown)}; choose from " + ", ".join(FAIL_ON))
    return items
