"""``--control auto``: a same-day control only when it decides something. When the suite-wide
test alone fires — a broad drop, no case standing out — the drop may be the provider's bad day
or the pull request's doing, and main's history cannot tell them apart. Then (and only then) the
merge base's agent runs in the same job on a sample of the cases, and the suite-wide test is
judged against it: a bad day moves both, the pull request's drop only its own side. Pure logic.

The sample is blind to the outcomes (a stable hash of the case ids): picking the failing cases
would bias the per-case hypergeometric test toward blaming the pull request."""

from __future__ import annotations

import hashlib

from ci_eval.model.comparison import Comparison, Judgement

SAMPLE = 40  # cases the control runs, at most
RUNS = 5  # control runs a case, at least (more runs: more power for the same cases)
# the control's own drop against main's history that makes it the day's: looser than the gate's
# bar, since a drop wrongly put down to the day is still judged against the control
DAYS_P = 0.1


def wanted(comparison: Comparison) -> bool:
    """Whether a control would decide: the suite-wide test fired and no case is a regression
    (a named regression fails the gate whatever the day)."""
    return comparison.suite_regressed and not comparison.judged(Judgement.REGRESSION)


def the_days(control_comparison: Comparison) -> bool:
    """Whether the drop is the day's: the merge base's agent, run today, shows a drop against
    main's history too (its suite-wide p-value at most ``DAYS_P``, or a case regressed); the
    pull request is then judged against it. Else main's agent is itself today, and the drop
    is the pull request's."""
    suite = control_comparison.suite
    if suite is not None and suite.p_value <= DAYS_P:
        return True
    return control_comparison.suite_regressed or bool(
        control_comparison.judged(Judgement.REGRESSION)
    )


def sample(keys: list[tuple[str, str]], size: int = SAMPLE) -> list[tuple[str, str]]:
    """``size`` of the cases, the same ones for the same ids whatever their outcomes."""
    return sorted(keys, key=_rank)[:size]


def runs(num_runs: int) -> int:
    """The control's runs of each sampled case."""
    return max(num_runs, RUNS)


def _rank(key: tuple[str, str]) -> bytes:
    return hashlib.blake2b(f"{key[0]}\0{key[1]}".encode(), digest_size=8).digest()
