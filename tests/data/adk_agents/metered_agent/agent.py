"""An LLM-free ADK agent whose events carry usage metadata and a model version, as an
``LlmAgent``'s do: what the usage tests capture through ``adk api_server``, the in-process
runner and ``adk eval``. The counts depend on the message, so that turns differ.

- ``ping``: answered without a model (no usage, no model version);
- ``quiet``: one model call that reported no tokens (a model version, no usage metadata);
- anything else: a model call that asks for a tool (with an empty-text event beside it, which
  ADK does not count), the tool's result, and a second model call that answers.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types

MODEL = "fake-model-001"


def _usage(**counts: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(**counts)


class MeteredAgent(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        parts = ctx.user_content.parts if ctx.user_content and ctx.user_content.parts else []
        text = " ".join(p.text for p in parts if p.text)

        def event(role: str, part: types.Part, **more: object) -> Event:
            return Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(role=role, parts=[part]),
                **more,  # type: ignore[arg-type]
            )

        if text == "ping":
            yield event("model", types.Part(text="pong"))
            return
        if text == "quiet":
            yield event("model", types.Part(text="..."), model_version=MODEL)
            return
        words = len(text.split())
        yield event(
            "model",
            types.Part(text=""),
            usage_metadata=_usage(prompt_token_count=999, candidates_token_count=999),
        )
        call = types.FunctionCall(id="call-1", name="lookup", args={"words": words})
        yield event(
            "model",
            types.Part(function_call=call),
            model_version=MODEL,
            usage_metadata=_usage(
                prompt_token_count=100 + words,
                candidates_token_count=12,
                thoughts_token_count=5,
                cached_content_token_count=64,
                total_token_count=117 + words,
            ),
        )
        result = types.FunctionResponse(id="call-1", name="lookup", response={"words": words})
        yield event("user", types.Part(function_response=result))
        yield event(
            "model",
            types.Part(text=f"{words} words"),
            model_version=MODEL,
            usage_metadata=_usage(
                prompt_token_count=150 + words,
                tool_use_prompt_token_count=7,
                candidates_token_count=3 * words,
            ),
        )


root_agent = MeteredAgent(name="metered_agent")
