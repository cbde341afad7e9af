"""A count and its noun, agreeing: ``1 case``, ``2 cases``, ``0 runs``."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, or ``many`` (default: ``noun`` + "s") unless it is exactly 1."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def listed(items: list[str], limit: int) -> str:
    """The first ``limit`` items, comma-separated, and how many more there are: a list that
    stops says so (``a, b, … and 4 more``)."""
    more = len(items) - limit
    return ", ".join(items[:limit]) + (f", … and {more} more" if more > 0 else "")
