"""Results built in code, for the tests of the stages after the run (score, gate, compare,
report, publish): one place that knows how the results model is put together; and a loaded
eval set of one-turn cases, for the runner's tests."""

from __future__ import annotations

from typing import Any

from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.metrics.base import CaseMetric
from ci_eval.model import EvalSet
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.results.file import CaseRecord, RunRecord, RunResults, SetRecord

SPEC = MetricSpec("m", 1.0)


def case(eval_id: str, status: str, reason: str | None = None, file: str = "s.json") -> CaseRecord:
    """A scored case whose one gating metric ``m`` has ``status`` (ERROR: the agent failed;
    SKIPPED: not run)."""
    if status == "SKIPPED":
        return CaseRecord(eval_id, file, 1, skipped="needs a simulator", scored_status=status)
    if status == "ERROR":
        runs = [RunRecord(1, error="agent: HTTP 500")]
        return CaseRecord(eval_id, file, 1, runs=runs, scored_status=status)
    score = {"PASSED": 1.0, "FAILED": 0.0}.get(status)
    metric = CaseMetric("m", status, score, 1.0, reason=reason)
    return CaseRecord(eval_id, file, 1, runs=[RunRecord(1)], metrics=[metric], scored_status=status)


def results(
    statuses: dict[str, str],
    fail_on: tuple[str, ...] = ("failure", "error"),
    interrupted: bool = False,
    set_id: str = "s",
    reasons: dict[str, str] | None = None,
) -> RunResults:
    """One eval set ``set_id`` with a case per entry of ``statuses`` (case id → status)."""
    reasons = reasons or {}
    cases = [case(c, status, reasons.get(c), f"{set_id}.json") for c, status in statuses.items()]
    record = SetRecord(
        set_id, f"{set_id}.json", "adk", MetricConfig([SPEC], "x", "adk"), cases, [SPEC]
    )
    return RunResults(
        [record],
        "agent",
        "2026-11-23T00:00:00+00:00",
        1.0,
        interrupted=interrupted,
        fail_on=fail_on,
    )


def loaded_set(cases: int) -> LoadedEvalSet:
    """Eval set ``s`` as loading gives it: cases ``c0``, ``c1``... of one turn ("hi") each."""
    conversation = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]
    return LoadedEvalSet(
        eval_set=EvalSet.model_validate(
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {"eval_id": f"c{n}", "conversation": conversation} for n in range(cases)
                ],
            }
        ),
        path="s.evalset.json",
        dialect="adk",
        metrics=MetricConfig([], "default", "default"),
    )


# --- eval files as JSON -----------------------------------------------------------------------


def inv(text: str, answer: str = "ok", tool: str | None = None, snake: bool = True) -> dict:
    """One ADK invocation as a file holds it (snake_case, or the camelCase of trpc and adk-rs)."""
    if snake:
        out: dict[str, Any] = {
            "invocation_id": f"i-{text}",
            "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]},
        }
        if tool:
            out["intermediate_data"] = {"tool_uses": [{"name": tool, "args": {}}]}
        return out
    out = {
        "invocationId": f"i-{text}",
        "userContent": {"role": "user", "parts": [{"text": text}]},
        "finalResponse": {"role": "model", "parts": [{"text": answer}]},
    }
    if tool:
        out["intermediateData"] = {"toolUses": [{"name": tool, "args": {}}]}
    return out


def evalset(set_id: str, *case_ids: str) -> dict:
    return {
        "eval_set_id": set_id,
        "eval_cases": [{"eval_id": c, "conversation": [inv(f"{c}?")]} for c in case_ids],
    }
