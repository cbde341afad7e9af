"""adk-rs (skundu42/adk-rs): ADK's snake_case shape with ``id`` for set and case ids.

Read with serde's rules: snake_case only, unknown keys ignored; ``session_input`` is free-form
JSON that the adk-rs runner ignores (kept as an extension when it is not ADK-shaped).

Both generations of adk-rs's model are read: ``adk-rs-eval/src/set.rs`` (433b5668: every
invocation has ``final_response``, ``intermediate_responses`` are whole Contents) and the
current ``src/eval/set.rs`` (``final_response`` optional, ``intermediate_responses`` as
ADK's ``(author, parts)`` pairs, ``eval_id`` beside the legacy ``id``). A file with
``eval_set_id`` on top is read by the ADK dialect, as ADK reads it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field

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


class _Serde(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _content_as_pair(value: Any) -> Any:
    """An older adk-rs Content ``{role, parts}`` as ADK's ``[author, parts]`` pair (its role as
    the author); a pair as it is. One shape to validate, so bad input is one message."""
    if isinstance(value, dict):
        return [value.get("role") or "", value.get("parts") or []]
    return value


# an [author, parts] pair (adk-rs now, and ADK) or a Content (adk-rs before)
_Pair = Annotated[tuple[str, list[Part]], BeforeValidator(_content_as_pair)]


class _ToolUse(_Serde):
    name: str
    args: dict[str, Any] | None = None


class _Intermediate(_Serde):
    tool_uses: list[_ToolUse] = Field(default_factory=list)
    intermediate_responses: list[_Pair] = Field(default_factory=list)


class _Invocation(_Serde):
    invocation_id: str = ""
    user_content: Content
    final_response: Content | None = None
    intermediate_data: _Intermediate | None = None


class _Case(_Serde):
    id: str = Field(validation_alias=AliasChoices("id", "eval_id"))
    name: str | None = None
    conversation: list[_Invocation]
    session_input: Any = None


class _Set(_Serde):
    id: str
    name: str = ""
    eval_cases: list[_Case]
    creation_timestamp: float = 0.0


class AdkRsDialect:
    name = "adk-rs"
    tool = "adk-rs"

    def sniff(self, data: Any) -> bool:
        return (
            isinstance(data, dict)
            and "eval_cases" in data
            and "id" in data
            and ("eval_set_id" not in data)
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        raw = validate(_Set, doc.data, doc)
        cases = []
        for raw_case, item in zip(raw.eval_cases, doc.data["eval_cases"], strict=True):
            session_input, extensions = None, {}
            if isinstance(raw_case.session_input, dict):
                try:
                    session_input = SessionInput.model_validate(raw_case.session_input)
                except ValueError:
                    extensions["session_input"] = raw_case.session_input
            if raw_case.name is not None:
                extensions["name"] = raw_case.name
            case = EvalCase(
                eval_id=raw_case.id,
                session_input=session_input,
                conversation=[_invocation(inv) for inv in raw_case.conversation],
            )
            case._source = SourceRef(ctx.rel_path, doc.line_of(item))
            if extensions:
                case.extensions["adk-rs"] = extensions
            cases.append(case)
        eval_set = EvalSet(
            eval_set_id=raw.id,
            name=raw.name or None,
            eval_cases=cases,
            creation_timestamp=raw.creation_timestamp,
        )
        raw_cases = doc.data["eval_cases"]
        # name the key the file uses (adk-rs writes eval_id now and reads the older id)
        key = "id" if any("id" in c for c in raw_cases if isinstance(c, dict)) else "eval_id"
        check_unique_ids(eval_set, doc, raw_cases, key, ["eval_cases"])
        return eval_set


def _invocation(inv: _Invocation) -> Invocation:
    data = inv.intermediate_data or _Intermediate()
    return Invocation(
        invocation_id=inv.invocation_id,
        user_content=inv.user_content,
        final_response=inv.final_response,
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=t.name, args=t.args) for t in data.tool_uses],
            intermediate_responses=list(data.intermediate_responses),
        ),
    )
