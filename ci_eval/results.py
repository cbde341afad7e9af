"""What a run produced, as plain data, and its JSON form (``--results FILE``).

The JSON carries ``schema_version``; per eval set, case and run it holds the expected and actual
invocations (ADK's snake_case Invocation), timings, retries and errors. ``report``, ``compare``,
``merge`` and ``--agent replay`` read it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval import __version__
from ci_eval.criteria import MetricConfig
from ci_eval.errors import InputError
from ci_eval.io.files import write_json_atomic as write_json_atomic  # re-exported
from ci_eval.model import Invocation

SCHEMA_VERSION = 1


@dataclass
class InvocationRecord:
    expected: Invocation
    actual: Invocation | None = None
    duration_s: float | None = None
    retries: int = 0
    error: str | None = None


@dataclass
class RunRecord:
    run: int
    invocations: list[InvocationRecord] = field(default_factory=list)
    error: str | None = None  # why the agent could not finish this run (infrastructure)
    duration_s: float = 0.0
    metrics: list[Any] = field(default_factory=list)  # MetricResult per metric, once scored
    # a simulated user's run: who played the user, why the conversation ended, LLM calls
    simulation: dict[str, Any] | None = None
    started_s: float | None = None  # seconds after the run began (None: replayed or not run)
    replayed: bool = False  # durations are the recording's, not measured

    @property
    def retries(self) -> int:
        return sum(i.retries for i in self.invocations)


@dataclass
class CaseRecord:
    eval_id: str
    file: str
    line: int | None
    runs: list[RunRecord] = field(default_factory=list)
    skipped: str | None = None  # why the case was not run (e.g. needs a user simulator)
    extensions: dict[str, Any] = field(default_factory=dict)  # dialect data, for metrics
    rubrics: list[dict[str, Any]] | None = None
    metrics: list[Any] = field(default_factory=list)  # CaseMetric per metric, once scored
    verdict: str | None = None  # PASSED, FAILED, ERROR, NOT_EVALUATED, SKIPPED once scored
    flaky: bool = False
    # ADK conversation_scenario (starting_prompt, conversation_plan, user_persona): the user's
    # turns are simulated; metrics that need an expected conversation do not apply
    scenario: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        """The verdict once scored; before that COMPLETED, ERROR or SKIPPED."""
        if self.verdict is not None:
            return self.verdict
        if self.skipped is not None:
            return "SKIPPED"
        return "ERROR" if any(r.error for r in self.runs) or not self.runs else "COMPLETED"

    @property
    def error(self) -> str | None:
        return next((r.error for r in self.runs if r.error), None)


@dataclass
class SetRecord:
    eval_set_id: str
    file: str
    dialect: str
    metrics: MetricConfig
    cases: list[CaseRecord] = field(default_factory=list)
    applied_metrics: list[Any] = field(default_factory=list)  # MetricSpec, once scored


@dataclass
class RunResults:
    sets: list[SetRecord]
    agent: str
    started: str
    duration_s: float
    settings: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False
    comparison: Any = None  # ci_eval.compare.Comparison, when a baseline was compared
    fail_on: tuple[str, ...] = ("failure", "error")

    def cases(self) -> list[tuple[SetRecord, CaseRecord]]:
        return [(s, c) for s in self.sets for c in s.cases]

    def count(self, status: str) -> int:
        return sum(1 for _, c in self.cases() if c.status == status)


def _inv(inv: Invocation | None) -> dict[str, Any] | None:
    return None if inv is None else inv.model_dump(mode="json", exclude_none=True)


STATUSES = ("PASSED", "FAILED", "ERROR", "NOT_EVALUATED", "SKIPPED", "COMPLETED")


def _num(value: float | None) -> float | None:
    return None if value is None or value != value else value  # NaN is not JSON


def _run_metric(m: Any) -> dict[str, Any]:
    return {
        "name": m.name,
        "status": m.status,
        "score": _num(m.score),
        "threshold": m.threshold,
        "per_invocation": [_num(v) for v in m.per_invocation],
        "reason": m.reason,
        "details": m.details,
    }


def _case_metric(m: Any) -> dict[str, Any]:
    return {
        "name": m.name,
        "status": m.status,
        "score": _num(m.score),
        "threshold": m.threshold,
        "informational": m.informational,
        "runs": [_num(v) for v in m.runs],
        "std": _num(m.std),
        "min": _num(m.min),
        "pass_rate": m.pass_rate,
        "flaky": m.flaky,
        "reason": m.reason,
    }


def _comparison(c: Any) -> dict[str, Any] | None:
    if c is None:
        return None
    from dataclasses import asdict

    return {
        "baseline_commit": c.baseline_commit,
        "baseline_date": c.baseline_date,
        "baseline_source": c.baseline_source,
        "significance": c.significance,
        "min_history": c.min_history,
        "warnings": list(c.warnings),
        "regressions": len(c.regressed_cases()),
        "changes": [
            {
                "eval_set_id": x.set_id,
                "eval_id": x.case_id,
                "metric": x.metric,
                "before": x.before,
                "after": x.after,
                "regressed": x.regressed,
                "improved": x.improved,
                "method": x.method,
                "p_value": x.p_value,
                "history_passed": x.history_passed,
                "history_runs": x.history_runs,
                "failed_now": x.failed_now,
                "runs_now": x.runs_now,
            }
            for x in c.changes
        ],
        "cases": [{**asdict(j), "judgement": str(j.judgement)} for j in c.cases],
        "suite": None if c.suite is None else asdict(c.suite),
        "new_cases": [list(k) for k in c.new_cases],
        "removed_cases": [list(k) for k in c.removed_cases],
    }


def to_json(results: RunResults) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ci-eval", "version": __version__},
        "started": results.started,
        "duration_s": round(results.duration_s, 3),
        "agent": results.agent,
        "settings": results.settings,
        "interrupted": results.interrupted,
        "totals": {status.lower(): results.count(status) for status in STATUSES}
        | {"cases": len(results.cases()), "flaky": sum(1 for _, c in results.cases() if c.flaky)},
        "fail_on": list(results.fail_on),
        "comparison": _comparison(results.comparison),
        "sets": [
            {
                "eval_set_id": s.eval_set_id,
                "file": s.file,
                "dialect": s.dialect,
                "metrics": {
                    "source": s.metrics.source,
                    "dialect": s.metrics.dialect,
                    "metrics": [
                        {
                            "name": m.name,
                            "threshold": m.threshold,
                            "criterion": m.criterion,
                            "evaluator": m.evaluator,
                        }
                        for m in (s.applied_metrics or s.metrics.metrics)
                    ],
                },
                "cases": [
                    {
                        "eval_id": c.eval_id,
                        "file": c.file,
                        "line": c.line,
                        "status": c.status,
                        "error": c.error,
                        "skipped": c.skipped,
                        "flaky": c.flaky,
                        "metrics": [_case_metric(m) for m in c.metrics],
                        "extensions": c.extensions,
                        "rubrics": c.rubrics,
                        "conversation_scenario": c.scenario,
                        "runs": [
                            {
                                "run": r.run,
                                "error": r.error,
                                "duration_s": round(r.duration_s, 4),
                                "started_s": None if r.started_s is None else round(r.started_s, 4),
                                "retries": r.retries,
                                "metrics": [_run_metric(m) for m in r.metrics],
                                "simulation": r.simulation,
                                "invocations": [
                                    {
                                        "expected": _inv(i.expected),
                                        "actual": _inv(i.actual),
                                        "duration_s": None
                                        if i.duration_s is None
                                        else round(i.duration_s, 4),
                                        "retries": i.retries,
                                        "error": i.error,
                                    }
                                    for i in r.invocations
                                ],
                            }
                            for r in c.runs
                        ],
                    }
                    for c in s.cases
                ],
            }
            for s in results.sets
        ],
    }


def read_results(path: Path) -> RunResults:
    """Read a results file ``--results`` wrote (input of report, compare, merge). InputError
    names the file and what is wrong; nothing here trusts the file's shape."""
    from ci_eval.io.jsonpos import max_results_bytes, read_json_file

    # errors name no line: the C scanner parses
    doc = read_json_file(path, str(path), positions_wanted=False, limit=max_results_bytes())
    data = doc.data
    if not isinstance(data, dict) or "schema_version" not in data or "sets" not in data:
        raise InputError(
            "not a ci-eval results file (no schema_version and sets); write one "
            "with `ci-eval run --results FILE`",
            path=str(path),
        )
    if data["schema_version"] != SCHEMA_VERSION:
        raise InputError(
            f"results schema_version {data['schema_version']!r} is not "
            f"{SCHEMA_VERSION}; rerun with this ci-eval",
            path=str(path),
        )
    from ci_eval import results_schema

    results_schema.check(doc)  # a crafted file is refused with its place, not rendered raw
    try:
        return from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(
            f"not a valid ci-eval results file ({type(exc).__name__}: {exc})", path=str(path)
        ) from None


def from_json(data: dict[str, Any]) -> RunResults:
    from ci_eval.criteria import MetricSpec
    from ci_eval.metrics.base import CaseMetric, MetricResult

    sets = []
    for s in data["sets"]:
        m = s["metrics"]
        specs = [
            MetricSpec(x["name"], x.get("threshold"), x.get("criterion") or {}, x.get("evaluator"))
            for x in m.get("metrics") or []
        ]
        record = SetRecord(
            s["eval_set_id"],
            s["file"],
            s.get("dialect", "adk"),
            MetricConfig(specs, m.get("source", "default"), m.get("dialect", "default")),
            applied_metrics=list(specs),
        )
        for c in s["cases"]:
            status = c.get("status")
            case = CaseRecord(
                c["eval_id"],
                c.get("file", s["file"]),
                c.get("line"),
                skipped=c.get("skipped"),
                extensions=c.get("extensions") or {},
                rubrics=c.get("rubrics"),
                scenario=c.get("conversation_scenario"),
                verdict=status if status not in (None, "COMPLETED") else None,
                flaky=bool(c.get("flaky")),
                metrics=[
                    CaseMetric(
                        x["name"],
                        x["status"],
                        x.get("score"),
                        x.get("threshold"),
                        bool(x.get("informational")),
                        list(x.get("runs") or []),
                        x.get("std"),
                        x.get("min"),
                        x.get("pass_rate"),
                        bool(x.get("flaky")),
                        x.get("reason"),
                    )
                    for x in c.get("metrics") or []
                ],
            )
            for r in c.get("runs") or []:
                run = RunRecord(
                    r["run"],
                    error=r.get("error"),
                    duration_s=float(r.get("duration_s") or 0.0),
                    simulation=r.get("simulation"),
                )
                if isinstance(r.get("started_s"), int | float):
                    run.started_s = float(r["started_s"])
                run.metrics = [
                    MetricResult(
                        x["name"],
                        x["status"],
                        x.get("score"),
                        x.get("threshold"),
                        list(x.get("per_invocation") or []),
                        x.get("reason"),
                        x.get("details") or {},
                    )
                    for x in r.get("metrics") or []
                ]
                run.invocations = [
                    InvocationRecord(
                        Invocation.model_validate(i["expected"]),
                        Invocation.model_validate(i["actual"]) if i.get("actual") else None,
                        i.get("duration_s"),
                        int(i.get("retries") or 0),
                        i.get("error"),
                    )
                    for i in r.get("invocations") or []
                ]
                case.runs.append(run)
            record.cases.append(case)
        sets.append(record)
    comparison = None
    if data.get("comparison"):
        from ci_eval.compare import CaseJudgement, Comparison, Judgement, MetricChange, SuiteDrop

        c = data["comparison"]
        comparison = Comparison(
            c.get("baseline_commit"),
            c.get("baseline_date"),
            [
                MetricChange(
                    x["eval_set_id"],
                    x["eval_id"],
                    x["metric"],
                    x.get("before"),
                    x.get("after"),
                    bool(x.get("regressed")),
                    bool(x.get("improved")),
                    x.get("method"),
                    x.get("p_value"),
                    x.get("history_passed"),
                    x.get("history_runs"),
                    x.get("failed_now"),
                    x.get("runs_now"),
                )
                for x in c.get("changes") or []
            ],
            [tuple(k) for k in c.get("new_cases") or []],
            [tuple(k) for k in c.get("removed_cases") or []],
            list(c.get("warnings") or []),
            [
                CaseJudgement(**{**j, "judgement": Judgement(j["judgement"])})
                for j in c.get("cases") or []
            ],
            SuiteDrop(**c["suite"]) if c.get("suite") else None,
            float(c.get("significance") or 0.05),
            int(c.get("min_history") or 5),
            c.get("baseline_source"),
        )
        if "cases" not in c:  # written before the history gate: its regressions still count
            for x in comparison.regressions:
                if (x.set_id, x.case_id) not in comparison.regressed_cases():
                    comparison.cases.append(
                        CaseJudgement(
                            x.set_id, x.case_id, Judgement.REGRESSION, 0, 0, 0, 0,
                            x.method or "an earlier ci-eval's rule", metrics=[x.metric],
                        )
                    )  # fmt: skip
    return RunResults(
        comparison=comparison,
        fail_on=tuple(data.get("fail_on") or ("failure", "error")),
        sets=sets,
        agent=data.get("agent", ""),
        started=data.get("started", ""),
        duration_s=float(data.get("duration_s") or 0.0),
        settings=data.get("settings") or {},
        interrupted=bool(data.get("interrupted")),
    )
