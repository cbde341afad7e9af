"""The sample agent as a Google ADK agent: ``adk api_server samples/agents`` serves it as
``weather_agent``, and ``adk eval samples/agents/weather_agent …`` evaluates it. No LLM."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types

from . import logic


class WeatherAgent(BaseAgent):
    """Yields a function call and its response per tool use, then the answer."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        parts = ctx.user_content.parts if ctx.user_content and ctx.user_content.parts else []
        previous = next(
            (
                "".join(p.text or "" for p in e.content.parts)
                for e in reversed(ctx.session.events)
                if e.author == self.name
                and e.content
                and e.content.parts
                and e.content.parts[0].text
            ),
            None,
        )
        reply = logic.respond(" ".join(p.text for p in parts if p.text), previous)
        for n, call in enumerate(reply.calls, 1):
            call_id = f"call_{ctx.invocation_id[-6:]}_{n}"
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(
                    role="model",
                    parts=[
                        types.Part(
                            function_call=types.FunctionCall(
                                id=call_id, name=call.name, args=call.args
                            )
                        )
                    ],
                ),
            )
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=call_id, name=call.name, response=call.result
                            )
                        )
                    ],
                ),
            )
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=reply.text)]),
        )


root_agent = WeatherAgent(name="weather_agent")
