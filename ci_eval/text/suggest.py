"""Close matches for a name the user misspelled: ``did you mean …?`` in one place, for case
ids, ci-eval.toml keys, metric names and paths."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``choices`` close to ``word``, the closest first; case-insensitive, and a
    choice that holds ``word`` (of 3 characters or more: ``weather:paris_weather`` for
    ``paris``) counts as close."""
    options = sorted(set(choices))
    lowered = {option.lower(): option for option in options}
    low = word.lower()
    found = [lowered[m] for m in difflib.get_close_matches(low, list(lowered), n=n, cutoff=0.6)]
    if len(low) >= 3:
        found += [o for o in options if o not in found and low in o.lower()]
    return found[:n]


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> str:
    """`` (did you mean X?)``, `` (did you mean X or Y?)``, or "" when nothing is close."""
    return mean(close_matches(word, choices, n))


def mean(near: Sequence[str]) -> str:
    """`` (did you mean X, Y or Z?)`` for these names, "" for none."""
    if not near:
        return ""
    said = near[0] if len(near) == 1 else ", ".join(near[:-1]) + " or " + near[-1]
    return f" (did you mean {said}?)"
