"""The words ADK's user simulator uses: read from the installed google-adk when there is one
(its template functions and its conversation summary, called at run time, never copied), else
ci-eval's own templates in ``templates/simulator/``. (The simulator's quality judge,
``per_turn_user_simulator_quality_v1``, uses the copy of ADK's prompts ci-eval ships:
``ci_eval.metrics.adk_user_judge``.)

``source()`` says which is in use; each simulated run records it.
"""

from __future__ import annotations

import functools
import os
from typing import Any

ENV = "CI_EVAL_JUDGE_PROMPTS"  # "ci-eval": ci-eval's own simulator templates even with google-adk
STOP_SIGNAL = "</finished>"  # ADK's _STOP_SIGNAL; read from the package when installed
USER = "user"


def _adk() -> Any:
    """The installed ADK simulation modules, or None (also when ``CI_EVAL_JUDGE_PROMPTS`` is
    ``ci-eval``)."""
    if os.environ.get(ENV, "adk") == "ci-eval":
        return None
    return _import_adk()


@functools.cache
def _import_adk() -> Any:
    try:
        from google.adk.evaluation.simulation import (
            llm_backed_user_simulator,
            llm_backed_user_simulator_prompts,
        )
    except Exception:  # not installed, or an ADK too old/new to import: our own templates
        return None
    return llm_backed_user_simulator, llm_backed_user_simulator_prompts


def adk_version() -> str | None:
    """The google-adk whose prompts are used, or None. Importing google-adk is slow: when
    nothing has imported it yet, its presence is checked without importing it."""
    if os.environ.get(ENV, "adk") == "ci-eval":
        return None
    if _import_adk.cache_info().currsize:
        if _adk() is None:
            return None
    else:
        import importlib.util

        try:
            if importlib.util.find_spec("google.adk") is None:
                return None
        except (ImportError, ValueError):
            return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("google-adk")
    except PackageNotFoundError:
        return "unknown"


def source() -> str:
    version = adk_version()
    return f"google-adk {version}" if version else "ci-eval"


def stop_signal() -> str:
    modules = _adk()
    return modules[0]._STOP_SIGNAL if modules else STOP_SIGNAL


@functools.cache
def _env() -> Any:
    # jinja2 is imported when a prompt is rendered: every run asks source(), few render
    from ci_eval.text import templates

    return templates.environment(None)


def render(name: str, **values: Any) -> str:
    """One of ci-eval's own templates, rendered in the project's template sandbox."""
    from ci_eval.text import templates

    return templates.render(_env(), name, values)


def _render_string(template: str, **values: Any) -> str:
    return _env().from_string(template).render(**values)


def adk_persona(scenario: dict[str, Any]) -> Any:
    """The case's ``user_persona`` as ADK's UserPersona (a pre-built persona id resolved by
    ADK's registry), or None. Needs google-adk."""
    if scenario.get("user_persona") is None:
        return None
    from google.adk.evaluation.conversation_scenarios import ConversationScenario

    return ConversationScenario.model_validate(scenario).user_persona


def summarize(events: list[dict[str, Any]], include_function_calls: bool) -> str:
    """``LlmBackedUserSimulator._summarize_conversation``: ``author: text`` per non-thought text
    part (tool calls and results too when asked), blank-line separated."""
    modules = _adk()
    if modules:
        from google.adk.events.event import Event

        adk_events = [Event.model_validate(e) for e in events]
        return modules[0].LlmBackedUserSimulator._summarize_conversation(
            adk_events, include_function_calls
        )
    lines = []
    for event in events:
        content = event.get("content") or {}
        author = event.get("author")
        for part in content.get("parts") or []:
            call = part.get("function_call") or part.get("functionCall")
            result = part.get("function_response") or part.get("functionResponse")
            if part.get("text") and not part.get("thought"):
                lines.append(f"{author}: {part['text']}")
            elif include_function_calls and call:
                lines.append(
                    f"{author} called tool '{call.get('name')}' with args: {call.get('args')}"
                )
            elif include_function_calls and result:
                lines.append(f"Tool '{result.get('name')}' returned: {result.get('response')}")
    return "\n\n".join(lines)


def user_simulator_prompt(
    plan: str,
    history: str,
    custom_instructions: str | None,
    scenario: dict[str, Any],
) -> str:
    """What ADK's LlmBackedUserSimulator sends the LLM for every turn after the first."""
    modules = _adk()
    if modules:
        return modules[1].get_llm_backed_user_simulator_prompt(
            conversation_plan=plan,
            conversation_history=history,
            stop_signal=stop_signal(),
            custom_instructions=custom_instructions,
            user_persona=adk_persona(scenario),
        )
    values = {
        "conversation_plan": plan,
        "conversation_history": history,
        "stop_signal": STOP_SIGNAL,
    }
    if custom_instructions is not None:
        return _render_string(custom_instructions, **values)
    return render("simulator/adk_user.j2", **values)
