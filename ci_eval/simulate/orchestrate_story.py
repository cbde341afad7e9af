"""IBM watsonx Orchestrate's simulated user (``agentops`` ``LLMUser`` v1 and the
``EvaluationController`` loop of ibm-watsonx-orchestrate-evaluation-framework 1.6.9).

* Turn 1 is ``starting_sentence`` verbatim when the dataset has one (no LLM call); otherwise,
  and for every later turn, the LLM gets a system message playing the ``story`` followed by the
  conversation so far as chat messages (user and assistant text, the assistant's tool calls as
  JSON; tool results left out, as IBM leaves them out).
* The user is done when its message contains ``END`` (IBM's test, case-sensitive); that message
  is not sent. At most ``max_user_turns`` turns (the dataset's, else ``[simulator] max_turns``,
  else IBM's default 25).
* The instructions are IBM's own ``gpt_user_template_v1.jinja2`` when the framework is installed
  (read from its package at run time), else ci-eval's ``templates/simulator/orchestrate_user.j2``.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from ci_eval.model import EvalCase
from ci_eval.net.llm import ChatClient, LlmError
from ci_eval.simulate.adk_prompts import render
from ci_eval.simulate.base import Event, NextTurn, SimulatorError, Status, turn_limit

END = "END"
DEFAULT_MAX_USER_TURNS = 25  # agentops.arg_configs.DEFAULT_MAX_USER_TURNS
_TAG = re.compile(
    r"<\s*(?P<tag>system|user|assistant)\s*>\s*(?P<content>.*?)\s*<\s*/\s*(?P=tag)\s*>",
    re.DOTALL | re.IGNORECASE,
)


def ibm_template() -> Path | None:
    """IBM's user prompt file inside an installed framework (not imported: its package pulls in
    LLM clients at import time)."""
    try:
        spec = importlib.util.find_spec("agentops")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "prompt/gpt/gpt_user_template_v1.jinja2"
    )
    return path if path.is_file() else None


def _messages(events: list[Event]) -> list[dict[str, str]]:
    """The conversation as IBM's user sees it: text turns and tool calls, no tool results."""
    out = []
    for event in events:
        role = "user" if event.get("author") == "user" else "assistant"
        for part in (event.get("content") or {}).get("parts") or []:
            call = part.get("function_call") or part.get("functionCall")
            if part.get("text") and not part.get("thought"):
                out.append({"role": role, "content": part["text"]})
            elif call:
                out.append(
                    {
                        "role": "assistant",
                        "content": json.dumps({"name": call.get("name"), "args": call.get("args")}),
                    }
                )
    return out


class StoryUser:
    def __init__(self, case: EvalCase, client: ChatClient, default_max: int | None) -> None:
        data = case.extensions.get("watsonx") or {}
        self.story = str(data.get("story") or "")
        self.starting = data.get("starting_sentence")
        limit = data.get("max_user_turns")
        self.max_turns = int(
            limit if limit is not None else (default_max or DEFAULT_MAX_USER_TURNS)
        )
        self.client = client
        self.turns = 0
        self.llm_calls = 0
        self.template = ibm_template()

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "watsonx Orchestrate user agent",
            "instructions": (
                "ibm-watsonx-orchestrate-evaluation-framework gpt_user_template_v1"
                if self.template
                else "ci-eval"
            ),
            "model": self.client.model,
            "max_user_turns": self.max_turns,
            "stop_signal": END,
        }

    def prompt(self, events: list[Event]) -> list[dict[str, str]]:
        history = _messages(events)
        if self.template is not None:
            env = SandboxedEnvironment(undefined=StrictUndefined)
            rendered = env.from_string(self.template.read_text("utf-8")).render(
                user_story=self.story,
                user_response_style=[],
                conversation_history=history,
                attack_instructions=None,
                sub_goals=None,
            )
            messages = [
                {"role": m.group("tag").lower(), "content": m.group("content").strip()}
                for m in _TAG.finditer(rendered)
                if m.group("content").strip()
            ]
            return messages or [{"role": "user", "content": rendered.strip()}]
        system = render("simulator/orchestrate_user.j2", story=self.story, stop_word=END)
        return [{"role": "system", "content": system}, *history]

    def next_turn(self, events: list[Event]) -> NextTurn:
        if self.turns >= turn_limit(self.max_turns):
            return NextTurn(Status.TURN_LIMIT_REACHED)
        if self.turns == 0 and self.starting is not None:
            text = str(self.starting)
        else:
            try:
                text = self.client.complete(self.prompt(events)).strip()
            except LlmError as exc:
                raise SimulatorError(f"user agent: {exc}") from None
            self.llm_calls += 1
        self.turns += 1
        if END in text.strip():
            return NextTurn(Status.STOP_SIGNAL_DETECTED, said=text)
        if not text:
            raise SimulatorError("user agent: the LLM returned an empty message")
        return NextTurn(Status.SUCCESS, text)
