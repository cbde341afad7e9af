"""Which cases run: ``--case`` filters, and sharding across CI machines (a case belongs to shard I
of N by a stable hash of its eval set id and case id, so every matrix job picks the same cases
on every run, on any machine)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def shard_of(eval_set_id: str, eval_id: str, total: int) -> int:
    digest = hashlib.sha256(f"{eval_set_id}\0{eval_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def selected(eval_set_id: str, eval_id: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or shard_of(eval_set_id, eval_id, shard[1]) == shard[0]


@dataclass(frozen=True)
class CaseFilter:
    """One ``--case``: ``SET_ID`` (every case of the set), ``SET_ID:CASE_ID`` or ``*:CASE_ID``."""

    text: str
    set_id: str
    case_id: str | None  # None: the whole set

    @classmethod
    def parse(cls, text: str) -> CaseFilter:
        set_id, sep, case_id = text.partition(":")
        return cls(text, set_id, case_id if sep else None)

    def matches(self, eval_set_id: str, eval_id: str) -> bool:
        if self.case_id is None:
            return self.set_id == eval_set_id
        return self.case_id == eval_id and self.set_id in (eval_set_id, "*")


def parse_cases(texts: Iterable[str]) -> list[CaseFilter]:
    return [CaseFilter.parse(t) for t in texts]


def case_selected(filters: Sequence[CaseFilter], eval_set_id: str, eval_id: str) -> bool:
    """No filters select every case; else a case any filter names."""
    return not filters or any(f.matches(eval_set_id, eval_id) for f in filters)


def unmatched(filters: Sequence[CaseFilter], known: set[tuple[str, str]]) -> CaseFilter | None:
    """The first filter that names no eval set or case of ``known`` (set id, case id) pairs."""
    set_ids = {k[0] for k in known}
    for f in filters:
        if f.case_id is None:
            if f.set_id not in set_ids:
                return f
        elif not any(f.matches(*key) for key in known):
            return f
    return None
