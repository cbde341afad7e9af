"""A case's history on main as the gate reads it: its runs grouped by the job (push) that ran
them, cut at its last change of state, recent pushes weighted above old ones. Pure logic.

- **Clusters.** The runs one job made of a case share that job's day, cache and deployment: they
  fail together more often than independent runs would. Each push's runs of a case are one
  :class:`Cluster`; :mod:`ci_eval.gate.noise` measures from them how much runs of one job move
  together, and how much whole pushes swing.
- **Since the last change.** A case fixed on main (failing every run, then passing every run)
  is judged on its runs since the fix, so breaking it again is news rather than "a known
  failure"; likewise a case broken on main is judged on its runs since it broke. A change is
  a split of the case's pushes into before and after whose failure rates differ beyond what
  chance makes of them (a likelihood-ratio test at a strict level, as the split is chosen
  from several); a flaky case, failing now and then, is never cut.
- **Recency.** Each push's runs count with weight ½ per :data:`HALF_LIFE` pushes of age, so a
  case drifting on main is judged by where it is now, not where it was 20 runs ago.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ci_eval.model.baseline import StoredMetric
from ci_eval.model.results import CaseMetric

HALF_LIFE = 4.0  # pushes: a push this many pushes old counts half as much as the latest
# a change of state: the likelihood-ratio statistic of the best split beyond this (χ²₁ tail
# 1e-4, a strict bar for a split chosen as the best of up to 19)
CHANGE_LR = 15.1


@dataclass(slots=True)
class Cluster:
    """One push's scored runs of a case."""

    seq: int  # the push (baseline ``pushes[].seq``); 0 where the history has none
    runs: int
    failed: int


@dataclass(slots=True)
class CaseHistory:
    clusters: list[Cluster]  # oldest first, since the last change of state
    cut: int = 0  # pushes left out before the change (0: none)
    since: int | None = None  # the seq of the first push after the change

    @property
    def runs(self) -> int:
        return sum(c.runs for c in self.clusters)

    @property
    def failed(self) -> int:
        return sum(c.failed for c in self.clusters)

    def weights(self) -> list[float]:
        """Each cluster's recency weight: 1 for the latest push, ½ at HALF_LIFE pushes."""
        last = len(self.clusters) - 1
        return [0.5 ** ((last - i) / HALF_LIFE) for i in range(len(self.clusters))]


def metric_fails(
    scores: list[float | None], threshold: float, own: list[bool | None] | None = None
) -> list[bool | None]:
    """Per run of one metric, did it fail: the run's own verdict where the metric gave one
    (``own``, aligned with ``scores`` from the latest: adk-rs's any-invocation rule, a custom
    metric's status), else its score below the threshold; None where the run was not scored."""
    own = list(own or [])
    offset = len(scores) - len(own)
    out: list[bool | None] = []
    for i, score in enumerate(scores):
        verdict = own[i - offset] if 0 <= i - offset < len(own) else None
        out.append(None if score is None else score < threshold if verdict is None else verdict)
    return out


def case_metric_fails(metric: CaseMetric) -> list[bool | None]:
    """Per run of a case's gating metric, did it fail (see ``metric_fails``)."""
    return metric_fails(list(metric.runs), metric.threshold or 0.0, list(metric.run_fails))


def stored_fails(entry: StoredMetric, threshold: float) -> list[bool | None]:
    """Per run of a metric's history on main, did it fail by today's threshold: its recorded
    verdicts while the threshold is the one they were given under, else its scores against
    today's (a moved threshold re-reads the history)."""
    own = entry.fails if entry.threshold == threshold else None
    return metric_fails(list(entry.scores), threshold, own)


def run_fails(per_metric: list[list[bool | None]]) -> list[bool | None]:
    """Per run (aligned from the latest), did any metric fail it? None where no metric scored
    the run (an errored run)."""
    length = max((len(fails) for fails in per_metric), default=0)
    out: list[bool | None] = []
    for back in range(length, 0, -1):
        verdicts = [
            fails[-back] for fails in per_metric if len(fails) >= back and fails[-back] is not None
        ]
        out.append(any(verdicts) if verdicts else None)
    return out


def clusters(fails: list[bool | None], pushes: list[Any] | None) -> list[Cluster]:
    """The scored runs grouped by push (``pushes``, aligned from the latest with ``fails``;
    a history without pushes is one cluster per run)."""
    pushes = list(pushes or [])
    out: list[Cluster] = []
    offset = len(pushes) - len(fails)
    for i, fail in enumerate(fails):
        if fail is None:
            continue
        j = i + offset
        seq = pushes[j] if 0 <= j < len(pushes) and isinstance(pushes[j], int) else None
        if seq is not None and out and out[-1].seq == seq:
            out[-1].runs += 1
            out[-1].failed += fail
        else:
            out.append(Cluster(seq if seq is not None else 0, 1, int(fail)))
    return out


def _loglik(failed: int, runs: int) -> float:
    if failed in (0, runs):
        return 0.0
    p = failed / runs
    return failed * math.log(p) + (runs - failed) * math.log(1 - p)


def since_change(history: list[Cluster]) -> CaseHistory:
    """The clusters since the case last changed state (see the module), or all of them."""
    if len(history) < 2:
        return CaseHistory(list(history))
    runs = sum(c.runs for c in history)
    failed = sum(c.failed for c in history)
    whole = _loglik(failed, runs)
    best, best_at = 0.0, 0
    before_runs = before_failed = 0
    for at in range(1, len(history)):
        before_runs += history[at - 1].runs
        before_failed += history[at - 1].failed
        lr = 2 * (
            _loglik(before_failed, before_runs)
            + _loglik(failed - before_failed, runs - before_runs)
            - whole
        )
        if lr > best:
            best, best_at = lr, at
    if best < CHANGE_LR:
        return CaseHistory(list(history))
    kept = history[best_at:]
    return CaseHistory(list(kept), cut=best_at, since=kept[0].seq)
