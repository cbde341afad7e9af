"""One OpenAI-compatible chat-completions client, shared by the LLM judge and the user simulator
(OpenAI, Azure, vLLM, Ollama, LiteLLM, Gemini's OpenAI endpoint)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# LLM calls (judge or simulator) for one case and run, whatever the config says: ADK's rubric
# metrics ask 5 samples per invocation, so 100 turns × 2 such metrics is 1,000; past that a
# case is a runaway (a simulator that never ends, a conversation of thousands of turns)
MAX_CALLS_PER_CASE = 1_000


class LlmError(Exception):
    """The endpoint could not give a completion; the message is one line and holds no secret."""


@dataclass
class CallCount:
    """The calls one case and run has made; shared by the tasks and threads that copy the
    context it was set in (ADK's evaluators run their samples as asyncio tasks)."""

    limit: int
    made: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def charge(self) -> None:
        with self._lock:
            if self.made >= self.limit:
                raise LlmError(
                    f"more than {self.limit:,} LLM calls for one case and run: stopped there "
                    "(a ceiling whatever the config says)"
                )
            self.made += 1


_case_calls: contextvars.ContextVar[CallCount | None] = contextvars.ContextVar(
    "ci_eval_case_calls", default=None
)


@contextlib.contextmanager
def one_case() -> Iterator[CallCount]:
    """The LLM calls made inside count toward one case and run's ceiling."""
    count = CallCount(MAX_CALLS_PER_CASE)
    token = _case_calls.set(count)
    try:
        yield count
    finally:
        _case_calls.reset(token)


@dataclass
class ChatClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 3
    temperature: float = 0.0

    def __post_init__(self) -> None:
        from ci_eval.net.client import make_session
        from ci_eval.net.http import HttpSettings  # urllib3: lazily

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = make_session(HttpSettings(self.timeout, self.retries, headers=headers))
        self.url = f"{self.base_url.rstrip('/')}/chat/completions"

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """The text of one completion of ``messages``; raises LlmError."""
        return self._complete(messages, {})[0]

    def complete_logprobs(
        self, messages: list[dict[str, Any]], top_logprobs: int = 20
    ) -> tuple[str, list[dict[str, Any]]]:
        """One completion's text and its tokens' log probabilities (OpenAI's
        ``choices[0].logprobs.content``: token, logprob, top_logprobs); raises LlmError."""
        return self._complete(messages, {"logprobs": True, "top_logprobs": top_logprobs})

    def _complete(
        self, messages: list[dict[str, Any]], extra: dict[str, Any]
    ) -> tuple[str, list[dict[str, Any]]]:
        from ci_eval.net.http import HttpError, post_json

        body = {"model": self.model, "temperature": self.temperature, "messages": messages}
        count = _case_calls.get()
        if count is not None:
            count.charge()
        try:
            data, _ = post_json(self._http, self.url, {**body, **extra}, self.timeout, self.retries)
            choice = data["choices"][0]
            text = choice["message"]["content"]
            tokens = (choice.get("logprobs") or {}).get("content") or []
        except HttpError as exc:
            raise LlmError(str(exc)) from None
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LlmError("the answer is not a chat completion") from None
        if not isinstance(text, str):
            raise LlmError("the completion has no text")
        if not isinstance(tokens, list) or not all(isinstance(t, dict) for t in tokens):
            raise LlmError("the completion's logprobs are not a list of tokens")
        return text, tokens

    def close(self) -> None:
        self._http.close()
