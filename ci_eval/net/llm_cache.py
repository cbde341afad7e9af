"""A response cache for the LLM judge and the user simulator (``--cache DIR``), never for the
agent under test: a second identical job asks the judge and the simulator nothing.

An entry is one answer to one request: the endpoint, the model, the full messages, the sampling
parameters, and the case's run and the answer's sample number (majority voting and reruns still
see independent samples: the 3rd sample of run 2 is its own entry). One JSON file per entry,
named by the sha256 of that key, written atomically; it holds the answer, when it was made and
the key's readable parts (the endpoint without credentials, never an API key). Entries older
than the TTL are not read, and are removed when the cache is opened. A run that records main's
history (``--update-baseline``) asks afresh and only writes, so the history keeps the judge's
real noise.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

DEFAULT_TTL = 7 * 86_400.0  # a week: a judge model's answers outlive few of its updates
FORMAT = 1
# an answer longer than a judge's verdict can be (ci_eval.metrics.judge.MAX_ANSWER_CHARS) is
# not kept; an entry file larger than this is not read
MAX_ANSWER_CHARS = 100_000
MAX_ENTRY_BYTES = 8 * 2**20
if TYPE_CHECKING:
    from ci_eval.net.llm import ChatClient

_SUFFIX = ".json"
_NAME = re.compile(r"[0-9a-f]{64}\.json")
_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smhdw]?)\s*", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
# query parameters of an endpoint that carry a credential (Azure's api-key, a signed URL's sig)
_SECRET_PARAM = re.compile(r"key|token|secret|sig|password|auth", re.IGNORECASE)


def parse_ttl(value: str | float | None) -> float:
    """Seconds from ``3600``, ``"90m"``, ``"12h"``, ``"7d"`` or ``"2w"`` (None: the default;
    0: nothing is read, answers are written for later jobs); raises ValueError saying what it
    wants."""
    if value is None:
        return DEFAULT_TTL
    if isinstance(value, bool):
        raise ValueError("expected seconds or a duration like 12h or 7d")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.fullmatch(value)
        if match is None:
            raise ValueError(f"{value!r}: expected seconds or a duration like 12h or 7d")
        seconds = float(match[1]) * _UNITS[match[2].lower()]
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{value!r}: must be 0 (ask afresh, write for later jobs) or more")
    return seconds


def endpoint(base_url: str) -> str:
    """``base_url`` without what may be a secret: a user and password, credential-like query
    parameters (what the key and the entries say of the endpoint)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = urlencode([(k, v) for k, v in query if not _SECRET_PARAM.search(k)])
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), kept, ""))


@dataclass
class ResponseCache:
    folder: Path
    ttl: float = DEFAULT_TTL
    read: bool = True  # False: ask afresh (a baseline update), still write what was asked
    now: Callable[[], float] = field(default=time.time, repr=False)
    # the entries there before the agent started (:meth:`freeze`): the only ones read, so an
    # agent that writes in the folder during the job is not its own judge
    _before: frozenset[str] | None = field(default=None, repr=False)

    def freeze(self) -> None:
        """Read only the entries the folder holds now (call it before the agent starts)."""
        try:
            self._before = frozenset(n for n in os.listdir(self.folder) if _NAME.fullmatch(n))
        except OSError:
            self._before = frozenset()

    @staticmethod
    def key(parts: dict[str, Any]) -> str:
        text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def path(self, parts: dict[str, Any]) -> Path:
        return self.folder / f"{self.key(parts)}{_SUFFIX}"

    def get(self, parts: dict[str, Any], secret: str | None = None) -> dict[str, Any] | None:
        """The answer kept for ``parts`` (``{"text": …, "logprobs": […]}``), None when there
        is none, it expired, it is unreadable, reads are off, it came after :meth:`freeze`,
        or (with the endpoint's API key as ``secret``) its signature is not that key's."""
        if not self.read:
            return None
        path = self.path(parts)
        if self._before is not None and path.name not in self._before:
            return None
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        try:
            entry = json.loads(raw) if len(raw) <= MAX_ENTRY_BYTES else None
        except (ValueError, RecursionError):
            entry = None
        if not isinstance(entry, dict):
            return None
        created = entry.get("created")
        answer = entry.get("answer")
        if not isinstance(created, int | float) or isinstance(created, bool):
            return None
        if created + self.ttl <= self.now() or created > self.now() + 3600:
            with contextlib.suppress(OSError):
                path.unlink()  # expired (or from the future): asked again, written again
            return None
        if secret is not None and not hmac.compare_digest(
            str(entry.get("signature", "")), _signature(secret, path.name, created, answer)
        ):
            return None
        if (
            not isinstance(answer, dict)
            or not isinstance(answer.get("text"), str)
            or len(answer["text"]) > MAX_ANSWER_CHARS
            or not isinstance(answer.get("logprobs", []), list)
            or not all(isinstance(t, dict) for t in answer.get("logprobs", []))
        ):
            return None
        return {"text": answer["text"], "logprobs": answer.get("logprobs", [])}

    def has(self, parts: dict[str, Any]) -> bool:
        return self.path(parts).is_file()

    def put(
        self,
        parts: dict[str, Any],
        text: str,
        logprobs: list[dict[str, Any]],
        secret: str | None = None,
    ) -> None:
        """Keep the answer, signed with ``secret`` (the endpoint's API key) when there is one;
        a too long one, or a failed write, is not kept: it is asked again next time."""
        from ci_eval.io.files import write_text_atomic

        if len(text) > MAX_ANSWER_CHARS:
            return
        path, created = self.path(parts), self.now()
        answer = {"text": text, **({"logprobs": logprobs} if logprobs else {})}
        entry = {"format": FORMAT, "created": created, "key": parts, "answer": answer}
        if secret is not None:
            entry["signature"] = _signature(secret, path.name, created, answer)
        data = json.dumps(entry, ensure_ascii=False)
        if len(data.encode("utf-8", "surrogatepass")) > MAX_ENTRY_BYTES:
            return
        with contextlib.suppress(OSError):
            write_text_atomic(path, data)

    def prune(self) -> int:
        """Remove the entries last written longer than the TTL ago (by the file's time; a
        restored cache keeps them); returns how many."""
        removed = 0
        cutoff = self.now() - self.ttl
        try:
            scan = os.scandir(self.folder)
        except OSError:
            return 0
        with scan:
            for item in scan:
                with contextlib.suppress(OSError):
                    if (
                        _NAME.fullmatch(item.name)
                        and item.is_file(follow_symlinks=False)
                        and item.stat(follow_symlinks=False).st_mtime < cutoff
                    ):
                        os.unlink(item.path)
                        removed += 1
        return removed


def _signature(secret: str, name: str, created: object, answer: object) -> str:
    """HMAC-SHA256, keyed by the endpoint's API key, of the entry's name, time and answer: an
    agent that could write in the folder cannot make an entry the judge's key would sign."""
    text = json.dumps([name, created, answer], sort_keys=True, ensure_ascii=False)
    key = secret.encode("utf-8", "surrogatepass")
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def attach(
    clients: Iterable[ChatClient | None],
    folder: str | None,
    ttl: str | float | None,
    fresh: bool,
    env: Mapping[str, str],
) -> tuple[ResponseCache | None, list[str]]:
    """Give the judge's and the simulator's clients the response cache in ``folder`` (None:
    no cache); ``fresh``: a baseline update, which asks afresh and only writes. Returns the
    cache and what to say of it."""
    if not folder:
        return None, []
    cache = ResponseCache(Path(folder), parse_ttl(ttl))
    said = []
    if fresh or cache.ttl == 0:
        cache.read = False
        why = "--update-baseline records main's history" if fresh else "cache-ttl is 0"
        said.append(
            f"response cache {folder}: not read ({why}: the judge and the simulator are asked "
            "afresh, so the history keeps the judge's real noise); their answers are written "
            "for later jobs"
        )
    elif _tracked(folder, env):
        cache.read = False
        said.append(
            f"warning: response cache {folder}: not read, the pull request's tree has files "
            "in it (a cached answer is the judge's, never the pull request's)"
        )
    if cache.read:
        cache.prune()
        cache.freeze()
    for client in clients:
        if client is not None:
            client.cache = cache
    return cache, said


def _tracked(folder: str, env: Mapping[str, str]) -> bool:
    """In a pull request, whether git tracks a file in ``folder`` (the PR could have put it
    there)."""
    from ci_eval.io import git

    if not git.pull_request_base(env) or git.in_worktree(folder) is None:
        return False
    return bool(git.quiet("ls-files", "--", folder))
