"""adk-rs's eval report read for ``--agent replay``: ``{"results": [EvalResult]}`` as adk-rs's
``EvalRunner::run_set`` returns it and its CLI's ``eval`` prints it (skundu42/adk-rs
``adk-rs-eval/src/runner.rs``, ``src/set.rs`` at 433b5668), or as ``--adk-rs-report`` writes it.

The report holds adk-rs's scores and verdicts, not the conversation: a case replayed from it
takes each metric's score and status as adk-rs gave them (ci-eval does not score it again), and
its turns show the expected side only. A case with several results has that many runs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Strict, ValidationError

from ci_eval.errors import InputError
from ci_eval.io.validation import first_error


class _Details(BaseModel):
    """What ci-eval reads of a score's details (adk-rs writes more: kept as they are)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    # adk-rs writes f64s (serde): a number, never a number's text
    threshold: Annotated[float, Strict()] | None = None
    per_invocation: list[Annotated[float, Strict()] | None] | None = None
    reason: str | None = None


class _Score(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    score: float
    status: Literal["PASSED", "FAILED", "ERROR"]
    details: _Details | None = None


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


def reported_runs(
    data: dict[str, Any], path: str
) -> dict[tuple[str, str], list[dict[str, Any] | str]]:
    """Per (eval set id, case id), each result's scores as adk-rs reported them: metric name →
    ``{"score", "status", "details"}``, in the report's order — or, for a result that is not
    adk-rs's EvalResult, why, with its JSON path (that case's run errors; the others are
    scored). A result that does not even name its case is the file's error."""
    runs: dict[tuple[str, str], list[dict[str, Any] | str]] = {}
    for i, raw in enumerate(data["results"]):
        try:
            result = _Result.model_validate(raw)
        except ValidationError as exc:
            set_id, case_id = raw.get("eval_set_id"), raw.get("eval_case_id")
            err = exc.errors()[0]
            where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in err["loc"])
            why = f"{path} $.results[{i}]{where}: {err['msg']}"
            if not isinstance(set_id, str) or not isinstance(case_id, str):
                raise InputError(
                    f"an adk-rs report's result is not adk-rs's EvalResult ({first_error(exc)})",
                    path=path,
                    json_path=f"$.results[{i}]",
                ) from None
            runs.setdefault((set_id, case_id), []).append(why)
            continue
        runs.setdefault((result.eval_set_id, result.eval_case_id), []).append(
            {
                name: score.model_dump(exclude_none=False) | {"details": _details(score)}
                for name, score in result.scores.items()
            }
        )
    return runs


def _details(score: _Score) -> dict[str, Any] | None:
    return None if score.details is None else score.details.model_dump(exclude_none=True)
