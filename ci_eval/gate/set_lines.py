"""Each eval set's line in the verdict: its cases by what they are, and its first runs' pass
rate against main's with their intervals (:mod:`ci_eval.model.rates`). Pure logic."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.gate.items import SKIPS, Item, outcomes
from ci_eval.model.comparison import CaseJudgement
from ci_eval.model.rates import Delta, Rate, clustered_rate, delta
from ci_eval.model.status import Status
from ci_eval.results.file import RunResults, SetRecord
from ci_eval.text.plural import plural


@dataclass(frozen=True)
class SetLine:
    """An eval set's row: its cases by what they are, and its first runs' pass rate against
    main's, with their intervals (:mod:`ci_eval.model.rates`); confirmation reruns counted
    apart, as the gate gives them only to failing cases."""

    set_id: str
    title: str
    file: str
    cases: int
    passed: int
    blocking: int
    not_blocking: int
    skipped: int
    # per evaluated case, (passed, runs) of its first runs; of main's runs of it in the window
    # it was judged on (cases with history)
    first: tuple[tuple[int, int], ...] = ()
    main: tuple[tuple[int, int], ...] = ()
    reruns: int = 0  # confirmation reruns this job made of its cases
    reruns_passed: int = 0

    @property
    def now_rate(self) -> Rate:
        return clustered_rate(self.first)

    @property
    def main_pass_rate(self) -> Rate | None:
        return clustered_rate(self.main) if self.main else None

    @property
    def runs(self) -> int:
        return sum(n for _, n in self.first)

    @property
    def rate(self) -> float | None:
        return self.now_rate.value

    def rate_text(self) -> str:
        """``75 % [41–93] (3/4 first runs; +4 reruns)``; ``n/a`` with no run."""
        now = self.now_rate
        if not now.runs:
            return "n/a"
        text = f"{now.text()} ({now.passed}/{now.runs} first {'run' if now.runs == 1 else 'runs'}"
        if self.reruns:
            text += f"; +{plural(self.reruns, 'rerun')}"
        return text + ")"

    def change(self) -> Delta | None:
        main = self.main_pass_rate
        return delta(self.now_rate, main) if main is not None else None

    def delta_text(self) -> str:
        """``▼12 pts [−30, +4]`` against main; empty without main's runs."""
        d = self.change()
        return "" if d is None else d.text()

    def record(self) -> dict[str, object]:
        """As the results file's ``pass_rates`` holds it."""
        main, d = self.main_pass_rate, self.change()
        return {
            "eval_set_id": self.set_id,
            "file": self.file,
            "first_runs": self.now_rate.record(),
            "reruns": {"passed": self.reruns_passed, "runs": self.reruns},
            "main": None if main is None else main.record(),
            "delta": None if d is None else d.record(),
        }


def set_line(
    s: SetRecord,
    items: dict[str, Item],
    judgements: dict[tuple[str, str], CaseJudgement],
    first_runs: int = 0,
) -> SetLine:
    """``first_runs``: the runs each case got before confirmation reruns (0: not recorded,
    every run a first run)."""
    passed = blocking = quiet = skipped = reruns = reruns_passed = 0
    first: list[tuple[int, int]] = []
    main: list[tuple[int, int]] = []
    for case in s.cases:
        item = items.get(case.eval_id)
        if item is None:
            passed += 1
        elif item.kind in SKIPS:
            skipped += 1
        elif item.blocking:
            blocking += 1
        else:
            quiet += 1
        if case.status in (Status.PASSED, Status.FAILED, Status.ERROR):
            done = outcomes(case)
            head, rest = (done[:first_runs], done[first_runs:]) if first_runs else (done, [])
            first.append((head.count(True), len(head)))
            reruns += len(rest)
            reruns_passed += rest.count(True)
            j = judgements.get((s.eval_set_id, case.eval_id))
            if j is not None and j.history_runs:
                main.append((j.history_runs - j.history_failed, j.history_runs))
    return SetLine(
        s.eval_set_id,
        s.eval_set_id or s.file,
        s.file,
        len(s.cases),
        passed,
        blocking,
        quiet,
        skipped,
        tuple(first),
        tuple(main),
        reruns,
        reruns_passed,
    )


def pass_rates(results: RunResults) -> list[dict[str, object]]:
    """Each set's rates as the results file holds them (``pass_rates``)."""
    comparison = results.comparison
    judgements = comparison.by_case() if comparison is not None else {}
    first = results.settings.num_runs or 0
    return [set_line(s, {}, judgements, first).record() for s in results.sets]
