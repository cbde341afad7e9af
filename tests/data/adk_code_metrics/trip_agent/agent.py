"""The trip agent as a Google ADK agent (``adk eval trip_agent …``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types

from .answers import answer


class TripAgent(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        parts = ctx.user_content.parts if ctx.user_content and ctx.user_content.parts else []
        text, calls = answer(" ".join(p.text for p in parts if p.text))
        for n, (name, args) in enumerate(calls, 1):
            call = types.FunctionCall(id=f"call_{n}", name=name, args=args)
            result = types.FunctionResponse(id=f"call_{n}", name=name, response={"ok": True})
            for role, part in (
                ("model", types.Part(function_call=call)),
                ("user", types.Part(function_response=result)),
            ):
                yield Event(
                    author=self.name,
                    invocation_id=ctx.invocation_id,
                    content=types.Content(role=role, parts=[part]),
                )
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
        )


root_agent = TripAgent(name="trip_agent")
