"""Google ADK eval sets: the current EvalSet schema and the two legacy list formats.

ADK 2.13 reads ``*.evalset.json`` / ``*.test.json`` with ``EvalSet.model_validate_json`` and, when
that fails on a list, converts the legacy forms (``local_eval_sets_manager`` and
``agent_evaluator``). ADK draws a random uuid for the eval-set id of a legacy ``.test.json`` and
random invocation ids; a baseline needs stable keys, so ids here derive from the file's path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ci_eval.dialects._common import (
    LoadContext,
    attach_sources,
    check_unique_ids,
    validate,
)
from ci_eval.errors import InputError
from ci_eval.jsonpos import JsonDocument
from ci_eval.model import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    IntermediateData,
    Invocation,
    Part,
    SessionInput,
    SourceRef,
    dump_adk,
)


def _agentevals_hint(err: Any) -> str:
    field = str(err["loc"][-1]) if err["loc"] else ""
    if field in {"case_id", "agent_content"} or (field == "eval_id" and err["type"] == "missing"):
        return (
            "this looks like an agentevals example file (case_id/agent_content), which ADK "
            "itself rejects: rename case_id to eval_id and agent_content to final_response"
        )
    return ""


class AdkDialect:
    name = "adk"
    label = "Google ADK EvalSet"

    def sniff(self, data: Any) -> bool:
        return (
            isinstance(data, dict)
            and "eval_cases" in data
            and ("eval_set_id" in data or "id" not in data)
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        agentevals = '"case_id"' in doc.text or '"agent_content"' in doc.text
        eval_set = validate(
            EvalSet, doc.data, doc, snake=True, hint=_agentevals_hint if agentevals else None
        )
        raw_cases = doc.data["eval_cases"]
        attach_sources(eval_set, raw_cases, doc, ctx.rel_path)
        check_unique_ids(eval_set, doc, raw_cases, "eval_id", ["eval_cases"])
        return eval_set

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        lost = sorted(
            {key for case in eval_set.eval_cases for key in case.extensions}
            | {
                key
                for case in eval_set.eval_cases
                for inv in case.invocations()
                for key in inv.extensions
            }
        )
        warnings = [f"ADK has no field for {key!r}; it is not written" for key in lost]
        return dump_adk(eval_set), warnings


class _LegacyToolUse(BaseModel):
    model_config = ConfigDict(extra="ignore")
    tool_name: str
    tool_input: dict[str, Any] | None


class _LegacyIntermediate(BaseModel):
    model_config = ConfigDict(extra="ignore")
    author: str
    text: str | None


class _LegacyTurn(BaseModel):
    """One item of a legacy ``.test.json`` list, as ADK's converter reads it."""

    model_config = ConfigDict(extra="ignore")
    query: str
    expected_tool_use: list[_LegacyToolUse] = Field(default_factory=list)
    reference: str | None = ""
    expected_intermediate_agent_responses: list[_LegacyIntermediate] = Field(default_factory=list)


class _LegacyInitialSession(BaseModel):
    model_config = ConfigDict(extra="ignore")
    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = Field(default_factory=dict)


class _LegacyCase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    data: list[_LegacyTurn]
    initial_session: dict[str, Any] = Field(default_factory=dict)


def _invocation(turn: _LegacyTurn, number: int) -> Invocation:
    return Invocation(
        invocation_id=f"inv-{number}",
        user_content=Content(role="user", parts=[Part(text=turn.query)]),
        final_response=Content(role="model", parts=[Part(text=turn.reference)]),
        intermediate_data=IntermediateData(
            tool_uses=[
                FunctionCall(name=t.tool_name, args=t.tool_input) for t in turn.expected_tool_use
            ],
            intermediate_responses=[
                (r.author, [Part(text=r.text)]) for r in turn.expected_intermediate_agent_responses
            ],
        ),
    )


class AdkLegacyTestDialect:
    """``[{"query", "expected_tool_use", "reference"}, …]``: the whole file is one case."""

    name = "adk-legacy"
    label = "Google ADK legacy .test.json"

    def sniff(self, data: Any) -> bool:
        return (
            isinstance(data, list)
            and bool(data)
            and isinstance(data[0], dict)
            and "query" in data[0]
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        turns = [
            validate(_LegacyTurn, item, doc, base=item, base_loc=[i])
            if isinstance(item, dict)
            else _not_an_object(doc, i)
            for i, item in enumerate(doc.data)
        ]
        case = EvalCase(
            eval_id=ctx.rel_path, conversation=[_invocation(t, n) for n, t in enumerate(turns, 1)]
        )
        case._source = SourceRef(ctx.rel_path, doc.line_of(doc.data))
        return EvalSet(eval_set_id=ctx.rel_path, name=ctx.rel_path, eval_cases=[case])


class AdkLegacyEvalSetDialect:
    """``[{"name", "data": [turns], "initial_session"}, …]``: one case per element."""

    name = "adk-legacy-evalset"
    label = "Google ADK legacy eval-set list"

    def sniff(self, data: Any) -> bool:
        return (
            isinstance(data, list)
            and bool(data)
            and isinstance(data[0], dict)
            and "data" in data[0]
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        cases = []
        for i, item in enumerate(doc.data):
            if not isinstance(item, dict):
                _not_an_object(doc, i)
            legacy = validate(_LegacyCase, item, doc, base=item, base_loc=[i])
            if "initial_state" in item and "initial_session" not in item:
                ctx.warnings.append(
                    f"{ctx.rel_path}: case {legacy.name!r} has 'initial_state', which ADK ignores"
                    " (it reads 'initial_session': {state, app_name, user_id})"
                )
            session_input = None
            if legacy.initial_session:
                init = validate(
                    _LegacyInitialSession,
                    legacy.initial_session,
                    doc,
                    base=item["initial_session"],
                    base_loc=[i, "initial_session"],
                )
                session_input = SessionInput(
                    app_name=init.app_name, user_id=init.user_id, state=init.state
                )
            case = EvalCase(
                eval_id=legacy.name,
                session_input=session_input,
                conversation=[_invocation(t, n) for n, t in enumerate(legacy.data, 1)],
            )
            case._source = SourceRef(ctx.rel_path, doc.line_of(item))
            cases.append(case)
        eval_set = EvalSet(eval_set_id=ctx.rel_path, name=ctx.rel_path, eval_cases=cases)
        check_unique_ids(eval_set, doc, doc.data, "name", [])
        return eval_set


def _not_an_object(doc: JsonDocument, index: int) -> Any:
    raise doc.error("expected an object in the legacy eval list", [index])


def reject_empty_list(doc: JsonDocument) -> InputError:
    return doc.error("empty list: no eval cases (a legacy ADK .test.json lists turns)")
