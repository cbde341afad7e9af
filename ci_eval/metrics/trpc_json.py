"""JSON as trpc-agent-go's JSON criterion reads it (``evaluation/metric/criterion/json/json.go``,
trpc-group/trpc-agent-go at 0e352fdd): the raw text of a final response parsed as Go's
``encoding/json`` parses it, and JSON Schema as santhosh-tekuri/jsonschema v6 (its go.mod pins
v6.0.2) checks it. Pure: text and values in, a value or :class:`JSONProblem` out.

Two parsers, because json.go has two:

- :func:`parse_value` is ``parseRawJSON``: a ``json.Decoder`` into ``any`` — numbers become
  float64 (one beyond float64's range is an error, as Go's is), and a second value after the
  first (``multiple json values``) or any other text after it is an error.
- :func:`parse_for_schema` is ``jsonschema.UnmarshalJSON`` (``valid`` and ``schema`` use it):
  numbers kept exact (Go's ``UseNumber``; here :class:`~decimal.Decimal`), so ``1e400`` is valid
  JSON there though ``parse_value`` refuses it; anything after the value is an error too.

Both refuse what Go refuses and Python's ``json`` would take (``NaN``, ``Infinity``), and read an
unpaired surrogate escape (``"\\ud800"``) as U+FFFD, as Go does.

Where the schema check may differ from trpc-agent-go's Go library (python-jsonschema is the
validator here):

- a ``$ref`` that resolves nowhere fails when validation reaches it; santhosh-tekuri fails the
  compile whatever the instance. Nothing is fetched or read for a ``$ref`` (only the drafts'
  meta-schemas resolve), where the Go library would read a ``file://`` URL;
- ``format`` is asserted for draft-07 and older (as the Go library does) with python-jsonschema's
  format checkers, whose set of known formats is not the Go library's; ``contentEncoding`` /
  ``contentMediaType`` are not asserted;
- a value nested deeper than Python's recursion limit is a :class:`~ci_eval.metrics.base.
  MetricFailure` of the caller's (Go parses up to 10,000 levels).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Go's float64 parse refuses what overflows; Python's float() gives inf
_MAX_INT_DIGITS = 4000  # below Python's int-from-text limit; longer overflows float64 anyway


class JSONProblem(Exception):
    """Why trpc-agent-go's JSON criterion could not read or validate a value (its error)."""


def _refuse_constant(name: str) -> Any:
    raise JSONProblem(f"invalid character {name[0]!r} looking for beginning of value")


def _go_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONProblem(f"cannot unmarshal number {text} into Go value of type float64")
    return value


def _go_int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:
        raise JSONProblem(f"cannot unmarshal number {text[:20]}… into Go value of type float64")
    value = int(text)
    try:
        float(value)
    except OverflowError:
        raise JSONProblem(
            f"cannot unmarshal number {text[:20]}… into Go value of type float64"
        ) from None
    return value


def _exact_int(text: str) -> int | Decimal:
    return int(text) if len(text) <= _MAX_INT_DIGITS else Decimal(text)


def _go_strings(value: Any) -> Any:
    """Go's decoder writes U+FFFD for an unpaired surrogate escape; Python keeps it."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_go_strings(v) for v in value]
    if isinstance(value, dict):
        return {_go_strings(k): _go_strings(v) for k, v in value.items()}
    return value


def _decode(text: str, parse_float: Any, parse_int: Any) -> Any:
    try:
        # json.loads skips only JSON's whitespace around the value, as Go's decoder does, and
        # refuses anything after it
        value = json.loads(
            text, parse_float=parse_float, parse_int=parse_int, parse_constant=_refuse_constant
        )
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise JSONProblem(_after_the_value(text, exc.pos)) from None
        raise JSONProblem(exc.msg) from None
    except ValueError as exc:  # a hook's refusal (JSONProblem is not a ValueError)
        raise JSONProblem(str(exc)) from None
    return _go_strings(value) if _LONE_SURROGATE.search(text) or "\\u" in text else value


def _after_the_value(text: str, pos: int) -> str:
    try:
        json.JSONDecoder().raw_decode(text, pos)
    except (json.JSONDecodeError, RecursionError):
        return f"text after the JSON value at character {pos}"
    return f"multiple json values (a second one at character {pos})"  # json.go's words


def parse_value(text: str) -> Any:
    """``parseRawJSON``: one JSON value, numbers as float64 (ints kept as ints where float64
    holds them: the criterion compares numbers as floats either way)."""
    return _decode(text, _go_float, _go_int)


def parse_for_schema(text: str) -> Any:
    """``jsonschema.UnmarshalJSON``: one JSON value, numbers exact."""
    return _decode(text, Decimal, _exact_int)


# --- JSON Schema ---------------------------------------------------------------------------

# the drafts santhosh-tekuri/jsonschema v6 knows, by their $schema (draft.go); others it cannot
# load (it fetches nothing by default), so a schema naming one does not compile
_DRAFTS = {
    "http://json-schema.org/draft-04/schema": "Draft4Validator",
    "http://json-schema.org/draft-06/schema": "Draft6Validator",
    "http://json-schema.org/draft-07/schema": "Draft7Validator",
    "https://json-schema.org/draft/2019-09/schema": "Draft201909Validator",
    "https://json-schema.org/draft/2020-12/schema": "Draft202012Validator",
}
_BEFORE_2019 = {"Draft4Validator", "Draft6Validator", "Draft7Validator"}


def exact_numbers(value: Any) -> Any:
    """An already-decoded value (a tool's arguments) with its floats as the decimals they were
    written as, for the schema check (Go's library compares numbers exactly)."""
    if isinstance(value, float) and math.isfinite(value):
        return Decimal(repr(value))
    if isinstance(value, list):
        return [exact_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: exact_numbers(v) for k, v in value.items()}
    return value


def plain(value: Any) -> Any:
    """Decimals back to ints and floats, for a reason to show."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _validator_class(schema: Any) -> Any:
    from jsonschema import validators

    name = "Draft202012Validator"  # compiler.DefaultDraft(jsonschema.Draft2020)
    if isinstance(schema, dict) and "$schema" in schema:
        given = schema["$schema"]
        key = given.rstrip("#") if isinstance(given, str) else None
        if key not in _DRAFTS:
            raise JSONProblem(f"compile json schema: unknown $schema {given!r}")
        name = _DRAFTS[key]
    base = getattr(validators, name)
    # Go's library reads 1.0 as an integer; the decimals here need saying so
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, v: (
                (isinstance(v, int) and not isinstance(v, bool))
                or (isinstance(v, Decimal) and v.is_finite() and v == v.to_integral_value())
                or (isinstance(v, float) and v.is_integer())
            ),
            "number": lambda _, v: isinstance(v, int | float | Decimal) and not isinstance(v, bool),
        }
    )
    return validators.extend(base, type_checker=checker), name


def compile_schema(schema: Any) -> Any:
    """A validator for ``schema`` as validateJSONSchema compiles it (Draft 2020-12 unless its
    ``$schema`` names another draft); a schema that does not compile is a :class:`JSONProblem`."""
    from jsonschema import exceptions
    from jsonschema_specifications import REGISTRY  # the meta-schemas, and nothing fetched

    if not isinstance(schema, dict | bool):
        raise JSONProblem(
            f"compile json schema: a schema is an object or a boolean, not {json.dumps(schema)}"
        )
    cls, name = _validator_class(schema)
    try:
        cls.check_schema(schema)  # as loaded: the meta-schemas' own type checks read floats
    except exceptions.SchemaError as exc:
        raise JSONProblem(f"compile json schema: {exc.message}") from None
    checker = cls.FORMAT_CHECKER if name in _BEFORE_2019 else None
    return cls(exact_numbers(schema), registry=REGISTRY, format_checker=checker)


def schema_violation(validator: Any, value: Any) -> tuple[list[Any], str, Any] | None:
    """Where ``value`` breaks the compiled schema (its path), the keyword it breaks, and the
    value there; None when it holds."""
    from jsonschema import exceptions
    from referencing.exceptions import Unresolvable

    try:
        error = exceptions.best_match(validator.iter_errors(value))
    except Unresolvable as exc:
        raise JSONProblem(f"compile json schema: {exc}") from None
    if error is None:
        return None
    how = f"{error.validator} {json.dumps(plain(error.validator_value), ensure_ascii=False)}"
    return list(error.absolute_path), how, error.instance
