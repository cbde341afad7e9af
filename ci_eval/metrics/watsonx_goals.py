"""watsonx Orchestrate's goals other than tool calls, decided as ibm-watsonx-orchestrate-
evaluation-framework 1.6.9 (``agentops``) decides them: text goals, interaction goals and
``assert_llm`` assertions. The journey metrics (``metrics/watsonx.py``) put them together.

* **text** goals (``type: text``, the ``summarize`` goal among them): every assistant text of the
  conversation is a candidate (``AgentResponseExtractor``); a goal is matched when one candidate
  passes both IBM LLM checks, keywords then meaning (``TextMatchMetric``), against the goal's
  ``response`` (else ``summary``), with the conversation's first message as context
  (``SemanticMatchMetric``). ci-eval's judge asks them with ci-eval's two prompts.
* **interaction** goals (``type: interaction``, ``identifier: {key, value}``): matched against
  the interactions (widgets) the agent asked the user to fill, each claimed at most once, goals
  in the order given, when ``str(payload[key]) == str(value)``
  (``ExpectedInteractionExtractor``). A turn's interaction is the ``"watsonx_interaction"``
  extension of its invocation (IBM's ``Interaction``: ``type``, ``prompt``, ``input_schema``,
  ``payload``; ``None``: the turn asked none). ci-eval's agent contract has no field for them,
  so a conversation none of whose turns has that key cannot decide interaction goals: the
  journey metrics are NOT_EVALUATED rather than failed for a widget nobody could see.
* **assert_llm** entries (no name; ``kind`` observed | policy, ``check``, ``scope`` response |
  conversation): each is one question to the judge with IBM's own prompt
  (``agentops/prompt/gpt/assert_llm_prompt.jinja2``), over the last assistant message or the
  whole conversation as ``role: content`` lines; the answer must be JSON with a ``verdict``,
  asked up to three times, then failed (``AssertLLMMetric``).

No judge and a goal that needs one: NOT_EVALUATED, saying so.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ci_eval.metrics.base import NotApplicable
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.watsonx_messages import INTERACTION
from ci_eval.model import Invocation

SET_JUDGE = "set [judge] base_url and model in ci-eval.toml (or --judge-url / --judge-model)"
ASSERT_ATTEMPTS = 3  # AssertLLMMetric: the first call and _MAX_JUDGE_RETRIES (2) more

# agentops/prompt/gpt/assert_llm_prompt.jinja2 (1.6.9), rendered by hand: its only logic is the
# kind's paragraph, and Jinja leaves the newline after each block tag
_ASSERT_HEAD = """<system>
# Role
You are an LLM-judge evaluating a completed agent conversation.
You will be given two inputs:

- **Check**: a short natural-language assertion written by a test author describing something \
that should (or should not) be true about the conversation.
- **Conversation**: the agent conversation being evaluated. This is either the full history \
formatted as ordered `role: content` lines, or only the final assistant message — whatever is \
relevant to the check.

"""
_ASSERT_KIND = {
    "observed": """
## Check Kind: Observed Fact
You are verifying a **factual observation** about the conversation.
Determine whether the claim stated in the Check is true or false based **solely** on what is \
present in the Conversation.
Do not draw on outside knowledge or make assumptions beyond what is explicitly stated or clearly \
implied by the conversation content.
""",
    "policy": """
## Check Kind: Policy Rule
You are evaluating a **behavioural policy rule** about how the agent conducted itself.
Determine whether the agent's conduct in the Conversation satisfies or violates the rule stated \
in the Check, based **solely** on what is present in the Conversation.
Do not draw on outside knowledge or make assumptions beyond what is explicitly stated or clearly \
implied by the conversation content.
""",
}
_ASSERT_TAIL = """

## Handling Ambiguity
If the conversation does not contain enough information to make a confident determination, set \
`verdict` to `false`.

## Response Format
Respond with a JSON object and nothing else. Do not include markdown fences or extra text.

```
{"verdict": true, "reasoning": "One sentence explaining your verdict."}
```

- `verdict`: boolean `true` if the conversation satisfies the check, `false` otherwise
- `reasoning`: one sentence explaining your verdict
</system>

<user>
Check:
"""
# JinjaTemplateRenderer._create_chat_completions_messages: the tagged parts become the chat
_TAGGED = re.compile(
    r"<\s*(?P<tag>system|user|assistant)\s*>\s*(?P<content>.*?)\s*<\s*/\s*(?P=tag)\s*>",
    re.DOTALL | re.IGNORECASE,
)


def _named_goals(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        g
        for g in data.get("goal_details") or []
        if isinstance(g, dict) and g.get("type") == kind and "name" in g
    ]


def assertions(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The dataset's ``AssertLLMEntry`` goals: ``assert_llm`` entries without a name (a named
    one is a GoalDetail to IBM, and no assertion)."""
    return [
        g
        for g in data.get("goal_details") or []
        if isinstance(g, dict) and g.get("type") == "assert_llm" and "name" not in g
    ]


def interaction_goals(data: dict[str, Any]) -> list[dict[str, Any]]:
    return _named_goals(data, "interaction")


def text_goals(data: dict[str, Any]) -> list[dict[str, Any]]:
    return _named_goals(data, "text")


def _assistant_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [
        str(m["content"])
        for m in messages
        if m["role"] == "assistant" and m["type"] == "text" and m["content"]
    ]


def matched_text_goals(
    data: dict[str, Any], messages: list[dict[str, Any]], judge: Judge | None
) -> tuple[list[str], list[str]]:
    """(text goal names, the ones matched), in the dataset's order."""
    goals = text_goals(data)
    if not goals:
        return [], []
    if judge is None:
        raise NotApplicable(
            f"text goals need IBM's keyword and semantic checks by an LLM judge: {SET_JUDGE}"
        )
    context = str(messages[0]["content"]) if messages else ""
    responses = _assistant_texts(messages)
    matched = []
    for goal in goals:
        expected = goal.get("response") or goal.get("summary") or ""
        keywords = goal.get("keywords") or []
        for response in responses:
            # IBM asks both checks of every pair; a goal needs one response passing both
            if keywords and not _true(
                judge.ask(
                    judge.render(
                        "watsonx_keyword_match.j2", keywords="\n".join(keywords), response=response
                    )
                )
            ):
                continue
            if _true(
                judge.ask(
                    judge.render(
                        "watsonx_semantic_match.j2",
                        context=context,
                        expected=expected,
                        actual=response,
                    )
                )
            ):
                matched.append(goal["name"])
                break
    return [g["name"] for g in goals], matched


def _true(answer: str) -> bool:
    return answer.strip().lower().startswith("true")


def matched_interaction_goals(
    data: dict[str, Any], actual: list[Invocation], messages: list[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """(interaction goal names, the ones matched), in the dataset's order; ``messages``: the
    conversation as ``messages_of`` lays it out."""
    goals = interaction_goals(data)
    if not goals:
        return [], []
    if not any(INTERACTION in inv.extensions for inv in actual):
        raise NotApplicable(
            f"interaction goals {[g['name'] for g in goals]} need the agent's Orchestrate "
            "interactions (widgets), which this conversation does not record"
        )
    observed = [
        m["interaction"]
        for m in messages
        if m["role"] == "assistant" and m["type"] == "interaction" and m.get("interaction")
    ]
    claimed: set[int] = set()
    matched = []
    for goal in goals:
        identifier = goal.get("identifier") or {}
        for k, interaction in enumerate(observed):
            payload = interaction.get("payload") or {}
            if k not in claimed and str(payload.get(identifier.get("key"))) == str(
                identifier.get("value")
            ):
                claimed.add(k)
                matched.append(goal["name"])
                break
    return [g["name"] for g in goals], matched


def assertion_context(messages: list[dict[str, Any]], scope: str) -> str:
    """``AssertLLMMetric._build_context``: the last assistant message with content, or every
    message with content as ``role: content`` lines."""
    if scope == "response":
        for message in reversed(messages):
            if message["role"] == "assistant" and message["content"]:
                return str(message["content"])
        return ""
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages if m["content"])


def assert_llm_prompt(check: str, context: str, kind: str) -> list[dict[str, str]]:
    """The chat IBM's ``AssertLLMMetric._judge`` sends for one assertion."""
    text = (
        _ASSERT_HEAD
        + _ASSERT_KIND.get(kind, "")
        + _ASSERT_TAIL
        + check
        + "\n\nConversation:\n"
        + context
        + "\n\nAnswer:\n</user>"
    )
    messages = [
        {"role": m.group("tag").lower(), "content": m.group("content").strip()}
        for m in _TAGGED.finditer(text)
        if m.group("content").strip()
    ]
    return messages or [{"role": "user", "content": text.strip()}]


def _verdict(answer: str) -> tuple[bool, str] | None:
    """``_parse_judge_response``: the whole answer is a JSON object with a ``verdict`` (read
    as Python's ``bool``, as IBM does); None when it is not (IBM asks again)."""
    try:
        data = json.loads(answer)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or "verdict" not in data:
        return None
    return bool(data["verdict"]), str(data.get("reasoning", ""))


def check_assertions(
    data: dict[str, Any], messages: list[dict[str, Any]], judge: Judge | None
) -> list[dict[str, Any]]:
    """One result per assertion: ``check``, ``kind``, ``scope``, ``passed``, ``reasoning``. A
    judge that cannot be reached is an error of the metric (IBM records a failed assertion)."""
    entries = assertions(data)
    if not entries:
        return []
    if judge is None:
        raise NotApplicable(f"assert_llm goals need an LLM judge: {SET_JUDGE}")
    results = []
    for entry in entries:
        scope = entry.get("scope") or "conversation"
        kind = entry.get("kind") or "observed"
        prompt = assert_llm_prompt(entry["check"], assertion_context(messages, scope), kind)
        verdict = None
        for attempt in range(ASSERT_ATTEMPTS):  # another sample each time: not the cached one
            verdict = _verdict(judge.ask(prompt, sample=attempt))
            if verdict is not None:
                break
        passed, reasoning = verdict or (
            False,
            f"the judge's answer was no JSON verdict {ASSERT_ATTEMPTS} times: failed, as IBM does",
        )
        results.append(
            {
                "check": entry["check"],
                "kind": kind,
                "scope": scope,
                "passed": passed,
                "reasoning": reasoning,
            }
        )
    return results
