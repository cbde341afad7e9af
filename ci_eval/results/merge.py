"""Join the results of shards (matrix jobs) into one results file: ``report`` and ``compare``
then work on it as on a single run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.results.file import CaseRecord, RunResults, SetRecord, read_results


def merge(paths: list[Path], keep: Callable[[CaseRecord], CaseRecord] | None = None) -> RunResults:
    """``keep`` sees each case as it is read (``ci_eval.results.spill.PastLimit``)."""
    if not paths:
        raise InputError("merge needs at least one results file")
    parts = [(p, read_results(p, keep)) for p in paths]
    first = parts[0][1]
    sets: dict[str, SetRecord] = {}
    owner: dict[tuple[str, str], Path] = {}
    for path, results in parts:
        for s in results.sets:
            target = sets.setdefault(
                s.eval_set_id,
                SetRecord(s.eval_set_id, s.file, s.dialect, s.metrics, [], s.applied_metrics),
            )
            for case in s.cases:
                key = (s.eval_set_id, case.eval_id)
                if key in owner:
                    raise InputError(
                        f"case {key[0]}:{key[1]} is in {owner[key]} too: were the "
                        "shards run with different --shard totals?",
                        path=str(path),
                    )
                owner[key] = path
                target.cases.append(case)
    for s in sets.values():
        s.cases.sort(key=lambda c: (c.file, c.line or 0, c.eval_id))
    merged = RunResults(
        sets=sorted(sets.values(), key=lambda s: s.file),
        agent=first.agent,
        started=min(r.started for _, r in parts),
        # the same shards merged again are the same run
        run_id=_merged_id([r.run_id for _, r in parts]),
        duration_s=max(r.duration_s for _, r in parts),
        settings=replace(first.settings, shard=None, merged_from=len(parts)),
        interrupted=any(r.interrupted for _, r in parts),
        fail_on=first.fail_on,
    )
    if first.settings.usage_totals is not None:  # the shards' usage together, not the first's
        from ci_eval.results.usage_totals import summary

        merged.settings.usage_totals = summary(merged)
    return merged


def _merged_id(ids: list[str]) -> str:
    if not all(ids):
        return ""  # a shard written before runs had ids: the merged run has none either
    return hashlib.sha256("|".join(sorted(ids)).encode()).hexdigest()[:32]
