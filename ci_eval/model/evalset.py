"""The canonical eval-set model: Google ADK's EvalSet schema, field for field.

Every dialect loads into these classes and the ADK writer dumps them, so that google-adk's own
``EvalSet.model_validate`` accepts our output. Reading follows ADK's rules: the top level is a plain
snake_case model (extra keys ignored); nested models accept snake_case or camelCase and reject
unknown keys, except where ADK allows them (EvalCase, SessionInput). genai's ``Part`` and friends
are more permissive here than in genai itself: serialised genai objects carry many null fields
(``"video_metadata": null``) whose set changes between genai releases, so unknown Part fields are
kept as they are rather than rejected.
"""

from __future__ import annotations

import marshal
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel


class _Nested(BaseModel):
    """ADK's ``EvalBaseModel``: camelCase or snake_case in, unknown keys rejected."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class _GenAI(BaseModel):
    """google.genai types as eval sets serialise them: camel or snake, extra fields kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class FunctionCall(_GenAI):
    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(_GenAI):
    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class Part(_GenAI):
    text: str | None = None
    thought: bool | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None


class Content(_GenAI):
    role: str | None = None
    parts: list[Part] | None = None

    @classmethod
    def from_text(cls, text: str | None, role: str) -> Content:
        return cls(role=role, parts=[Part(text=text)])

    def text(self) -> str:
        """The text that ADK scores: text parts joined by newlines."""
        return "\n".join(p.text for p in self.parts or [] if p.text)


class IntermediateData(_Nested):
    tool_uses: list[FunctionCall] = Field(default_factory=list)
    tool_responses: list[FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = Field(default_factory=list)


class InvocationEvent(_Nested):
    model_config = ConfigDict(extra="ignore")

    author: str
    content: Content | None = None
    grounding_metadata: dict[str, Any] | None = None
    usage_metadata: dict[str, Any] | None = None
    model_version: str | None = None


class InvocationEvents(_Nested):
    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class RubricContent(_Nested):
    text_property: str | None = None


class Rubric(_Nested):
    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class PlainInvocation(_Nested):
    """An invocation's fields alone: validates exactly as :class:`Invocation` does, without the
    Python-level hook pydantic runs for every model with private attributes (for JSON that is
    only checked, such as a recording kept as its text until it is replayed)."""

    invocation_id: str = ""
    user_content: Content
    final_response: Content | None = None
    intermediate_data: IntermediateData | InvocationEvents | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[Rubric] | None = None
    app_details: dict[str, Any] | None = None


class Invocation(PlainInvocation):
    # Dialect data the ADK schema has no field for (trpc ``toolMock``, …); never written to ADK.
    _extensions: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def extensions(self) -> dict[str, Any]:
        return self.__pydantic_private__["_extensions"]  # see EvalCase.source

    def tool_calls(self) -> list[FunctionCall]:
        """Tool calls as ADK reads them from either shape of intermediate data."""
        data = self.intermediate_data
        if data is None:
            return []
        if isinstance(data, IntermediateData):
            return list(data.tool_uses)
        return [
            part.function_call
            for event in data.invocation_events
            if event.content and event.content.parts
            for part in event.content.parts
            if part.function_call
        ]


class SessionInput(_Nested):
    model_config = ConfigDict(extra="allow")

    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)


class ConversationScenario(_Nested):
    starting_prompt: str
    conversation_plan: str
    user_persona: Any = None


@dataclass(frozen=True)
class SourceRef:
    """Where a case came from: repo-relative file and the 1-based line where it starts."""

    file: str
    line: int | None = None


class EvalCase(_Nested):
    model_config = ConfigDict(extra="allow")

    eval_id: str
    conversation: list[Invocation] | None = None
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = None
    final_session_state: dict[str, Any] | None = Field(default_factory=dict)

    _source: SourceRef | None = PrivateAttr(default=None)
    _extensions: dict[str, Any] = PrivateAttr(default_factory=dict)
    # trace mode (trpc-agent-go ``evalMode``, trpc-agent-python ``eval_mode``): the recorded
    # conversation that is scored as the actual; the agent is not called
    _trace: list[Invocation] | None = PrivateAttr(default=None)
    # while the conversation is packed (see pack()): its JSON values, marshalled
    _packed: bytes | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _conversation_xor_scenario(self) -> EvalCase:
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                "Exactly one of conversation and conversation_scenario must be provided in an "
                "EvalCase."
            )
        return self

    # the private attributes read from their dict: pydantic's __getattr__ for them costs far
    # more, and a run reads them for every case
    @property
    def source(self) -> SourceRef | None:
        return self.__pydantic_private__["_source"]

    @property
    def extensions(self) -> dict[str, Any]:
        """Dialect data with no ADK field (watsonx goals, trpc context messages, …)."""
        return self.__pydantic_private__["_extensions"]

    @property
    def trace_actuals(self) -> list[Invocation] | None:
        """The recorded actual invocations of a trace-mode case, else None."""
        return self.__pydantic_private__["_trace"]

    def set_trace_actuals(self, invocations: list[Invocation]) -> None:
        self._trace = invocations

    def invocations(self) -> list[Invocation]:
        return self.conversation or []

    def pack(self, raw_conversation: Any) -> None:
        """Hold the conversation as the JSON values it was validated from
        (``raw_conversation``), marshalled, until it is first read, when it is validated from
        them again: a fraction of the memory of the models, for the cases of a large set that
        wait their turn. Reading, assigning, comparing, copying or dumping the case sees the
        conversation as before."""
        self._packed = marshal.dumps(raw_conversation)
        del self.__dict__["conversation"]

    def _unpack(self) -> None:
        if "conversation" in self.__dict__:
            return
        with _UNPACKING:  # cases are read from the runner's threads
            if "conversation" in self.__dict__:
                return
            packed = self._packed
            assert packed is not None, "a packed case keeps its conversation's JSON"
            fields = dict(self.__dict__)
            conversation = _CONVERSATION.validate_python(marshal.loads(packed))
            # a new __dict__ in the fields' order (dumps follow it), in place at once
            unpacked = {
                name: conversation if name == "conversation" else fields.pop(name)
                for name in type(self).model_fields
                if name == "conversation" or name in fields
            }
            object.__setattr__(self, "__dict__", {**unpacked, **fields})
            self._packed = None

    if not TYPE_CHECKING:  # pydantic's own __getattr__ is hidden from type checkers too

        def __getattr__(self, item: str) -> Any:
            if item == "conversation":  # packed: not in the instance's __dict__
                self._unpack()
                return self.__dict__["conversation"]
            return super().__getattr__(item)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        self._unpack()
        return handler(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EvalCase):
            self._unpack()
            other._unpack()
        return super().__eq__(other)

    def __repr_args__(self) -> Any:
        self._unpack()
        return super().__repr_args__()


_CONVERSATION: TypeAdapter[list[Invocation] | None] = TypeAdapter(list[Invocation] | None)
_UNPACKING = threading.Lock()


class EvalSet(BaseModel):
    """ADK's top level is a plain model: snake_case only, unknown keys ignored."""

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0

    def invocation_count(self) -> int:
        return sum(len(case.invocations()) for case in self.eval_cases)


def dump_adk(eval_set: EvalSet) -> dict[str, Any]:
    """ADK's snake_case JSON form (what ``adk`` itself writes, minus the nulls)."""
    return eval_set.model_dump(mode="json", exclude_none=True)


def canonical_form(eval_set: EvalSet) -> dict[str, Any]:
    """Everything the canonical model holds, extensions included: for equality checks."""
    data = dump_adk(eval_set)
    for case, case_data in zip(eval_set.eval_cases, data["eval_cases"], strict=True):
        if case.extensions:
            case_data["__extensions__"] = case.extensions
        for inv, inv_data in zip(
            case.invocations(), case_data.get("conversation", []), strict=True
        ):
            if inv.extensions:
                inv_data["__extensions__"] = inv.extensions
    return data
