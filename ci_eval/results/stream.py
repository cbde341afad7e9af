"""The fast reader of a results file: case by case, each parsed (pydantic-core for a case on a
line of its own, as ci-eval writes it; the C scanner otherwise), checked and converted by the
results model (:mod:`ci_eval.model.results_file`: the document, each set and each case apart)
before the next. It vouches only for what it reads exactly as the careful reader would;
anything else, an earlier schema among it, it leaves to that reader (None)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pydantic_core

from ci_eval.model.results import CaseRecord, RunResults, SetRecord
from ci_eval.model.results_file import AS_IS, Invalid, case_from, results_head, set_head


class _Careful(Exception):
    """The fast reader cannot vouch for this file: the careful one reads it."""


def _refuse(_: str) -> Any:
    raise _Careful


# What the fast reader leaves to the careful one: a byte-order mark, and escapes that decode
# to a lone surrogate. NaN and Infinity are refused as the scanner meets them, an integer over
# the digit limit fails to parse, and a number that overflows to infinity is looked for in
# what is kept of each case (:func:`_finite_case`).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def needs_care(raw: bytes) -> bool:
    return raw.startswith(b"\xef\xbb\xbf") or _SURROGATE_ESCAPE.search(raw) is not None


def _finite(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return value - value == 0.0  # not inf, not NaN
    if kind is dict:
        return all(map(_finite, value.values()))
    if kind is list:
        return all(map(_finite, value))
    return True


def _finite_case(case: CaseRecord) -> bool:
    """No infinity in what the results model keeps of a case beyond the checked fields (the
    schema checks those): its free-form data, and its invocations' text."""
    if not (_finite(case.extensions) and _finite(case.rubrics) and _finite(case.scenario)):
        return False
    for run in case.runs:
        if not (_finite(run.simulation) and all(_finite(m.details) for m in run.metrics)):
            return False
        for i in run.invocations:
            if "Infinity" in i.stored_expected or "Infinity" in (i.stored_actual or ""):
                return False  # or the word in a text: then the careful reader decides
    return True


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def read_cases(
    text: str, keep: Callable[[CaseRecord], CaseRecord] | None = None
) -> RunResults | None:
    """The results in ``text``, read case by case; None if the careful reader must read it.
    ``keep`` sees each case once it is read and checked (``ci_eval.results.spill.PastLimit``)."""
    if keep is None:
        keep = _as_it_is

    scan_once = json.JSONDecoder(parse_constant=_refuse).scan_once  # the C scanner

    def scan(text: str, at: int) -> tuple[Any, int]:
        try:
            return scan_once(text, at)
        except StopIteration:  # no JSON value here (walk ends on StopIteration)
            raise _Careful from None

    skip = _WHITESPACE.match
    find = text.find

    by_line = [True]  # until a case is not a line of its own

    def scan_line(at: int) -> tuple[Any, int]:
        """The value at ``at``: a case on a line of its own, as ci-eval writes it, parsed by
        pydantic-core (faster than the C scanner, and repeated strings made once); in any
        other layout, by the scanner."""
        if by_line[0]:
            end = find("\n", at)
            end = len(text) if end < 0 else end
            while end > at and text[end - 1] in " \t\r":
                end -= 1
            if end > at and text[end - 1] == ",":
                end -= 1
            try:
                return pydantic_core.from_json(text[at:end], allow_inf_nan=False), end
            except ValueError:
                by_line[0] = False
        return scan(text, at)

    scanstring = json.decoder.scanstring

    def members(at: int) -> Iterator[tuple[str, int]]:
        """An object's keys from ``text[at] == "{"``, each with where its value starts; the
        caller reads the value and sends back where it ended."""
        at = skip(text, at + 1).end()
        if text[at] == "}":
            return at + 1
        while True:
            if text[at] != '"':
                raise _Careful
            key, at = scanstring(text, at + 1)
            at = skip(text, at).end()
            if text[at] != ":":
                raise _Careful
            at = yield key, skip(text, at + 1).end()
            at = skip(text, at).end()
            if text[at] == "}":
                return at + 1
            if text[at] != ",":
                raise _Careful
            at = skip(text, at + 1).end()

    def items(at: int) -> Iterator[int]:
        """An array's items from ``text[at] == "["``, as :func:`members`."""
        at = skip(text, at + 1).end()
        if text[at] == "]":
            return at + 1
        while True:
            at = yield at
            at = skip(text, at).end()
            if text[at] == "]":
                return at + 1
            if text[at] != ",":
                raise _Careful
            at = skip(text, at + 1).end()

    def walk(steps: Generator[Any, int, int], read: Callable[[Any], int]) -> int:
        """Drive a :func:`members` or :func:`items` walk; ``read`` reads each value."""
        try:
            step = next(steps)
            while True:
                step = steps.send(read(step))
        except StopIteration as end:
            return end.value

    def read_set(start: int, sets: list[SetRecord]) -> int:
        data: dict[str, Any] = {}
        cases: list[CaseRecord | dict[str, Any]] = []

        def read_case(at: int) -> int:
            case, end = scan_line(at)
            if "file" in data and type(data["file"]) is str:  # converted at once, data dropped
                cases.append(keep(_case(case, data["file"])))
            else:  # the set's file comes after its cases
                cases.append(case)
            return end

        def member(step: tuple[str, int]) -> int:
            key, at = step
            if key in data:  # a repeated key: the last one counts, for what came before too
                raise _Careful
            if key == "cases" and text[at] == "[":
                data[key] = []
                return walk(items(at), read_case)
            data[key], end = scan(text, at)
            return end

        end = walk(members(start), member)
        if type(data.get("cases")) is not list or not _finite(data):
            raise _Careful
        try:
            record = set_head(data, 0)
        except Invalid:
            raise _Careful from None
        for index, case in enumerate(cases):
            if type(case) is not CaseRecord:
                cases[index] = keep(_case(case, record.file))
        record.cases = cases  # type: ignore[assignment]
        sets.append(record)
        return end

    try:
        at = skip(text, 0).end()
        if text[at] != "{":
            return None
        data: dict[str, Any] = {}
        sets: list[SetRecord] = []

        def member(step: tuple[str, int]) -> int:
            key, at = step
            if key in data:
                raise _Careful
            if key == "sets" and text[at] == "[":
                data[key] = []
                return walk(
                    items(at), lambda at: read_set(at, sets) if text[at] == "{" else _refuse("")
                )
            data[key], end = scan(text, at)
            return end

        end = walk(members(at), member)
        if skip(text, end).end() != len(text):
            return None
        if data.get("schema_version") not in AS_IS or type(data.get("sets")) is not list:
            return None
        if not _finite(data):
            return None
        results = results_head(data)
        results.sets = sets
        return results
    except (
        _Careful,
        Invalid,
        StopIteration,
        IndexError,
        ValueError,
        KeyError,
        TypeError,
        RecursionError,
    ):
        return None


def _case(data: Any, file: str) -> CaseRecord:
    """A case's data, checked and converted; _Careful for anything the careful reader must
    see (an invalid value, to name it; an infinity in its free-form data)."""
    try:
        record = case_from(data, file, (0, 0))
    except Invalid:
        raise _Careful from None
    if not _finite_case(record):
        raise _Careful
    return record


def _as_it_is(case: CaseRecord) -> CaseRecord:
    return case
