"""``ci-eval plan``: the runs a pull request needs to catch a given drop, read off main's history.

Each candidate (``num_runs`` from 1, with the confirmation reruns that lead up to
:data:`ci_eval.gate.case_judgement.CONFIRM` runs) is asked of the gate itself: a PR whose every
case passed its runs is compared with the baseline (:func:`ci_eval.gate.compare.compare`), and
the comparison's power (:mod:`ci_eval.gate.power`) says what that PR could have detected — the
verdict's own sentence, for a PR not yet run. Its cost is the case runs a PR makes, and the
reruns expected when nothing changed. Pure logic.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.gate import confirm
from ci_eval.gate.case_judgement import CONFIRM
from ci_eval.gate.compare import compare
from ci_eval.gate.power import Target
from ci_eval.model.baseline import Baseline
from ci_eval.model.comparison import Power
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.results import CaseMetric, CaseRecord, RunResults, SetRecord
from ci_eval.model.status import Status
from ci_eval.settings.gate import GateSettings
from ci_eval.text.plural import plural

MAX_RUNS = 10  # num_runs tried, at most


@dataclass(frozen=True, slots=True)
class Option:
    num_runs: int
    confirm_runs: int
    power: Power
    cases: int  # the cases a PR runs (main's)

    @property
    def runs(self) -> int:
        """Case runs per PR, before confirmation reruns."""
        return self.cases * self.num_runs

    def meets(self, target: Target) -> bool:
        p = self.power.probability
        return p is not None and p >= target.power


def _passing(baseline: Baseline, num_runs: int, confirm_runs: int) -> RunResults:
    """A PR whose every case of main passed ``num_runs`` runs at its recorded thresholds."""
    sets = []
    for set_id, stored in baseline.sets.items():
        cases, specs = [], {}
        for case_id, entry in stored.cases.items():
            metrics = []
            for name, m in entry.metrics.items():
                if m.threshold is None:
                    continue
                t = float(m.threshold)
                specs[name] = MetricSpec(name, t)
                metrics.append(CaseMetric(name, Status.PASSED, t, t, runs=[t] * num_runs))
            if metrics:
                cases.append(CaseRecord(case_id, metrics=metrics, scored_status=Status.PASSED))
        config = MetricConfig(list(specs.values()), "baseline", "adk")
        sets.append(SetRecord(set_id, f"{set_id}.evalset.json", "adk", config, cases))
    results = RunResults(sets)
    results.settings = RunFacts(num_runs=num_runs, confirm_runs=confirm_runs)
    return results


def option(baseline: Baseline, settings: GateSettings, num_runs: int, target: Target) -> Option:
    """What a PR of ``num_runs`` runs a case, with the reruns up to CONFIRM, could detect."""
    reruns = max(0, CONFIRM - num_runs)
    results = _passing(baseline, num_runs, reruns)
    comparison = compare(
        results, baseline, settings, confirm=confirm.target(num_runs, reruns), target=target
    )
    power = comparison.power or Power(target.case_from, target.case_to, 0)
    return Option(num_runs, reruns, power, sum(len(s.cases) for s in results.sets))


def options(
    baseline: Baseline, settings: GateSettings, target: Target, most: int = MAX_RUNS
) -> list[Option]:
    """From one run a case up: until one meets the target (and one more, to show the step),
    or ``most``."""
    out: list[Option] = []
    for n in range(1, most + 1):
        out.append(option(baseline, settings, n, target))
        met = [o for o in out if o.meets(target)]
        if met and n > met[0].num_runs:
            break
        if out[-1].power.probability is None:
            break  # no case passes case_from on main: more runs cannot say more
    return out


def chosen(found: list[Option], target: Target) -> Option | None:
    """The cheapest option that meets the target."""
    return next((o for o in found if o.meets(target)), None)


def lines(baseline: Baseline, where: str, found: list[Option], target: Target) -> list[str]:
    """What ``ci-eval plan`` prints: the history, the target, a row per option, the choice."""
    provenance = baseline.provenance
    commit = (provenance.commit or "unknown")[:12] if provenance else "unknown"
    cases = found[0].cases if found else 0
    out = [
        f"main's history: {where} ({commit}): {plural(cases, 'case')} over "
        f"{plural(len(baseline.pushes), 'push', 'pushes')}",
    ]
    first = found[0].power if found else None
    if first is None or first.probability is None:
        out.append(
            f"no case passes ≥ {target.case_from:.0%} of at least its history's runs on main "
            "with history enough to judge: record more pushes (`ci-eval baseline update`), or "
            "ask about another drop with --detect"
        )
        return out
    out.append(
        f"to catch: a case passing ≥ {target.case_from:.0%} on main that falls to "
        f"{target.case_to:.0%}, with {target.power:.0%} probability (on average over its "
        f"{first.cases} such cases)"
    )
    out.append("")
    head = (
        "runs a case",
        "with reruns, up to",
        "caught",
        "the least",
        "suite-wide drop",
        "agent runs",
    )
    rows = [head]
    for o in found:
        p = o.power
        suite = f"{p.suite_drop} pts" if p.suite_drop is not None else f"> {Power.SUITE_MAX} pts"
        rows.append(
            (
                str(o.num_runs),
                str(o.num_runs + o.confirm_runs),
                f"{p.probability or 0:.0%}",
                f"{p.lowest or 0:.0%}",
                suite,
                f"{o.runs} + {p.reruns_expected:.1f}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        out.append("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    out.append(
        f"(caught: the chance a case falling {target.case_from:.0%} → {target.case_to:.0%} is "
        f"named a regression; suite-wide drop: of every case, caught with {target.power:.0%}; "
        "agent runs: per pull request, + the confirmation reruns expected when nothing changed)"
    )
    out.append("")
    best = chosen(found, target)
    if best is None:
        top = max(found, key=lambda o: o.power.probability or 0.0)
        out.append(
            f"plan: no num_runs up to {found[-1].num_runs} reaches {target.power:.0%}; the "
            f"best, num_runs = {top.num_runs}, catches {top.power.probability or 0:.0%} — "
            "a longer history on main (more runs a push) sharpens each case's test"
        )
        return out
    p = best.power
    least = f" (the least {p.lowest:.0%})" if (p.lowest or 0) < (p.probability or 0) - 5e-3 else ""
    reruns = f", confirm_runs = {best.confirm_runs}" if best.confirm_runs else ""
    out.append(
        f"plan: num_runs = {best.num_runs}{reruns} — caught {p.probability or 0:.0%}{least}; "
        f"{best.runs} agent runs per pull request, +{p.reruns_expected:.1f} reruns expected"
    )
    where = (
        f"num_runs = {best.num_runs}, confirm_runs = {best.confirm_runs}) or the action's "
        "inputs num-runs and confirm-runs: they place"
        if best.confirm_runs
        else f"num_runs = {best.num_runs}) or the action's input num-runs: it places"
    )
    out.append(
        f"set it in ci-eval.toml ({where} the bar, so a pull request's change applies once merged"
    )
    return out
