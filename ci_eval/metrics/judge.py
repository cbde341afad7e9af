"""An LLM judge over any OpenAI-compatible chat-completions endpoint (OpenAI, Azure, vLLM,
Ollama, LiteLLM, Gemini's OpenAI endpoint). Identical calls are made once per run. ADK's judged
metrics send google-adk's own prompts (``adk_judges``); watsonx's text goals send Jinja
templates in ``templates/judge/`` (override with ``--template-dir``)."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.metrics.failures import MetricFailure
from ci_eval.settings import JudgeConfig

# a judge's answer: longer is not a verdict (a model's longest output is a few ten thousand
# characters), and ADK's label patterns (which ci-eval runs as ADK wrote them) take time that
# grows with the square of an answer made to defeat them
MAX_ANSWER_CHARS = 100_000
# runs of whitespace, quotes or brackets: ADK's label patterns nest a quantifier over each,
# and a long run costs them a power of its length; three of them read the same to every parser
_RUN = re.compile(r'\s{4,}|\[{4,}|\]{4,}|"{4,}')
LOGPROBS = 20  # top log probabilities per token (trpc-agent-go's pairwise verifier)


def tame(answer: str) -> str:
    """``answer`` with every run of whitespace, quotes or brackets cut to three characters (a
    run of whitespace keeps a line break it held)."""

    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        if "\n" in run and "\n" not in run[:3]:
            return run[:2] + "\n"
        return run[:3]

    return _RUN.sub(cut, answer)


@dataclass
class Judge:
    settings: JudgeConfig  # where the judge is and how to call it ([judge] in ci-eval.toml)
    api_key: str | None = None
    template_dir: Path | None = None
    calls: int = 0  # calls made (answers from the response cache aside)
    cache_hits: int = 0  # answers the response cache (--cache) gave
    # answers by (model, prompt, sample): (text, token log probabilities)
    _cache: dict[tuple[str, str, int], tuple[str, list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    _tokens: dict[tuple[str, str, int], tuple[str, list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # jinja2 and requests load only when a judge is configured: most runs have none
        from ci_eval.net.llm import ChatClient
        from ci_eval.text import templates

        self.client = ChatClient(
            self.settings.base_url or "",
            self.settings.model or "",
            self.api_key,
            self.settings.timeout,
            self.settings.retries,
            self.settings.temperature,
        )
        self._env = templates.environment(self.template_dir, keep_trailing_newline=True)

    def render(self, template: str, **values: Any) -> str:
        from ci_eval.text import templates

        try:
            return templates.render(self._env, f"judge/{template}", values)
        except templates.TemplateProblem as exc:
            raise MetricFailure(f"judge prompt: {exc}") from None

    def ask(self, prompt: str | list[dict[str, str]], sample: int = 0) -> str:
        """One completion of a user prompt, or of chat messages (a system prompt, few-shot
        turns: IBM's quick-eval checks); the same prompt and sample number is asked once per
        run."""
        from ci_eval.net.llm import Completion, LlmError

        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        key = (self.settings.model or "", json.dumps(prompt), sample)
        with self._lock:
            known = self._cache.get(key)
        if known is not None:
            self.client.remember(messages, Completion(*known), sample)
            return known[0]
        try:
            done = self.client.ask(messages, sample)
        except LlmError as exc:
            raise MetricFailure(f"judge: {exc}") from None
        text = done.text
        if len(text) > MAX_ANSWER_CHARS:
            raise MetricFailure(
                f"judge: an answer of {len(text):,} characters (more than "
                f"{MAX_ANSWER_CHARS:,}) is no verdict"
            )
        text = tame(text)
        with self._lock:
            self._cache[key] = (text, [])
            self._count(done.cached)
        return text

    def _count(self, cached: bool) -> None:
        """A real call, or an answer from the response cache (``--cache``); under the lock."""
        if cached:
            self.cache_hits += 1
        else:
            self.calls += 1

    def ask_json(self, prompt: str | list[dict[str, str]], sample: int = 0) -> dict[str, Any]:
        text = self.ask(prompt, sample)
        # the first "{" to the last "}", as a greedy search would find them, in linear time (a
        # regex search retried from every "{" is quadratic)
        start, end = text.find("{"), text.rfind("}")
        try:
            value = json.loads(text[start : end + 1]) if 0 <= start < end else None
        except (json.JSONDecodeError, RecursionError):
            value = None
        if not isinstance(value, dict):
            raise MetricFailure(f"judge: expected a JSON object, got {text[:80]!r}")
        return value

    def ask_logprobs(self, prompt: str, sample: int = 0) -> list[dict[str, Any]]:
        """One completion's tokens with their log probabilities (trpc-agent-go's pairwise
        verifier reads them); the same prompt and sample number is asked once per run."""
        from ci_eval.net.llm import Completion, LlmError

        key = (self.settings.model or "", prompt, sample)
        messages = [{"role": "user", "content": prompt}]
        with self._lock:
            known = self._tokens.get(key)
        if known is not None:
            self.client.remember(messages, Completion(*known), sample, LOGPROBS)
            return known[1]
        try:
            done = self.client.ask(messages, sample, LOGPROBS)
        except LlmError as exc:
            raise MetricFailure(f"judge: {exc}") from None
        with self._lock:
            self._tokens[key] = (done.text, done.logprobs)
            self._count(done.cached)
        return done.logprobs
