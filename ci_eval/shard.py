"""Sharding across CI machines: a case belongs to shard I of N by a stable hash of its eval set
id and case id, so every matrix job picks the same cases on every run, on any machine."""

from __future__ import annotations

import hashlib

from ci_eval.errors import InputError


def parse(text: str, name: str = "--shard") -> tuple[int, int]:
    """``I/N``; ``name`` is how the user named the setting (in messages)."""
    index, sep, total = text.partition("/")
    try:
        i, n = int(index), int(total)
    except ValueError:
        raise InputError(f"{name} {text!r}: expected I/N, e.g. 2/4") from None
    if not sep or n < 1 or not 1 <= i <= n:
        raise InputError(f"{name} {text!r}: expected I/N with 1 <= I <= N")
    return i, n


def shard_of(eval_set_id: str, eval_id: str, total: int) -> int:
    digest = hashlib.sha256(f"{eval_set_id}\0{eval_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def selected(eval_set_id: str, eval_id: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or shard_of(eval_set_id, eval_id, shard[1]) == shard[0]
