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
import contextlib
import errno
import gc
import json
import json.decoder
import json.scanner
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval import text as text_util
from ci_eval.errors import InputError


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


MAX_FILE_MB_ENV = "CI_EVAL_MAX_FILE_MB"
DEFAULT_MAX_FILE_MB = 50.0


class _IntTooLong(Exception):
    pass


def max_file_bytes() -> int:
    """The size limit for any JSON file ci-eval reads: 50 MB, or ``CI_EVAL_MAX_FILE_MB``."""
    raw = os.environ.get(MAX_FILE_MB_ENV)
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0 < value < float("inf"):
            raise InputError(f"{MAX_FILE_MB_ENV}={raw!r}: give the limit in MB, a positive number")
        return int(value * 1_000_000)
    return int(DEFAULT_MAX_FILE_MB * 1_000_000)


#: Results files (and the baseline) are ci-eval's own output and grow with the suite: a
#: 20,000-case results file is about 130 MB. They get this many times the eval-set limit.
RESULTS_LIMIT_FACTOR = 20


def max_results_bytes() -> int:
    """The size limit for results files and the baseline: 20 × :func:`max_file_bytes`."""
    return max_file_bytes() * RESULTS_LIMIT_FACTOR


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off while a large acyclic tree is built (a parsed file, the models
    validated from it): every few thousand allocations it would walk all that was built so far,
    which at 20,000 cases is most of the time spent loading. Back on (if it was) afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_json(text: str, path: str, positions_wanted: bool = True) -> JsonDocument:
    """Parse ``text``; lone surrogates in strings (keys too) are replaced by U+FFFD in place.

    With ``positions_wanted`` every container's position can be asked for (the shallow ones
    are recorded as the text is parsed, see the module's docstring); without (files whose
    errors name no line, such as recorded results) only the C scanner parses."""
    if positions_wanted and not text_util.has_surrogate_escapes(text):
        non_finite: list[_NonFinite] = []
        decoder = _decoder(non_finite)
        positions: dict[int, int] = {}
        try:
            decoder.scan_once = _shallow_scanner(decoder, positions)  # type: ignore[attr-defined]
            data = decoder.decode(text)
        except (json.JSONDecodeError, RecursionError, _IntTooLong, _TooDeep):
            pass  # the slow parser says what is wrong, and where
        else:
            doc = JsonDocument(data=data, text=text, path=path, positions=positions, shallow=True)
            if non_finite:
                raise _non_finite_error(doc, non_finite)
            return doc
    return _parse(text, path, positions_wanted)


def _decoder(non_finite: list[_NonFinite]) -> json.JSONDecoder:
    def parse_constant(literal: str) -> _NonFinite:
        non_finite.append(_NonFinite(literal))
        return non_finite[-1]

    def parse_float(literal: str) -> float | _NonFinite:
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


class _TooDeep(Exception):
    pass


def _shallow_scanner(decoder: json.JSONDecoder, positions: dict[int, int]) -> Any:
    """A ``scan_once`` for ``decoder`` that records where each container down to
    :data:`SHALLOW_DEPTH` starts, and hands each value below to the C scanner."""
    c_scan = json.scanner.c_make_scanner
    if c_scan is None:  # an interpreter without the C accelerator
        raise _TooDeep
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
                    _check_nesting(value, _MAX_FAST_NESTING - depth)
            return value, end

        return scan_once

    return at(0)


def _check_nesting(root: Any, limit: int) -> None:
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise _TooDeep
        values = node.values() if isinstance(node, dict) else node
        stack += [(v, depth + 1) for v in values if isinstance(v, dict | list)]


def _non_finite_error(doc: JsonDocument, non_finite: list[_NonFinite]) -> InputError:
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
    scrubbing = text_util.has_surrogate_escapes(text)
    non_finite: list[_NonFinite] = []
    decoder = _decoder(non_finite)

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)
        if scrubbing:
            _scrub_in_place(obj)
        positions[id(obj)] = s_and_end[1] - 1
        return obj, end

    def parse_array(s_and_end: tuple[str, int], scan_once: Any) -> tuple[Any, int]:
        arr, end = json.decoder.JSONArray(s_and_end, scan_once)
        if scrubbing:
            _scrub_in_place(arr)
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
    except _IntTooLong:
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
    if isinstance(data, str) and scrubbing:
        data = text_util.scrub(data)
    doc = JsonDocument(data=data, text=text, path=path, positions=positions, scrubbed=scrubbing)
    if non_finite:
        raise _non_finite_error(doc, non_finite)
    return doc


class NotStreamable(Exception):
    """:func:`parse_streaming` could not take the text as it is: parse it the usual way."""


def parse_streaming(text: str, members: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """``text``, a JSON object, parsed as :func:`parse_json` without positions would, except
    that each item of the top-level arrays named in ``members`` is handed to that member's
    function as soon as it is parsed and its return value kept in its place: the items of a
    large array are never all in memory as JSON trees, and the memory of each is reused for
    the next. Anything else (invalid JSON, another top level, lone surrogates, numbers JSON
    does not allow, a function's exception) raises :class:`NotStreamable`, and the caller
    reads the file the usual way, which says what is wrong."""
    if text_util.has_surrogate_escapes(text):
        raise NotStreamable
    non_finite: list[_NonFinite] = []
    decoder = _decoder(non_finite)
    fast = json.scanner.make_scanner(decoder)
    space = json.decoder.WHITESPACE.match
    scanstring = json.decoder.scanstring

    def expect(char: str, idx: int) -> int:
        if text[idx : idx + 1] != char:
            raise NotStreamable
        return space(text, idx + 1).end()

    def array(idx: int, item: Callable[[Any], Any]) -> tuple[list[Any], int]:
        out: list[Any] = []
        idx = expect("[", idx)
        if text[idx : idx + 1] == "]":
            return out, idx + 1
        while True:
            value, idx = fast(text, idx)
            out.append(item(value))
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
                    obj[key], idx = fast(text, idx)
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


def _parse_int(digits: str) -> int:
    try:
        return int(digits)
    except ValueError:  # over sys.get_int_max_str_digits(): a denial-of-service guard
        raise _IntTooLong from None


def _scrub_in_place(node: dict[str, Any] | list[Any]) -> None:
    """Lone surrogates out of a container's own strings, keeping its identity (positions are
    keyed by id) and its key order; nested containers were scrubbed when they were parsed."""
    if isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, str):
                node[i] = text_util.scrub(value)
        return
    items = [
        (text_util.scrub(k), text_util.scrub(v) if isinstance(v, str) else v)
        for k, v in node.items()
    ]
    node.clear()
    node.update(items)


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


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink loop (or too many levels of symlinks)"
    if exc.errno == errno.ENAMETOOLONG:
        return "the file name is too long for this system"
    if exc.errno == errno.ENOENT:
        return "no such file (a dangling symlink?)"
    return exc.strerror or str(exc)


def read_regular_file(file: Path, shown: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (default :func:`max_file_bytes`);
    anything else is an InputError naming the file. Never blocks on a FIFO or a device."""
    limit = max_file_bytes() if limit is None else limit
    try:
        before = os.stat(file)
    except OSError as exc:
        raise InputError(f"cannot read file: {_os_reason(exc)}", path=shown) from None
    except ValueError:  # an embedded NUL
        raise InputError("cannot read file: the name holds a NUL byte", path=shown) from None
    if not stat.S_ISREG(before.st_mode):
        raise InputError(
            f"{_kind(before.st_mode)}, not a regular file; ci-eval reads only regular files",
            path=shown,
        )
    too_big = InputError(
        f"the file is over the size limit of {limit / 1e6:g} MB; raise it with "
        f"{MAX_FILE_MB_ENV} (in MB; results files and the baseline get "
        f"{RESULTS_LIMIT_FACTOR}×) if this file really is meant to be read",
        path=shown,
    )
    if before.st_size > limit:
        raise too_big
    try:
        # O_NONBLOCK: if the file was swapped for a FIFO since the stat, open must not hang
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read file: {_os_reason(exc)}", path=shown) from None
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):
            raise InputError(
                f"{_kind(after.st_mode)}, not a regular file; ci-eval reads only regular files",
                path=shown,
            )
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > limit:  # it grew after the stat
                raise too_big
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read file: {_os_reason(exc)}", path=shown) from None
    finally:
        os.close(fd)
