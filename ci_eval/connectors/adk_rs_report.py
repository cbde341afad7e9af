"""adk-rs's eval report read for ``--agent replay``: ``{"results": [EvalResult]}`` as adk-rs's
``EvalRunner::run_set`` returns it and its CLI's ``eval`` prints it (skundu42/adk-rs
``adk-rs-eval/src/runner.rs``, ``src/set.rs`` at 433b5668), or as ``--adk-rs-report`` writes it.

The report holds adk-rs's scores and verdicts, not the conversation: a case replayed from it
takes each metric's score and status as adk-rs gave them (ci-eval does not score it again), and
its turns show the expected side only. A case with several results has that many runs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ci_eval.errors import InputError
from ci_eval.io.validation import first_error


class _Score(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    score: float
    status: Literal["PASSED", "FAILED", "ERROR"]
    details: Any = None


class _Result(BaseModel):
    model_config = ConfigDict(extra="ignore")

    eval_set_id: str
    eval_case_id: str
    scores: dict[str, _Score]
    overall_status: Literal["PASSED", "FAILED", "ERROR"]


def is_report(data: dict[str, Any]) -> bool:
    """An adk-rs report: its results name cases by ``eval_case_id`` and carry ``scores``."""
    results = data.get("results")
    return (
        isinstance(results, list)
        and bool(results)
        and all(isinstance(r, dict) and "eval_case_id" in r and "scores" in r for r in results)
    )


def reported_runs(data: dict[str, Any], path: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per (eval set id, case id), each result's scores as adk-rs reported them: metric name →
    ``{"score", "status", "details"}``, in the report's order."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for i, raw in enumerate(data["results"]):
        try:
            result = _Result.model_validate(raw)
        except ValidationError as exc:
            raise InputError(
                f"an adk-rs report's result is not adk-rs's EvalResult ({first_error(exc)})",
                path=path,
                json_path=f"$.results[{i}]",
            ) from None
        runs.setdefault((result.eval_set_id, result.eval_case_id), []).append(
            {name: score.model_dump() for name, score in result.scores.items()}
        )
    return runs
