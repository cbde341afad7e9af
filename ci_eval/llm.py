"""One OpenAI-compatible chat-completions client, shared by the LLM judge and the user simulator
(OpenAI, Azure, vLLM, Ollama, LiteLLM, Gemini's OpenAI endpoint)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class LlmError(Exception):
    """The endpoint could not give a completion; the message is one line and holds no secret."""


@dataclass
class ChatClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 3
    temperature: float = 0.0

    def __post_init__(self) -> None:
        from ci_eval.http import HttpSettings, make_session  # urllib3: lazily

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = make_session(HttpSettings(self.timeout, self.retries, headers=headers))
        self.url = f"{self.base_url.rstrip('/')}/chat/completions"

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """The text of one completion of ``messages``; raises LlmError."""
        from ci_eval.http import HttpError, post_json

        body = {"model": self.model, "temperature": self.temperature, "messages": messages}
        try:
            data, _ = post_json(self._http, self.url, body, self.timeout, self.retries)
            text = data["choices"][0]["message"]["content"]
        except HttpError as exc:
            raise LlmError(str(exc)) from None
        except (KeyError, IndexError, TypeError):
            raise LlmError("the answer is not a chat completion") from None
        if not isinstance(text, str):
            raise LlmError("the completion has no text")
        return text

    def close(self) -> None:
        self._http.close()
