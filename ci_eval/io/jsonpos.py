"""JSON parsing that remembers where objects and arrays start.

Positions let us report ``file:line:col`` for validation errors and remember the line where each
eval case starts. Loading needs only the shallow ones (the document, its members and theirs: an
eval case is at depth 2), so the top two levels are walked in Python, recording where each
container starts, and everything deeper is parsed by the C scanner. The position of a deeper
container is wanted only to place an error: then the text is parsed once more with the
standard library's pure-Python scanner, whose ``parse_object`` / ``parse_array`` hooks record
every container's offset, and the two parses are matched node for node. Whatever the fast
parse does not take as it is (invalid JSON, lone surrogates, deep nesting) goes the slow way
from the start, so its errors and results are the slow parser's own.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError
from ci_eval.io.jsonfast import (
    MAX_NESTING,
    IntTooLong,
    NonFinite,
    TooDeep,
    check_nesting,
    make_decoder,
    shallow_scanner,
)
from ci_eval.io.readfile import read_regular_file
from ci_eval.text import surrogates as text_util


@dataclass
class JsonDocument:
    """Parsed JSON plus the source offsets of its containers (keyed by ``id()``)."""

    data: Any
    text: str
    path: str
    positions: dict[int, int] = field(default_factory=dict)
    scrubbed: bool = False  # lone surrogates were replaced with U+FFFD
    _line_starts: list[int] | None = None
    # ``positions`` holds only the shallow containers (see the module's docstring): the others
    # are found by parsing again when one is asked for
    shallow: bool = False

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

    def offset_of(self, node: Any) -> int | None:
        """Where the container ``node`` of this document starts (None for anything else)."""
        offset = self.positions.get(id(node))
        if offset is None and self.shallow and isinstance(node, dict | list):
            self._complete_positions()
            offset = self.positions.get(id(node))
        return offset

    def _complete_positions(self) -> None:
        """Every container's position: the slow parser's, matched to ours node for node (the
        same text parsed the same way gives the same tree)."""
        self.shallow = False
        slow = _parse(self.text, self.path)
        stack: list[tuple[Any, Any]] = [(self.data, slow.data)]
        while stack:
            ours, theirs = stack.pop()
            offset = slow.positions.get(id(theirs))
            if offset is not None:
                self.positions[id(ours)] = offset
            if isinstance(ours, dict) and isinstance(theirs, dict):
                stack += [(v, theirs[k]) for k, v in ours.items() if k in theirs]
            elif isinstance(ours, list) and isinstance(theirs, list):
                stack += zip(ours, theirs, strict=False)

    def line_of(self, node: Any) -> int | None:
        offset = self.offset_of(node)
        return None if offset is None else self.line_col(offset)[0]

    def locate(self, loc: tuple[Any, ...] | list[Any], base: Any = None) -> tuple[int, int] | None:
        """Line and column of the deepest container reached by following ``loc`` from ``base``."""
        node = self.data if base is None else base
        best = self.offset_of(node)
        for key in loc:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                break
            offset = self.offset_of(node)
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


def _find(node: Any, loc: list[Any]) -> list[Any] | None:
    if isinstance(node, NonFinite):
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


def parse_json(text: str, path: str, positions_wanted: bool = True) -> JsonDocument:
    """Parse ``text``; lone surrogates in strings (keys too) are replaced by U+FFFD in place.

    With ``positions_wanted`` every container's position can be asked for (the shallow ones
    are recorded as the text is parsed, see the module's docstring); without (files whose
    errors name no line, such as recorded results) only the C scanner parses."""
    if positions_wanted and not text_util.has_surrogate_escapes(text):
        non_finite: list[NonFinite] = []
        decoder = make_decoder(non_finite)
        positions: dict[int, int] = {}
        try:
            decoder.scan_once = shallow_scanner(decoder, positions)  # type: ignore[attr-defined]
            data = decoder.decode(text)
        except (json.JSONDecodeError, RecursionError, IntTooLong, TooDeep):
            pass  # the slow parser says what is wrong, and where
        else:
            doc = JsonDocument(data=data, text=text, path=path, positions=positions, shallow=True)
            if non_finite:
                raise _non_finite_error(doc, non_finite)
            return doc
    return _parse(text, path, positions_wanted)


def _non_finite_error(doc: JsonDocument, non_finite: list[NonFinite]) -> InputError:
    loc = _find(doc.data, []) or []
    bad = non_finite[0]
    if loc:
        node: Any = doc.data
        for key in loc:
            node = node[key]
        bad = node
    return doc.error(
        f"{bad.literal} is not a number JSON allows (no NaN, Infinity or overflowing "
        "exponents); write a finite number",
        loc,
    )


def _parse(text: str, path: str, positions_wanted: bool = True) -> JsonDocument:
    """With ``positions_wanted`` (or lone surrogates to scrub) the pure-Python scanner, every
    container's position recorded, else the C scanner: their errors are the ones users see."""
    positions: dict[int, int] = {}
    scrubbing = text_util.has_surrogate_escapes(text)  # may be: escapes of valid pairs too
    replaced: list[bool] = []  # whether a lone surrogate was, once one is
    non_finite: list[NonFinite] = []
    decoder = make_decoder(non_finite)

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)
        if scrubbing and _scrub_in_place(obj):
            replaced.append(True)
        positions[id(obj)] = s_and_end[1] - 1
        return obj, end

    def parse_array(s_and_end: tuple[str, int], scan_once: Any) -> tuple[Any, int]:
        arr, end = json.decoder.JSONArray(s_and_end, scan_once)
        if scrubbing and _scrub_in_place(arr):
            replaced.append(True)
        positions[id(arr)] = s_and_end[1] - 1
        return arr, end

    if positions_wanted or scrubbing:
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
        raise _too_deep(text, path) from None
    except IntTooLong:
        digits = sys.get_int_max_str_digits()
        match = re.search(rf"\d{{{digits + 1},}}", text)
        line, col = (None, None)
        if match:
            line, col = JsonDocument(data=None, text=text, path=path).line_col(match.start())
        raise InputError(
            f"an integer literal with more than {digits} digits; no eval set needs one",
            path=path,
            line=line,
            col=col,
        ) from None
    # fewer brackets in its text than the limit: it cannot nest deeper (cheap: counted first)
    if isinstance(data, dict | list) and text.count("{") + text.count("[") > MAX_NESTING:
        try:  # deeper than any eval set, and than the results file could write back
            check_nesting(data, MAX_NESTING)
        except TooDeep:
            raise _too_deep(text, path) from None
    if isinstance(data, str) and scrubbing:
        scrubbed = text_util.scrub(data)
        if scrubbed is not data:
            data = scrubbed
            replaced.append(True)
    doc = JsonDocument(
        data=data, text=text, path=path, positions=positions, scrubbed=bool(replaced)
    )
    if non_finite:
        raise _non_finite_error(doc, non_finite)
    return doc


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}:,]')


def _too_deep(text: str, path: str) -> InputError:
    """Where nesting goes deepest (the parser's stack gave out there): line, column and path."""
    depth, deepest, at = 0, 0, 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, match.start()
        elif token in "]}":
            depth = max(0, depth - 1)
    chain = _chain(text, at)
    keys = [k if k is not None else "?" for _, k in chain]
    shown = json_path(keys[:8]) + ("…" if len(keys) > 8 else "")
    line, col = JsonDocument(data=None, text=text, path=path).line_col(at)
    return InputError(
        f"JSON nested {deepest} levels deep here, too deep to be an eval set",
        path=path,
        line=line,
        col=col,
        json_path=shown,
    )


def _chain(text: str, offset: int) -> list[list[Any]]:
    """The open containers at ``offset``, each as [is_object, current key or index]."""
    stack: list[list[Any]] = []
    last = ""
    for match in _TOKEN.finditer(text, 0, offset):
        token = match.group()
        if token[0] == '"':
            last = token[1:-1]
        elif token in "[{":
            stack.append([token == "{", None if token == "{" else 0])
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == ":" and stack and stack[-1][0]:
            stack[-1][1] = last
        elif token == "," and stack and not stack[-1][0]:
            stack[-1][1] += 1
    return stack


def _scrub_in_place(node: dict[str, Any] | list[Any]) -> bool:
    """Lone surrogates out of a container's own strings, keeping its identity (positions are
    keyed by id) and its key order; nested containers were scrubbed when they were parsed.
    Whether any was replaced (a pair escaped as two escapes, as in ``"\\ud83d\\ude00"``, is
    one character, not a lone surrogate)."""
    if isinstance(node, list):
        replaced = False
        for i, value in enumerate(node):
            if isinstance(value, str):
                node[i] = text_util.scrub(value)
                replaced = replaced or node[i] is not value
        return replaced
    items = [
        (text_util.scrub(k), text_util.scrub(v) if isinstance(v, str) else v)
        for k, v in node.items()
    ]
    if all(k is k2 and v is v2 for (k, v), (k2, v2) in zip(node.items(), items, strict=True)):
        return False
    node.clear()
    node.update(items)
    return True


def read_json_file(
    file: Path,
    display: str | None = None,
    positions_wanted: bool = True,
    limit: int | None = None,
) -> JsonDocument:
    """Read and parse a JSON file a user or a repository gave us, refusing what is not a regular
    file of sane size (a FIFO would block forever, ``/dev/zero`` would fill the memory)."""
    shown = display or str(file)
    return parse_json(read_json_text(file, shown, limit), shown, positions_wanted)


def read_json_text(file: Path, shown: str, limit: int | None = None) -> str:
    """The text of a JSON file as :func:`read_json_file` reads it (refusals included), not yet
    parsed."""
    raw = read_regular_file(file, shown, limit)
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
    return text
