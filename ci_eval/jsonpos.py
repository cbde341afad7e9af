"""JSON parsing that remembers where every object and array starts.

The standard library's pure-Python scanner calls ``parse_object`` / ``parse_array`` hooks with the
offset of each container; we wrap them to record that offset. Positions let us report
``file:line:col`` for validation errors and remember the line where each eval case starts.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError


@dataclass
class JsonDocument:
    """Parsed JSON plus the source offsets of its containers (keyed by ``id()``)."""

    data: Any
    text: str
    path: str
    positions: dict[int, int] = field(default_factory=dict)
    _line_starts: list[int] | None = None

    def line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def line_of(self, node: Any) -> int | None:
        offset = self.positions.get(id(node))
        return None if offset is None else self.line_col(offset)[0]

    def locate(self, loc: tuple[Any, ...] | list[Any], base: Any = None) -> tuple[int, int] | None:
        """Line and column of the deepest container reached by following ``loc`` from ``base``."""
        node = self.data if base is None else base
        best = self.positions.get(id(node))
        for key in loc:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                break
            offset = self.positions.get(id(node))
            if offset is not None:
                best = offset
        return None if best is None else self.line_col(best)

    def error(
        self,
        message: str,
        loc: tuple[Any, ...] | list[Any] = (),
        base: Any = None,
        prefix: str = "$",
    ) -> InputError:
        where = self.locate(loc, base)
        line, col = where if where else (None, None)
        return InputError(
            message, path=self.path, line=line, col=col, json_path=json_path(loc, prefix)
        )


def json_path(loc: tuple[Any, ...] | list[Any], prefix: str = "$") -> str:
    out = prefix
    for key in loc:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            text = str(key)
            out += f".{text}" if text.isidentifier() else f"[{json.dumps(text)}]"
    return out


class _NonFinite:
    """Stands in for NaN, Infinity or a number too large for a float (1e999) while parsing:
    JSON has no such numbers, strict parsers (jq) reject them, and a threshold of NaN passes
    every comparison. Found again after parsing, to say where it is."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _find(node: Any, loc: list[Any]) -> list[Any] | None:
    if isinstance(node, _NonFinite):
        return loc
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in items:
        found = _find(value, [*loc, key])
        if found is not None:
            return found
    return None


def parse_json(text: str, path: str) -> JsonDocument:
    positions: dict[int, int] = {}
    decoder = json.JSONDecoder()
    non_finite: list[_NonFinite] = []

    def parse_constant(literal: str) -> _NonFinite:
        non_finite.append(_NonFinite(literal))
        return non_finite[-1]

    def parse_float(literal: str) -> float | _NonFinite:
        value = float(literal)
        return value if math.isfinite(value) else parse_constant(literal)

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)
        positions[id(obj)] = s_and_end[1] - 1
        return obj, end

    def parse_array(s_and_end: tuple[str, int], scan_once: Any) -> tuple[Any, int]:
        arr, end = json.decoder.JSONArray(s_and_end, scan_once)
        positions[id(arr)] = s_and_end[1] - 1
        return arr, end

    decoder.parse_constant = parse_constant  # type: ignore[assignment]
    decoder.parse_float = parse_float  # type: ignore[assignment]
    decoder.parse_object = parse_object  # type: ignore[assignment]
    decoder.parse_array = parse_array  # type: ignore[assignment]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        data = decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}", path=path, line=exc.lineno, col=exc.colno
        ) from None
    except RecursionError:
        raise InputError("JSON is nested too deeply to be an eval set", path=path) from None
    doc = JsonDocument(data=data, text=text, path=path, positions=positions)
    if non_finite:
        loc = _find(data, []) or []
        bad = non_finite[0]
        if loc:
            node: Any = data
            for key in loc:
                node = node[key]
            bad = node
        raise doc.error(
            f"{bad.literal} is not a number JSON allows (no NaN, Infinity or overflowing "
            "exponents); write a finite number",
            loc,
        )
    return doc


def read_json_file(file: Path, display: str | None = None) -> JsonDocument:
    shown = display or str(file)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=shown) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "eval sets are UTF-8 JSON",
            path=shown,
        ) from None
    if not text.strip():
        raise InputError("empty file; expected a JSON eval set", path=shown)
    return parse_json(text, shown)
