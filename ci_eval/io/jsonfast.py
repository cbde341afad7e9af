"""The fast ways to parse JSON: the C scanner below the levels whose positions are wanted, and
array items handed to a function as they are parsed. Both share the slow parser's hooks (no
NaN, no integer over the digit limit) and give way to it for anything unusual, so that its
errors are the ones users see (``ci_eval.io.jsonpos``)."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import json.decoder
import json.scanner
import math
from collections.abc import Callable, Iterator
from typing import Any

from ci_eval.text import surrogates as text_util


class NonFinite:
    """Stands in for NaN, Infinity or a number too large for a float (1e999) while parsing:
    JSON has no such numbers, strict parsers (jq) reject them, and a threshold of NaN passes
    every comparison. Found again after parsing, to say where it is."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


class IntTooLong(Exception):
    pass


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off while a large acyclic tree is built (a parsed file, the models
    validated from it): every few thousand allocations it would walk all that was built so far,
    a cost that grows with the file. Back on (if it was) afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def make_decoder(non_finite: list[NonFinite]) -> json.JSONDecoder:
    def parse_constant(literal: str) -> NonFinite:
        non_finite.append(NonFinite(literal))
        return non_finite[-1]

    def parse_float(literal: str) -> float | NonFinite:
        value = float(literal)
        return value if math.isfinite(value) else parse_constant(literal)

    # given to the constructor: the C scanner takes its hooks from there
    return json.JSONDecoder(
        parse_int=_parse_int, parse_float=parse_float, parse_constant=parse_constant
    )


#: Containers at depths below this are walked in Python and their positions recorded; those at
#: this depth are parsed whole by the C scanner, their start recorded.
SHALLOW_DEPTH = 2
#: A container parsed whole that may nest deeper than this goes to the slow parser, whose
#: refusal of deep nesting (it runs out of stack) names where; no eval set comes near it.
_MAX_FAST_NESTING = 100
#: Nesting no eval set, recording or agent reply needs, and past which the results file (its
#: serialiser stops at 255 levels) could not be written: refused where it is read.
MAX_NESTING = 100


class TooDeep(Exception):
    pass


def shallow_scanner(decoder: json.JSONDecoder, positions: dict[int, int]) -> Any:
    """A ``scan_once`` for ``decoder`` that records where each container down to
    :data:`SHALLOW_DEPTH` starts, and hands each value below to the C scanner."""
    c_scan = json.scanner.c_make_scanner
    if c_scan is None:  # an interpreter without the C accelerator
        raise TooDeep
    fast = c_scan(decoder)
    memo: dict[str, str] = {}
    count = str.count

    def at(depth: int) -> Any:
        inner = at(depth + 1) if depth < SHALLOW_DEPTH else None

        def scan_once(s: str, idx: int) -> tuple[Any, int]:
            if depth < SHALLOW_DEPTH:
                char = s[idx : idx + 1]
                if char == "{":
                    obj, end = json.decoder.JSONObject(
                        (s, idx + 1), decoder.strict, inner, None, None, memo
                    )
                    positions[id(obj)] = idx
                    return obj, end
                if char == "[":
                    obj, end = json.decoder.JSONArray((s, idx + 1), inner)
                    positions[id(obj)] = idx
                    return obj, end
            value, end = fast(s, idx)
            if isinstance(value, dict | list):
                positions[id(value)] = idx
                # fewer brackets than the limit in its text: it cannot nest deeper
                if count(s, "{", idx, end) + count(s, "[", idx, end) > _MAX_FAST_NESTING:
                    check_nesting(value, _MAX_FAST_NESTING - depth)
            return value, end

        return scan_once

    return at(0)


def check_nesting(root: Any, limit: int) -> None:
    """TooDeep when ``root`` nests containers deeper than ``limit``."""
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise TooDeep
        values = node.values() if isinstance(node, dict) else node
        stack += [(v, depth + 1) for v in values if isinstance(v, dict | list)]


class NotStreamable(Exception):
    """:func:`parse_streaming` could not take the text as it is: parse it the usual way."""


def parse_streaming(text: str, members: dict[str, Callable[[Any, int], Any]]) -> dict[str, Any]:
    """``text``, a JSON object, parsed as :func:`parse_json` without positions would, except
    that each item of the top-level arrays named in ``members`` is handed to that member's
    function (with the offset where it starts) as soon as it is parsed and its return value
    kept in its place: the items of a
    large array are never all in memory as JSON trees, and the memory of each is reused for
    the next. Anything else (invalid JSON, another top level, lone surrogates, numbers JSON
    does not allow, a function's exception) raises :class:`NotStreamable`, and the caller
    reads the file the usual way, which says what is wrong."""
    if text_util.has_surrogate_escapes(text):
        raise NotStreamable
    non_finite: list[NonFinite] = []
    decoder = make_decoder(non_finite)
    fast = json.scanner.make_scanner(decoder)
    space = json.decoder.WHITESPACE.match
    scanstring = json.decoder.scanstring

    def deep_enough(value: Any, start: int, end: int) -> None:
        """Past MAX_NESTING the usual parser reads it, and says where (cheap: counted first)."""
        if text.count("{", start, end) + text.count("[", start, end) > MAX_NESTING:
            check_nesting(value, MAX_NESTING)

    def expect(char: str, idx: int) -> int:
        if text[idx : idx + 1] != char:
            raise NotStreamable
        return space(text, idx + 1).end()

    def array(idx: int, item: Callable[[Any, int], Any]) -> tuple[list[Any], int]:
        out: list[Any] = []
        idx = expect("[", idx)
        if text[idx : idx + 1] == "]":
            return out, idx + 1
        while True:
            value, end = fast(text, idx)
            deep_enough(value, idx, end)
            out.append(item(value, idx))
            idx = end
            idx = space(text, idx).end()
            if text[idx : idx + 1] == "]":
                return out, idx + 1
            idx = expect(",", idx)

    try:
        obj: dict[str, Any] = {}
        idx = expect("{", space(text, 0).end())
        if text[idx : idx + 1] != "}":
            while True:
                if text[idx : idx + 1] != '"':
                    raise NotStreamable
                key, idx = scanstring(text, idx + 1, True)
                idx = expect(":", space(text, idx).end())
                item = members.get(key)
                if item is not None and text[idx : idx + 1] == "[":
                    obj[key], idx = array(idx, item)
                else:
                    start = idx
                    obj[key], idx = fast(text, idx)
                    deep_enough(obj[key], start, idx)
                idx = space(text, idx).end()
                if text[idx : idx + 1] == "}":
                    break
                idx = expect(",", idx)
        if space(text, idx + 1).end() != len(text) or non_finite:
            raise NotStreamable
        return obj
    except NotStreamable:
        raise
    except Exception as exc:  # invalid JSON, too deep, or an item its function refused
        raise NotStreamable from exc


def _parse_int(digits: str) -> int:
    try:
        return int(digits)
    except ValueError:  # over sys.get_int_max_str_digits(): a denial-of-service guard
        raise IntTooLong from None


@functools.cache
def serializer_for(kind: type) -> Any:
    """pydantic-core's serialiser for a type, built once from its type hints (None: its hints
    cannot be resolved), writing every field, those a file leaves out too (``exclude=True``):
    what it is for is every string the object holds (redaction's search). Writing a dataclass
    of a known shape this way is faster than having each value's type found."""
    try:
        from pydantic import TypeAdapter
        from pydantic_core import SchemaSerializer

        return SchemaSerializer(_every_field(TypeAdapter(kind).core_schema))
    except Exception:
        return None


def _every_field(schema: Any) -> Any:
    """A core schema with no field left out of serialisation."""
    if isinstance(schema, dict):
        return {k: _every_field(v) for k, v in schema.items() if k != "serialization_exclude"}
    if isinstance(schema, list):
        return [_every_field(v) for v in schema]
    return schema
