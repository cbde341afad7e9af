"""Confirmation reruns: which failing cases the gate wants run again before it decides.

A case that failed every run so far where main rarely or never fails it — or that has no
history at all — may be broken, or may be a flaky case having a bad streak. One more run tells
them apart: a broken case fails again, a flaky one soon passes. The pipeline reruns these cases
one run a round until each has passed once, or failed every one of ``target`` runs
(:data:`ci_eval.gate.compare.CONFIRM`, five unless fewer are allowed), and the comparison then
judges all of a case's runs. When a large share of the suite fails at once it is an outage
(a provider's bad hour, a dead endpoint), not a regression: no rerun is spent on it. Pure logic.
"""

from __future__ import annotations

from ci_eval.gate.compare import CONFIRM, RARELY
from ci_eval.model.comparison import Comparison, Judgement
from ci_eval.model.results import RunResults
from ci_eval.model.status import Status

# more of the scored cases failing at once than this share, and at least OUTAGE_CASES of them:
# an outage, no reruns (a few failing cases of a small suite are not one)
OUTAGE_SHARE = 0.3
OUTAGE_CASES = 10


def target(num_runs: int, confirm_runs: int) -> int:
    """The runs, all failing, that confirm a break: five, or as many as the run makes."""
    return max(2, min(CONFIRM, num_runs + confirm_runs))


def to_confirm(comparison: Comparison, runs_target: int) -> list[tuple[str, str]]:
    """The cases to run once more: every run so far failed, fewer than ``runs_target`` runs,
    and main never or rarely fails them (or they have no history); not known failures nor
    accepted ones. A regression is confirmed too before it blocks: a job's runs share its
    day, so three failing runs of one job may be one bad batch."""
    keys = []
    for j in comparison.cases:
        if j.judgement in (Judgement.ACCEPTED, Judgement.KNOWN_FAILURE):
            continue
        if not j.failed_now or j.failed_now < j.runs_now or j.runs_now >= runs_target:
            continue
        if j.history_runs and j.history_failed > RARELY * j.history_runs:
            continue
        keys.append((j.set_id, j.case_id))
    return keys


def outage(comparison: Comparison, results: RunResults, runs_target: int) -> str | None:
    """Why no case is rerun when too many fail every run at once where main rarely does; None
    when reruns may go ahead. (Cases main fails often, and a flaky case failing one of three
    runs, are not part of an outage: a suite near its thresholds fails many cases every day.)"""
    scored = sum(1 for _, c in results.cases() if c.status in (Status.PASSED, Status.FAILED))
    failed = len(to_confirm(comparison, runs_target))
    if failed >= OUTAGE_CASES and failed > OUTAGE_SHARE * scored:
        return (
            f"{failed} of {scored} cases failed every run at once where main rarely fails them: "
            f"no confirmation reruns (more than {OUTAGE_SHARE:.0%} failing together looks like "
            "an outage, not a regression)"
        )
    return None
