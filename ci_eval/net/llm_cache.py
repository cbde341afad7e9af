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

An entry is the judge's answer only when a trusted job wrote it: main's job signs each entry
it writes with an Ed25519 private key only it holds (``--cache-sign-key-env``: a secret of an
environment limited to main); a pull request's job verifies with the public key read from the
base branch (``--cache-public-key``: a committed file or the key). An entry this job wrote
itself is used within the job, from memory (an agent may rewrite the file). Anything else in
the folder — unsigned, signed by another key, stale, not a regular file (a FIFO, a symlink),
too large, not JSON — is refused and counted, never read twice. Without keys the cache is used
within the job only, and the run says so.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import math
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

DEFAULT_TTL = 7 * 86_400.0  # a week: a judge model's answers outlive few of its updates
FORMAT = 1
# an answer longer than a judge's verdict can be (ci_eval.metrics.judge.MAX_ANSWER_CHARS) is
# not kept; an entry file larger than this is not read
MAX_ANSWER_CHARS = 100_000
MAX_ENTRY_BYTES = 8 * 2**20

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
    signer: Any = field(default=None, repr=False)  # Ed25519PrivateKey: main's job signs
    verifier: Any = field(default=None, repr=False)  # Ed25519PublicKey: what is trusted
    # this job's own answers, by entry name: served from memory, never re-read from the file
    _mine: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    refused: dict[str, int] = field(default_factory=dict)  # why -> how many entries

    def _refuse(self, why: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1

    @staticmethod
    def key(parts: dict[str, Any]) -> str:
        text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def path(self, parts: dict[str, Any]) -> Path:
        return self.folder / f"{self.key(parts)}{_SUFFIX}"

    def get(self, parts: dict[str, Any]) -> dict[str, Any] | None:
        """The answer kept for ``parts`` (``{"text": …, "logprobs": […]}``): this job's own, or
        an entry signed by the trusted key; None (and counted, where the folder had one) for
        anything else, an expired one, or when reads are off."""
        if not self.read:
            return None
        path = self.path(parts)
        if path.name in self._mine:
            return self._mine[path.name]
        raw = _read_regular(path, MAX_ENTRY_BYTES)
        if raw is None:
            return None  # none there: asked
        if isinstance(raw, str):
            self._refuse(raw)
            return None
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            entry = None
        if not isinstance(entry, dict) or not isinstance(entry.get("created"), int | float):
            self._refuse("not an entry")
            return None
        created, answer = entry["created"], entry.get("answer")
        if (
            isinstance(created, bool)
            or created + self.ttl <= self.now()
            or (created > self.now() + 3600)
        ):
            self._refuse("stale")
            return None
        if self.verifier is None:
            self._refuse("from another job (no public key)")
            return None
        if not _verified(self.verifier, entry.get("signature"), path.name, created, answer):
            self._refuse("unsigned" if not entry.get("signature") else "not signed by main")
            return None
        if not _an_answer(answer):
            self._refuse("not an entry")
            return None
        return {"text": answer["text"], "logprobs": answer.get("logprobs", [])}

    def has(self, parts: dict[str, Any]) -> bool:
        return self.path(parts).name in self._mine

    def put(self, parts: dict[str, Any], text: str, logprobs: list[dict[str, Any]]) -> None:
        """Keep the answer for this job, and in the folder for later ones, signed when this job
        holds the private key; a too long one, or a failed write, is not kept in the folder."""
        from ci_eval.io.files import write_text_atomic

        if len(text) > MAX_ANSWER_CHARS:
            return
        path, created = self.path(parts), self.now()
        answer = {"text": text, **({"logprobs": logprobs} if logprobs else {})}
        self._mine[path.name] = {"text": text, "logprobs": logprobs}
        entry = {"format": FORMAT, "created": created, "key": parts, "answer": answer}
        if self.signer is not None:
            entry["signature"] = _sign(self.signer, path.name, created, answer)
        data = json.dumps(entry, ensure_ascii=False)
        if len(data.encode("utf-8", "surrogatepass")) > MAX_ENTRY_BYTES:
            return
        with contextlib.suppress(OSError):
            write_text_atomic(path, data)

    def said(self) -> list[str]:
        """What to say after the run: the entries refused, by why."""
        if not self.refused:
            return []
        total = sum(self.refused.values())
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.refused.items()))
        return [
            f"response cache {self.folder}: {total} entr{'y' if total == 1 else 'ies'} refused "
            f"({why}); asked afresh"
        ]

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


def _signed_text(name: str, created: object, answer: object) -> bytes:
    text = json.dumps([name, created, answer], sort_keys=True, ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def _sign(key: Any, name: str, created: object, answer: object) -> str:
    """Ed25519 over the entry's name, time and answer, in hex."""
    return key.sign(_signed_text(name, created, answer)).hex()


def _verified(key: Any, signature: object, name: str, created: object, answer: object) -> bool:
    from cryptography.exceptions import InvalidSignature

    if not isinstance(signature, str) or len(signature) != 128:
        return False
    try:
        key.verify(bytes.fromhex(signature), _signed_text(name, created, answer))
    except (InvalidSignature, ValueError):
        return False
    return True


def _an_answer(answer: object) -> bool:
    return (
        isinstance(answer, dict)
        and isinstance(answer.get("text"), str)
        and len(answer["text"]) <= MAX_ANSWER_CHARS
        and isinstance(answer.get("logprobs", []), list)
        and all(isinstance(t, dict) for t in answer.get("logprobs", []))
    )


def _read_regular(path: Path, limit: int) -> bytes | str | None:
    """The file's bytes when it is a regular file of at most ``limit`` bytes; None when there
    is none; else why it is refused. Opened without following a symlink and without blocking
    (a FIFO would hold the run forever)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return "a symlink" if path.is_symlink() else f"unreadable ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > limit:
            return "too large"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
        return data if len(data) <= limit else "too large"
    finally:
        os.close(fd)


def load_keys(
    env: Mapping[str, str], sign_key_env: str | None, public_key: str | None, root: Path
) -> tuple[Any, Any]:
    """The private key named by ``sign_key_env`` (its variable holds a PEM or the raw key in
    base64) and the public key ``public_key`` (a file, or the key itself, PEM or base64);
    ValueError saying which is wrong. Either may be None."""
    signer = verifier = None
    if sign_key_env:
        text = env.get(sign_key_env, "").strip()
        if text:  # a job without the secret (a pull request's): it only verifies
            signer = _private(text, f"the variable {sign_key_env}")
    if public_key:
        where = Path(public_key) if Path(public_key).is_absolute() else root / public_key
        text = public_key
        is_file = False
        with contextlib.suppress(OSError, ValueError):  # a key's text is no path
            is_file = where.is_file()
        if is_file:
            try:
                text = _at_merge_base(where, env)
            except OSError as exc:
                raise ValueError(f"{public_key}: cannot read it: {exc.strerror or exc}") from None
        verifier = _public(text.strip(), public_key)
    if signer is not None and verifier is None:
        verifier = signer.public_key()
    return signer, verifier


def _at_merge_base(path: Path, env: Mapping[str, str]) -> str:
    """A key file as the merge base has it, in a pull request (the PR could put its own key in
    the file); as it is otherwise. ValueError when the merge base has no such file."""
    from ci_eval.io import git

    base = git.pull_request_base(env)
    relative = git.in_worktree(path) if base else None
    if relative is None:
        return path.read_text("utf-8")
    sha = git.fetch_merge_base(base)[0]
    text = git.quiet("show", f"{sha}:{relative}") if sha else None
    if text is None:
        raise ValueError(
            f"{relative}: not at the merge base with {base} (a key a pull request adds is "
            "not trusted; commit it on the base branch first)"
        )
    return text


def _private(text: str, where: str) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        if "BEGIN" in text:
            key = serialization.load_pem_private_key(text.encode(), password=None)
        else:
            key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError, binascii.Error):
        raise ValueError(f"{where}: not an Ed25519 private key (PEM or base64)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{where}: not an Ed25519 private key (PEM or base64)")
    return key


def _public(text: str, where: str) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        if "BEGIN" in text:
            key = serialization.load_pem_public_key(text.encode())
        else:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError, binascii.Error):
        raise ValueError(
            f"{where}: not an Ed25519 public key (a file holding one, PEM or base64)"
        ) from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"{where}: not an Ed25519 public key (PEM or base64)")
    return key


class Cached(Protocol):
    """What :func:`attach` gives the cache to: :class:`ci_eval.net.llm.ChatClient`, which imports
    this module (so this one names it only by its shape)."""

    cache: ResponseCache | None


def attach(
    clients: Iterable[Cached | None],
    folder: str | None,
    ttl: str | float | None,
    fresh: bool,
    env: Mapping[str, str],
    sign_key_env: str | None = None,
    public_key: str | None = None,
) -> tuple[ResponseCache | None, list[str]]:
    """Give the judge's and the simulator's clients the response cache in ``folder`` (None:
    no cache); ``fresh``: a baseline update, which asks afresh and only writes. Returns the
    cache and what to say of it; ValueError for a key that is not one."""
    if not folder:
        return None, []
    signer, verifier = load_keys(env, sign_key_env, public_key, Path.cwd())
    cache = ResponseCache(Path(folder), parse_ttl(ttl), signer=signer, verifier=verifier)
    said = []
    if fresh or cache.ttl == 0:
        cache.read = False
        why = "--update-baseline records main's history" if fresh else "cache-ttl is 0"
        said.append(
            f"response cache {folder}: not read ({why}: the judge and the simulator are asked "
            "afresh, so the history keeps the judge's real noise); their answers are written "
            "for later jobs" + ("" if signer else " (unsigned: no --cache-sign-key-env)")
        )
    elif _tracked(folder, env):
        cache.read = False
        said.append(
            f"warning: response cache {folder}: not read, the pull request's tree has files "
            "in it (a cached answer is the judge's, never the pull request's)"
        )
    elif verifier is None:
        said.append(
            f"response cache {folder}: used within this job only — no --cache-public-key to "
            "tell main's signed answers from anyone's (docs: the response cache)"
        )
    if cache.read:
        cache.prune()
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
