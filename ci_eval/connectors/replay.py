"""No agent: actual invocations come from recorded results, matched to cases by ids.

Reads ADK ``.evalset_result.json`` (2.x plain JSON and 1.x JSON-string-wrapped), trpc-agent-go
result files and ci-eval's own results JSON. Recorded runs of a case are replayed in order: run 1
gets the first recording, run 2 the second (and the last one again when there are fewer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ci_eval.connectors.base import ActualTurn, AgentError
from ci_eval.dialects.trpc import TrpcDialect
from ci_eval.errors import InputError
from ci_eval.jsonpos import JsonDocument, read_json_file
from ci_eval.model import (
    Content,
    EvalCase,
    IntermediateData,
    Invocation,
    InvocationEvents,
)

Recording = list[Invocation]


def invocation_to_turn(inv: Invocation) -> ActualTurn:
    turn = ActualTurn(
        final_response=inv.final_response,
        tool_uses=inv.tool_calls(),
        recorded_duration_s=inv.duration,  # reports keep the recorded time, not ~0 s
    )
    data = inv.intermediate_data
    if isinstance(data, IntermediateData):
        turn.tool_responses = list(data.tool_responses)
        turn.intermediate_responses = list(data.intermediate_responses)
    elif isinstance(data, InvocationEvents):
        for event in data.invocation_events:
            parts = (event.content.parts if event.content else None) or []
            turn.tool_responses += [p.function_response for p in parts if p.function_response]
            texts = [p for p in parts if p.text]
            if texts:
                turn.intermediate_responses.append((event.author, texts))
    return turn


def _unwrap(doc: JsonDocument) -> Any:
    data = doc.data
    if isinstance(data, str):  # ADK 1.x / trpc gen 1 wrote json.dumps(json_string)
        try:
            return json.loads(data)
        except json.JSONDecodeError:
            raise InputError("a JSON string that is not a result file", path=doc.path) from None
    return data


def _adk_runs(data: dict[str, Any], path: str) -> dict[tuple[str, str], list[Recording]]:
    runs: dict[tuple[str, str], list[Recording]] = {}
    for result in data.get("eval_case_results") or []:
        key = (result.get("eval_set_id") or data.get("eval_set_id") or "", result["eval_id"])
        try:
            invocations = [
                Invocation.model_validate(p["actual_invocation"])
                for p in result.get("eval_metric_result_per_invocation") or []
            ]
        except (ValidationError, KeyError, TypeError) as exc:
            raise InputError(
                f"case {key[1]!r}: unreadable actual invocation ({exc})", path=path
            ) from None
        runs.setdefault(key, []).append(invocations)
    return runs


def _trpc_runs(data: dict[str, Any], doc: JsonDocument) -> dict[tuple[str, str], list[Recording]]:
    runs: dict[tuple[str, str], list[Recording]] = {}
    dialect = TrpcDialect()
    for i, result in enumerate(data.get("evalCaseResults") or []):
        key = (result.get("evalSetId") or data.get("evalSetId") or "", result["evalId"])
        per = result.get("evalMetricResultPerInvocation") or []
        invocations = [
            dialect._invocation(
                doc,
                p["actualInvocation"],
                ["evalCaseResults", i, "evalMetricResultPerInvocation", n, "actualInvocation"],
            )
            for n, p in enumerate(per)
            if p.get("actualInvocation")
        ]
        runs.setdefault(key, []).append(invocations)
    return runs


def _ci_eval_runs(data: dict[str, Any], path: str) -> dict[tuple[str, str], list[Recording]]:
    runs: dict[tuple[str, str], list[Recording]] = {}
    for eval_set in data.get("sets") or []:
        for case in eval_set.get("cases") or []:
            key = (eval_set["eval_set_id"], case["eval_id"])
            for run in case.get("runs") or []:
                if run.get("error"):
                    continue
                try:
                    runs.setdefault(key, []).append(
                        [
                            Invocation.model_validate(inv["actual"])
                            for inv in run.get("invocations") or []
                            if inv.get("actual")
                        ]
                    )
                except ValidationError as exc:
                    raise InputError(
                        f"case {key[1]!r}: unreadable actual invocation ({exc})", path=path
                    ) from None
    return runs


def load_recordings(paths: list[Path]) -> dict[tuple[str, str], list[Recording]]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.json"))
        elif path.is_file():
            files.append(path)
        else:
            raise InputError("no such replay file or directory", path=str(path))
    recordings: dict[tuple[str, str], list[Recording]] = {}
    for file in files:
        doc = read_json_file(file, str(file))
        data = _unwrap(doc)
        if not isinstance(data, dict):
            raise InputError("not a result file (expected an object)", path=doc.path)
        try:
            if "eval_case_results" in data:
                found = _adk_runs(data, doc.path)
            elif "evalCaseResults" in data:
                doc = JsonDocument(data=data, text=doc.text, path=doc.path)
                found = _trpc_runs(data, doc)
            elif "schema_version" in data and "sets" in data:
                found = _ci_eval_runs(data, doc.path)
            else:
                raise InputError(
                    "not a result file ADK, trpc-agent-go or ci-eval wrote", path=doc.path
                )
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"unreadable result file (missing {exc})", path=doc.path) from None
        for key, runs in found.items():
            recordings.setdefault(key, []).extend(runs)
    return recordings


@dataclass
class ReplayConnector:
    paths: list[Path]
    kind: str = "replay"
    recordings: dict[tuple[str, str], list[Recording]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.recordings = load_recordings(self.paths)

    def describe(self) -> str:
        return "replay of " + ", ".join(str(p) for p in self.paths)

    def open(self, eval_set_id: str, case: EvalCase, run: int) -> _ReplaySession:
        runs = self.recordings.get((eval_set_id, case.eval_id))
        if not runs:
            raise AgentError(f"no recorded result for {eval_set_id}:{case.eval_id}")
        return _ReplaySession(list(runs[min(run, len(runs)) - 1]))

    def close(self) -> None:
        return None


@dataclass
class _ReplaySession:
    invocations: list[Invocation]

    def send(self, user_content: Content) -> ActualTurn:
        if not self.invocations:
            raise AgentError("the recording has fewer turns than the eval case")
        return invocation_to_turn(self.invocations.pop(0))

    def close(self) -> None:
        return None
