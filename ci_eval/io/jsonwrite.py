"""``json.dump(data, fp, indent=2, ensure_ascii=False)``, byte for byte, faster.

With ``indent`` the standard library falls back to its pure-Python encoder: a generator per
container, a write per token. A large results file was slow to write. Here each container is
serialised by pydantic-core's Rust encoder, whose indented text is json's except for floats
under 1e-4 (``0.00001`` for ``1e-05``), which are rewritten; what it cannot write (lone
surrogates, unknown types, sorted keys) goes through plain recursion into a list of strings with
the C string escaper json uses. A :class:`Lazy` array is made and written one item at a time, so
a large document never exists whole in memory, as data or as text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring  # the C escaper when available, as json uses
from typing import Any, TextIO

import pydantic_core

_FLUSH = 1 << 14  # pieces buffered before a write


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    # json's rules for non-string keys (skipkeys=False)
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _strict_float(value: float) -> str:
    return float.__repr__(value) if math.isfinite(value) else "null"


class Lazy:
    """A JSON array whose items are made while it is written (each one once). Its items are
    JSON data with string keys (as json.loads makes): they are written by the fast encoder."""

    def __init__(self, items: Iterable[Any]) -> None:
        self._items = items

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)


class Raw:
    """A JSON value already written as compact JSON text (no line break): written as it is,
    on one line, wherever it stands."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


# Floats under 1e-4 as pydantic-core writes them (``0.00004``, ``4e-7``; json: ``4e-05``,
# ``4e-07``), found from their literal parts (a fast search; a regex starting with a digit
# is much slower) and rewritten where a number stands in indented JSON: after a key (a
# quote after an even number of backslashes ends a string) or alone on a line (strings hold no
# raw line break).
_HINTS = (re.compile(r"0\.0000"), re.compile(r"e-"))
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-\d+)?")
_NUMBER_CHARS = frozenset("0123456789.-e")


def _small_floats(text: str) -> str:
    found: dict[int, tuple[int, str]] = {}
    for hint in _HINTS:
        for match in hint.finditer(text):
            start = match.start()
            while start > 0 and text[start - 1] in _NUMBER_CHARS:
                start -= 1
            number = _NUMBER.match(text, start)
            if number is None or start in found:
                continue
            end = number.end()
            if end < len(text) and text[end] not in ",\n":
                continue
            if text.endswith('": ', 0, start):
                slashes = 0
                while start - 4 - slashes >= 0 and text[start - 4 - slashes] == "\\":
                    slashes += 1
                if slashes % 2:  # an escaped quote: inside a string
                    continue
            elif text[text.rfind("\n", 0, start) + 1 : start].strip(" "):
                continue
            found[start] = (end, float.__repr__(float(number.group())))
    if not found:
        return text
    pieces, last = [], 0
    for start in sorted(found):
        end, value = found[start]
        pieces += [text[last:start], value]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _rust(value: Any, indent: int, strict: bool) -> str | None:
    """``value`` as json writes it at the top level, or None where only json can."""
    try:
        text = pydantic_core.to_json(
            value, indent=indent, inf_nan_mode="null" if strict else "constants"
        ).decode()
    except Exception:  # lone surrogates, types json refuses: json's own rules decide
        return None
    return _small_floats(text)


def dump(
    data: Any, handle: TextIO, indent: int = 2, sort_keys: bool = False, strict: bool = False
) -> None:
    """Write ``data`` as ``json.dump(data, handle, indent=indent, ensure_ascii=False,
    sort_keys=sort_keys)`` would; with ``strict``, NaN and infinities are written as null
    (not measured), since strict JSON parsers (jq) reject them."""
    number = _strict_float if strict else _float
    pieces: list[str] = []
    append = pieces.append
    write = handle.write
    escape = encode_basestring
    step = " " * indent
    rust: Callable[[Any], str | None] = (
        (lambda value: None) if sort_keys else (lambda value: _rust(value, indent, strict))
    )

    def lazy_item(value: Any, pad: str) -> None:
        kind = type(value)
        if (kind is dict or kind is list) and not (
            kind is dict and any(type(v) is Lazy for v in value.values())
        ):
            text = rust(value)
            if text is not None:
                append(text.replace("\n", "\n" + pad))
                return
        encode(value, pad)

    def encode(value: Any, pad: str) -> None:
        kind = type(value)
        if kind is str:
            append(escape(value))
        elif kind is Raw:
            append(value.text)
        elif kind is Lazy:
            inner = "\n" + pad + step
            first = True
            for element in value:
                append(("[" if first else ",") + inner)
                first = False
                lazy_item(element, pad + step)
                write("".join(pieces))  # an item at a time: each a whole JSON value
                pieces.clear()
            append("[]" if first else "\n" + pad + "]")
        elif kind is dict:
            if not value:
                append("{}")
                return
            inner = "\n" + pad + step
            items = sorted(value.items()) if sort_keys else value.items()
            first = True
            for key, item in items:
                key = key if type(key) is str else _key(key)
                append(("{" if first else ",") + inner + escape(key) + ": ")
                first = False
                encode(item, pad + step)
            append("\n" + pad + "}")
            if len(pieces) > _FLUSH:
                write("".join(pieces))
                pieces.clear()
        elif kind is list or kind is tuple:
            if not value:
                append("[]")
                return
            inner = "\n" + pad + step
            first = True
            for item in value:
                append(("[" if first else ",") + inner)
                first = False
                encode(item, pad + step)
            append("\n" + pad + "]")
        elif value is None:
            append("null")
        elif value is True:
            append("true")
        elif value is False:
            append("false")
        elif kind is int:
            append(int.__repr__(value))
        elif kind is float:
            append(number(value))
        elif isinstance(value, str):
            append(escape(value))
        elif isinstance(value, int):  # subclasses, as json does (bool is handled above)
            append(int.__repr__(value))
        elif isinstance(value, float):
            append(number(value))
        elif isinstance(value, dict):
            encode(dict(value), pad)
        elif isinstance(value, list | tuple):
            encode(list(value), pad)
        else:
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    encode(data, "")
    write("".join(pieces))
