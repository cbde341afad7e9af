"""Settings whose text has a grammar: ``fail_on``'s list, ``shard``'s ``I/N`` and the replay's
pick, parsed here once; ``name`` is how the user named the setting (in messages)."""

from __future__ import annotations

from ci_eval.errors import InputError

FAIL_ON = ("failure", "regression", "error", "not-evaluated")
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
