"""Which cases run: ``--case`` filters, and sharding across CI machines (a case belongs to shard I
of N by a stable hash of its eval set id and case id, so every matrix job picks the same cases
on every run, on any machine)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ci_eval.settings.parse import CaseFilter
from ci_eval.text.suggest import close_matches, mean


def shard_of(eval_set_id: str, eval_id: str, total: int) -> int:
    digest = hashlib.sha256(f"{eval_set_id}\0{eval_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def selected(eval_set_id: str, eval_id: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or shard_of(eval_set_id, eval_id, shard[1]) == shard[0]


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


def suggestion(bad: CaseFilter, known: set[tuple[str, str]]) -> str:
    """`` (did you mean SET:CASE?)`` for a filter :func:`unmatched` returned: the ids close to
    what it names (``paris`` alone names a set: ``weather:paris`` for it); "" when none is."""
    in_set = {c for s, c in known if s == bad.set_id}
    if bad.case_id is not None and in_set:  # the set is right: the closest of its cases
        near_cases = close_matches(bad.case_id, in_set)
        if near_cases:
            return mean([f"{bad.set_id}:{c}" for c in near_cases])
    names: dict[str, set[str]] = {}  # a name the filter may have meant → the ids it stands for
    for set_id, case_id in known:
        full = f"{set_id}:{case_id}"
        names.setdefault(full, set()).add(full)
        names.setdefault(case_id, set()).add(full)
        if bad.case_id is None:
            names.setdefault(set_id, set()).add(set_id)
    word = (
        bad.text if bad.case_id is not None and bad.set_id != "*" else (bad.case_id or bad.set_id)
    )
    near: list[str] = []
    for name in close_matches(word, names):
        near += sorted(names[name] - set(near))
    return mean(near[:3])
