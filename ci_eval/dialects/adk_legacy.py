"""Google ADK's two legacy list formats, as ADK 2.13 converts them (``agent_evaluator`` and
``local_eval_sets_manager``): a ``.test.json`` list of turns, and a list of named cases. ADK
draws a random uuid for the eval-set id of a legacy ``.test.json`` and random invocation ids; a
baseline needs stable keys, so ids here derive from the file's path."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ci_eval.dialects.base import LoadContext, check_unique_ids
from ci_eval.io.jsonpos import JsonDocument
from ci_eval.io.validation import validate
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
)


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
    tool = "ADK"

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
    tool = "ADK"

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
