"""A deterministic LLM for the loopback chat-completions server: it plays the simulated user
from the conversation it is sent, and answers the per-turn quality judge.

The user's next message comes from a script keyed on the agent's last message; anything the
script does not know ends the conversation with the stop signal (ADK's ``</finished>``,
Orchestrate's ``END``).
"""

from __future__ import annotations

from collections.abc import Callable

SCRIPT = {"Which city would you like the weather for?": "Paris, please."}
ADK_STOP, ORCHESTRATE_STOP = "</finished>", "END"
JUDGE_MARKERS = ("Generated User Response", "Latest user message")
HISTORY_MARKERS = ("# Conversation History", "# Conversation so far")


def agent_said_last(history: str) -> str:
    """The last ``author: text`` paragraph of an ADK simulator prompt, without the author."""
    last = history.strip().split("\n\n")[-1] if history.strip() else ""
    return last.split(": ", 1)[1] if ": " in last else last


def scripted_user(
    script: dict[str, str] | None = None, verdict: str = "true"
) -> Callable[[str, int], str]:
    script = SCRIPT if script is None else script

    def answer(prompt: str, n: int) -> str:
        if any(m in prompt for m in JUDGE_MARKERS):
            return '{"criteria": [], "is_valid": ' + verdict + "}"
        for marker in HISTORY_MARKERS:
            if marker in prompt:  # ADK's simulator: one message, the history at its end
                said = agent_said_last(prompt.split(marker, 1)[1])
                return script.get(said, ADK_STOP)
        # Orchestrate's user agent: the last chat message is the agent's
        return script.get(prompt.strip(), ORCHESTRATE_STOP)

    return answer
