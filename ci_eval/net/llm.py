"""One OpenAI-compatible chat-completions client, shared by the LLM judge and the user simulator
(OpenAI, Azure, vLLM, Ollama, LiteLLM, Gemini's OpenAI endpoint)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ci_eval.net.llm_cache import ResponseCache

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
# the run of the case being scored or simulated: part of a cached answer's key
_case_run: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "ci_eval_case_run", default=None
)


@contextlib.contextmanager
def one_case(run: int | None = None) -> Iterator[CallCount]:
    """The LLM calls made inside count toward one case and run's ceiling; ``run`` (the run's
    number) keys the answers the response cache keeps."""
    count = CallCount(MAX_CALLS_PER_CASE)
    token = _case_calls.set(count)
    run_token = _case_run.set(run)
    try:
        yield count
    finally:
        _case_run.reset(run_token)
        _case_calls.reset(token)


@dataclass
class Usage:
    """What one client's LLM cost a run: calls made, answers the cache gave instead, and the
    tokens the endpoint reported (OpenAI's ``usage``); shared by the run's threads."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def called(self, usage: object) -> tuple[int, int]:
        """Count one call; returns its input and output tokens (0 where not reported)."""
        found = usage if isinstance(usage, dict) else {}
        tokens = [found.get(k) for k in ("prompt_tokens", "completion_tokens")]
        given = [
            t if isinstance(t, int) and not isinstance(t, bool) and t >= 0 else 0 for t in tokens
        ]
        with self._lock:
            self.calls += 1
            self.input_tokens += given[0]
            self.output_tokens += given[1]
        return given[0], given[1]

    def hit(self) -> None:
        with self._lock:
            self.cache_hits += 1

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {
                "calls": self.calls,
                "cache_hits": self.cache_hits,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
            }


@dataclass
class Completion:
    text: str
    logprobs: list[dict[str, Any]]
    cached: bool = False  # the response cache's answer: no call made


@dataclass
class ChatClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 3
    temperature: float = 0.0
    cache: ResponseCache | None = None  # --cache: answers kept across jobs
    usage: Usage = field(default_factory=Usage)
    # [budget]'s binding limits (ci_eval.run.ceiling.Ceiling) and this client's role there
    ceiling: Any = None
    role: str = "judge"

    def __post_init__(self) -> None:
        from ci_eval.net.client import make_session
        from ci_eval.net.http import HttpSettings  # urllib3: lazily

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = make_session(HttpSettings(self.timeout, self.retries, headers=headers))
        self.url = f"{self.base_url.rstrip('/')}/chat/completions"

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """The text of one completion of ``messages``; raises LlmError."""
        return self.ask(messages).text

    def complete_logprobs(
        self, messages: list[dict[str, Any]], top_logprobs: int = 20
    ) -> tuple[str, list[dict[str, Any]]]:
        """One completion's text and its tokens' log probabilities (OpenAI's
        ``choices[0].logprobs.content``: token, logprob, top_logprobs); raises LlmError."""
        done = self.ask(messages, logprobs=top_logprobs)
        return done.text, done.logprobs

    def ask(
        self, messages: list[dict[str, Any]], sample: int = 0, logprobs: int | None = None
    ) -> Completion:
        """One completion of ``messages`` (``sample``: which of several asked of the same
        messages; ``logprobs``: with that many top log probabilities per token), from the
        response cache when it has it; raises LlmError."""
        extra = {} if logprobs is None else {"logprobs": True, "top_logprobs": logprobs}
        count = _case_calls.get()
        if count is not None:
            count.charge()
        parts = self.key_parts(messages, extra, sample) if self.cache is not None else None
        if self.cache is not None and parts is not None:
            kept = self.cache.get(parts)
            if kept is not None:
                self.usage.hit()
                return Completion(kept["text"], kept["logprobs"], cached=True)
        if self.ceiling is not None:
            refused = self.ceiling.judge_call()
            if refused is not None:
                raise LlmError(f"not asked: {refused}")
        text, tokens = self._complete(messages, extra)
        if self.cache is not None and parts is not None:
            self.cache.put(parts, text, tokens)
        return Completion(text, tokens)

    def remember(
        self,
        messages: list[dict[str, Any]],
        done: Completion,
        sample: int = 0,
        logprobs: int | None = None,
    ) -> None:
        """Keep ``done`` as this run's answer too (an answer given once per process to every
        run that asked the same), so that the next job finds it whichever run asks first."""
        if self.cache is None:
            return
        extra = {} if logprobs is None else {"logprobs": True, "top_logprobs": logprobs}
        parts = self.key_parts(messages, extra, sample)
        if not self.cache.has(parts):
            self.cache.put(parts, done.text, done.logprobs)

    def key_parts(
        self, messages: list[dict[str, Any]], extra: dict[str, Any], sample: int
    ) -> dict[str, Any]:
        """What a cached answer is the answer to (no credential among them)."""
        from ci_eval.net.llm_cache import endpoint

        return {
            "endpoint": endpoint(self.base_url),
            "model": self.model,
            "messages": messages,
            "params": {"temperature": self.temperature, **extra},
            "run": _case_run.get(),
            "sample": sample,
        }

    def _complete(
        self, messages: list[dict[str, Any]], extra: dict[str, Any]
    ) -> tuple[str, list[dict[str, Any]]]:
        from ci_eval.net.http import HttpError, post_json

        body = {"model": self.model, "temperature": self.temperature, "messages": messages}
        try:
            data, _ = post_json(self._http, self.url, {**body, **extra}, self.timeout, self.retries)
            spent = self.usage.called(data.get("usage") if isinstance(data, dict) else None)
            if self.ceiling is not None:
                self.ceiling.spent(self.role, *spent)
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


def usage_line(usage: Mapping[str, Mapping[str, int]]) -> str | None:
    """``judge: 12 calls (30 from the cache), 10,512 tokens; simulator: 4 calls, 2,048
    tokens`` for the clients that were asked anything (None: none was)."""
    parts = []
    for role, used in usage.items():
        calls, hits = used.get("calls", 0), used.get("cache_hits", 0)
        if not calls and not hits:
            continue
        tokens = used.get("input_tokens", 0) + used.get("output_tokens", 0)
        parts.append(
            f"{role}: {calls:,} call{'s' if calls != 1 else ''}"
            + (f" ({hits:,} from the cache)" if hits else "")
            + f", {tokens:,} token{'s' if tokens != 1 else ''}"
        )
    return "; ".join(parts) or None


def usage_of(**clients: ChatClient | None) -> dict[str, dict[str, int]]:
    """The usage of each client that was asked anything, by its role (``judge``,
    ``simulator``), for the results file."""
    used = {role: c.usage.as_dict() for role, c in clients.items() if c is not None}
    return {role: u for role, u in used.items() if u["calls"] or u["cache_hits"]}
