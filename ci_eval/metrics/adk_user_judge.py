"""What google-adk 2.13's ``per_turn_user_simulator_quality_v1`` asks its judge about one user
turn, byte for byte, without google-adk: ADK's two Jinja prompts (with and without a persona,
shipped in ``adk_judge_prompts/``), the conversation so far as ADK writes it, and ADK's
pre-built personas (``pre_built_personas.json``) for a scenario that names one.

Rendered as ADK renders it (simulation/per_turn_user_simulator_quality_prompts.py): a Jinja
sandbox whose ``render_string_filter`` renders a persona's texts as templates themselves, with
the prompt's values. Those texts come from the eval set, so the sandbox is ci-eval's (a time
limit, an output cap, no huge ``*``) with Jinja's lenient undefined values, as ADK's.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from ci_eval.metrics.adk_judge_render import content_text, template
from ci_eval.metrics.base import NotApplicable
from ci_eval.model import Invocation

STOP_SIGNAL = "</finished>"  # eval_metrics.LlmBackedUserSimulatorCriterion's default


@dataclass(frozen=True)
class Behavior:
    """simulation/user_simulator_personas.UserBehavior: what the templates read of it."""

    name: str
    description: str
    behavior_instructions: tuple[str, ...]
    violation_rubrics: tuple[str, ...]

    def get_violation_rubrics_str(self) -> str:
        return "\n".join(f"  * {v}" for v in self.violation_rubrics)

    def get_behavior_instructions_str(self) -> str:
        return "\n".join(f"  * {i}" for i in self.behavior_instructions)


@dataclass(frozen=True)
class Persona:
    """simulation/user_simulator_personas.UserPersona."""

    id: str
    description: str
    behaviors: tuple[Behavior, ...]


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise NotApplicable(f"user_persona: {where} is not a list of strings")
    return tuple(value)


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise NotApplicable(f"user_persona: {where}.{key} is missing or not a string")
    return value


def _persona(data: Any) -> Persona:
    if not isinstance(data, dict) or not isinstance(data.get("behaviors"), list):
        raise NotApplicable("user_persona: neither a persona id nor {id, description, behaviors}")
    behaviors = []
    for n, b in enumerate(data["behaviors"]):
        where = f"behaviors[{n}]"
        if not isinstance(b, dict):
            raise NotApplicable(f"user_persona: {where} is not an object")
        behaviors.append(
            Behavior(
                _text(b, "name", where),
                _text(b, "description", where),
                _strings(b.get("behavior_instructions"), f"{where}.behavior_instructions"),
                _strings(b.get("violation_rubrics"), f"{where}.violation_rubrics"),
            )
        )
    return Persona(
        _text(data, "id", "user_persona"),
        _text(data, "description", "user_persona"),
        tuple(behaviors),
    )


@functools.cache
def prebuilt() -> dict[str, Persona]:
    """simulation/pre_built_personas.get_default_persona_registry(), by id."""
    data = json.loads(template("pre_built_personas.json"))
    return {key: _persona(value) for key, value in data.items()}


def persona_of(scenario: dict[str, Any]) -> Persona | None:
    """The scenario's ``user_persona``: a pre-built persona's id, or a persona written out."""
    value = scenario.get("user_persona")
    if value is None:
        return None
    if isinstance(value, str):
        known = prebuilt()
        if value not in known:
            raise NotApplicable(
                f"user_persona {value!r} is no pre-built persona (known: {', '.join(known)})"
            )
        return known[value]
    return _persona(value)


def history(invocations: list[Invocation]) -> str:
    """per_turn_user_simulator_quality_v1.py, _format_conversation_history: ``user: text``
    and ``<role>: text`` of the agent's final response, blank-line separated."""
    lines = []
    for inv in invocations:
        if inv.user_content.parts:
            lines.append(f"user: {content_text(inv.user_content)}")
        if (final := inv.final_response) is not None:
            lines.append(f"{final.role}: {content_text(final)}")
    return "\n\n".join(lines)


def user_turn_prompt(
    plan: str, conversation: str, generated: str, stop_signal: str, persona: Persona | None
) -> str:
    """per_turn_user_simulator_quality_prompts.get_per_turn_user_simulator_quality_prompt."""
    from jinja2 import DictLoader, Undefined, pass_context

    from ci_eval.text import templates

    name = "per_turn_user_simulator_quality_v1" + ("" if persona is None else "_persona")
    env = templates.environment(None, undefined=Undefined)
    env.loader = DictLoader({"verifier_instructions": template(f"{name}.jinja")})

    @pass_context
    def render_string_filter(context: Any, text: str) -> str:
        return env.from_string(text).render(context.get_all()) if text else ""

    env.filters["render_string_filter"] = render_string_filter
    values: dict[str, Any] = {
        "conversation_plan": plan,
        "conversation_history": conversation,
        "generated_user_response": generated,
        "stop_signal": stop_signal,
    }
    if persona is not None:
        values["persona"] = persona
    try:
        return templates.render(env, "verifier_instructions", values)
    except templates.TemplateProblem as exc:  # a persona's text that is a broken template
        raise NotApplicable(f"user_persona: {exc.message}") from None
