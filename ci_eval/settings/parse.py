"""Settings whose text has a grammar: ``fail_on``'s list, ``shard``'s ``I/N``, ``--case``
filters, ``--metric NAME=THRESHOLD`` and ci-eval.toml's ``[metrics]``, parsed here once (by
:func:`ci_eval.settings.check.check`, into its frozen :class:`~ci_eval.settings.check.Plan`);
``name`` is how the user named the setting (in messages)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, get_args

from ci_eval.errors import InputError
from ci_eval.model.gate_words import FailOn
from ci_eval.model.metric_spec import MetricSpec, snake_keys

FAIL_ON: tuple[str, ...] = get_args(FailOn)  # the results file's schema names them once
REPLAY_PICKS = ("newest", "oldest", "all")


def parse_fail_on(values: list[str], name: str = "--fail-on") -> tuple[str, ...]:
    """``--fail-on`` values (repeated or comma-separated), checked against :data:`FAIL_ON`."""
    items = tuple(x.strip() for v in values for x in v.split(",") if x.strip())
    unknown = [x for x in items if x not in FAIL_ON]
    if unknown:
        raise InputError(f"{name}: unknown {', '.join(unknown)}; choose from " + ", ".join(FAIL_ON))
    return items


def parse_shard(text: str, name: str = "--shard") -> tuple[int, int]:
    """``I/N``: this machine's shard of N."""
    index, sep, total = text.partition("/")
    try:
        i, n = int(index), int(total)
    except ValueError:
        raise InputError(f"{name} {text!r}: expected I/N, e.g. 2/4") from None
    if not sep or n < 1 or not 1 <= i <= n:
        raise InputError(f"{name} {text!r}: expected I/N with 1 <= I <= N")
    return i, n


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


def parse_cases(texts: Iterable[str]) -> tuple[CaseFilter, ...]:
    return tuple(CaseFilter.parse(t) for t in texts)


def parse_metric_option(text: str, option: str = "--metric") -> MetricSpec:
    """``NAME`` or ``NAME=THRESHOLD`` (``--metric``; ``option`` names it in messages)."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not name:
        raise ValueError(f"{option} {text!r}: expected NAME or NAME=THRESHOLD")
    if not sep:
        return MetricSpec(name)
    try:
        threshold = float(value)
    except ValueError:
        raise ValueError(f"{option} {text!r}: the threshold must be a number") from None
    if not math.isfinite(threshold):
        raise ValueError(f"{option} {text!r}: the threshold must be a finite number")
    return MetricSpec(name, threshold)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_metric_table(table: dict[str, Any]) -> list[MetricSpec]:
    """ci-eval.toml ``[metrics]``: name = threshold, or name = {threshold = …, criterion…}."""
    specs = []
    for name, value in table.items():
        if isinstance(value, dict):
            criterion = snake_keys(value)
            threshold = criterion.pop("threshold", None)
            if threshold is not None and not _finite(threshold):
                raise ValueError(f"[metrics] {name}: the threshold must be a finite number")
            specs.append(MetricSpec(name, threshold, criterion))
        elif _finite(value):
            specs.append(MetricSpec(name, float(value)))
        else:
            raise ValueError(f"[metrics] {name}: expected a threshold or a table")
    return specs
