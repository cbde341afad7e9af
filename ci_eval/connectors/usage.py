"""What an agent says its own model calls spent in a turn, read where it says it: the contract
reply's ``usage`` object, and the ``usageMetadata`` / ``modelVersion`` of ADK events (from
``adk api_server``, the in-process runner, a contract ``events`` reply, or a recording of
``adk eval``). Every count is an agent's claim: checked (non-negative integers) and bounded
here, and a malformed one is the turn's error naming the field, as any malformed reply is.

Which events count, and how, is google-adk 2.13's rule, so that ``token_usage_v1`` and
``inference_call_count_v1`` give ADK's numbers: ``EvaluationGenerator.
convert_events_to_eval_invocations`` keeps a turn's non-user events that carry a function call
or response, non-empty text, inline data or grounding metadata; of those, an event with usage
metadata or a model version is one model call (``_InferenceCallCountV1Evaluator``), and each
call's usage metadata is read as ``telemetry._token_usage.TokenUsage`` reads it (input = prompt
+ tool-use prompt tokens, output = candidates + thoughts, cached = cached content), summed with
"not reported" kept apart from zero (``_TokenUsageV1Evaluator``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError
from pydantic.alias_generators import to_camel

from ci_eval.io.validation import first_error
from ci_eval.model import InvocationEvent
from ci_eval.model.usage import Usage

# no turn spends more of one kind of token, or calls a model more often, than this: a larger
# claim is not a measurement, and no report should have to print it
MAX_TOKENS = 10**12
MAX_MODEL_CALLS = 10**5

Tokens = Annotated[int, Strict(), Field(ge=0, le=MAX_TOKENS)]


class MalformedUsage(ValueError):
    """A usage claim that is not one: the message names the field."""


class UsageReply(BaseModel):
    """The contract reply's ``usage`` object (see ``contract``). Unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    cached_tokens: Tokens | None = None
    model_calls: Annotated[int, Strict(), Field(ge=0, le=MAX_MODEL_CALLS)] | None = None

    def to_usage(self) -> Usage | None:
        usage = Usage(self.input_tokens, self.output_tokens, self.cached_tokens, self.model_calls)
        return usage if usage.known() else None


class _UsageMetadata(BaseModel):
    """genai's ``GenerateContentResponseUsageMetadata``, the counts ADK reads of it: camelCase
    (as api_server writes it) or snake_case (as ``adk eval`` records it)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    prompt_token_count: Tokens | None = None
    tool_use_prompt_token_count: Tokens | None = None
    candidates_token_count: Tokens | None = None
    thoughts_token_count: Tokens | None = None
    cached_content_token_count: Tokens | None = None


def _plus(total: int | None, count: int | None) -> int | None:
    """ADK's ``_add``: a count not reported leaves the total as it is (None until one is)."""
    return total if count is None else (total or 0) + count


def _either(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


class _Tally:
    """One turn's usage, call by call."""

    def __init__(self) -> None:
        self.input: int | None = None
        self.output: int | None = None
        self.cached: int | None = None
        self.calls = 0

    def add(self, metadata: Any, model_version: Any) -> None:
        if metadata is None and model_version is None:
            return
        self.calls += 1
        if metadata is None:
            return
        if not isinstance(metadata, Mapping):
            raise MalformedUsage("usageMetadata: expected an object")
        try:
            m = _UsageMetadata.model_validate(metadata)
        except ValidationError as exc:
            raise MalformedUsage(f"usageMetadata.{first_error(exc)}") from None
        self.input = _plus(self.input, _either(m.prompt_token_count, m.tool_use_prompt_token_count))
        self.output = _plus(self.output, _either(m.candidates_token_count, m.thoughts_token_count))
        self.cached = _plus(self.cached, m.cached_content_token_count)

    def usage(self) -> Usage:
        if any(n is not None and n > MAX_TOKENS for n in (self.input, self.output, self.cached)):
            raise MalformedUsage(f"the turn's usage passes {MAX_TOKENS:,} tokens of one kind")
        if self.calls > MAX_MODEL_CALLS:
            raise MalformedUsage(f"the turn's events pass {MAX_MODEL_CALLS:,} model calls")
        return Usage(self.input, self.output, self.cached, self.calls)


def _get(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = data.get(camel)
    return data.get(snake) if value is None else value


def _substantive(part: Any) -> bool:
    if not isinstance(part, Mapping):
        return False
    return (
        _get(part, "functionCall", "function_call") is not None
        or _get(part, "functionResponse", "function_response") is not None
        or bool(part.get("text"))
        or _get(part, "inlineData", "inline_data") is not None
    )


def _kept(event: Mapping[str, Any], user_author: str) -> bool:
    """Whether ADK keeps the event among the invocation's events (see the module)."""
    if str(event.get("author") or "agent").lower() == user_author:
        return False
    grounded = _get(event, "groundingMetadata", "grounding_metadata") is not None
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if isinstance(parts, list) and parts:
        return grounded or any(_substantive(p) for p in parts)
    return grounded


def from_events(events: Iterable[Any], user_author: str = "user") -> Usage:
    """One turn's usage from its ADK events (JSON objects, camelCase or snake_case). Always a
    number of model calls, possibly 0: the events were seen; token counts only as reported."""
    tally = _Tally()
    for event in events:
        if isinstance(event, Mapping) and _kept(event, user_author):
            tally.add(
                _get(event, "usageMetadata", "usage_metadata"),
                _get(event, "modelVersion", "model_version"),
            )
    return tally.usage()


def from_invocation_events(events: list[InvocationEvent]) -> Usage:
    """One recorded invocation's usage (``adk eval``'s ``invocation_events``, already the
    events ADK kept), as ADK's evaluators read it from the recording."""
    tally = _Tally()
    for event in events:
        tally.add(event.usage_metadata, event.model_version)
    return tally.usage()
