"""Pydantic validation of a JSON document's parts, its errors placed in the file: one
``InputError`` per problem with ``file:line:col`` and the JSON path, at most ``MAX_PROBLEMS``
and then a line saying how many more there are.
Used by the dialects and by the eval-config loader."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_snake

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.io.jsonpos import JsonDocument, json_path
from ci_eval.text.plural import plural

MAX_PROBLEMS = 20
M = TypeVar("M", bound=BaseModel)


UNKNOWN_KEY = ("extra_forbidden", "unexpected_keyword_argument")  # pydantic's: a key not known


def table_problem(
    exc: ValidationError,
    name: str,
    known: Sequence[str],
    required: dict[str, str],
    at_field: bool = False,
) -> tuple[str, str | None]:
    """The first problem of a TOML file of ``[[name]]`` tables in the file's words, and where
    (``name[0]``; ``name[0].field`` with ``at_field``): every unknown key of the first table
    with one at once, a missing key by ``required``'s sentence."""
    errors = exc.errors(include_url=False)
    loc = errors[0]["loc"]
    unknown = [e["loc"] for e in errors if e["type"] in UNKNOWN_KEY]
    if unknown:
        table = unknown[0][:-1]
        keys = ", ".join(sorted(str(at[-1]) for at in unknown if at[:-1] == table))
        if not table:
            return f"unknown key(s) {keys}; the file holds [[{name}]] entries", None
        return f"unknown key(s) {keys}; known: {', '.join(known)}", f"{name}[{table[1]}]"
    if len(loc) < 2:
        return f"{name} must be an array of tables ([[{name}]])", None
    where = f"{name}[{loc[1]}]"
    if len(loc) == 2:
        return "expected a table", where
    place = f"{where}.{loc[2]}" if at_field else where
    if errors[0]["type"] == "missing":
        return required[str(loc[2])], place
    return str(errors[0]["msg"]).removeprefix("Value error, "), place


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as ``where: what`` (``usage.input_tokens: …``)."""
    err = exc.errors()[0]
    return f"{'.'.join(str(k) for k in err['loc'])}: {err['msg']}"


def validation_failed(
    exc: ValidationError,
    doc: JsonDocument,
    base: Any = None,
    base_loc: Sequence[Any] = (),
    hint: Callable[[Any], str] | None = None,
    snake: bool = False,
) -> ValidationFailed:
    """One problem per pydantic error, placed in the file. ``snake``: name fields as ADK's
    snake_case even though pydantic reports the camelCase alias."""
    root = doc.data if base is None else base
    problems: list[InputError] = []
    seen: set[tuple[str, str]] = set()
    more = 0  # problems past MAX_PROBLEMS: counted, and the list says how many
    for err in exc.errors(include_url=False):
        loc = _clean_loc(err["loc"], root)
        if loc is None:
            continue
        if snake and err["type"] == "missing" and loc and isinstance(loc[-1], str):
            loc[-1] = to_snake(loc[-1])
            err = {**err, "loc": tuple(loc)}
        message = _message(err)
        if hint is not None:
            extra = hint(err)
            if extra:
                message = f"{message}; {extra}"
        where = json_path([*base_loc, *loc])
        if (where, message) in seen:
            continue
        seen.add((where, message))
        if len(problems) >= MAX_PROBLEMS:
            more += 1
            continue
        problem = doc.error(message, loc, base=base)
        problem.json_path = where
        problems.append(problem)
    if not problems:  # every error belonged to a union branch we chose not to show
        problems.append(doc.error(str(exc.errors()[0]["msg"]), base=base))
    if more:
        problems.append(MoreProblems(more, doc.path))
    return ValidationFailed(problems)


class MoreProblems(InputError):
    """The line after the problems shown: how many more the file has."""

    def __init__(self, count: int, path: str | None) -> None:
        super().__init__(f"… and {plural(count, 'more problem')}", path=path)
        self.count = count


_UNION_BRANCHES = {"IntermediateData": False, "InvocationEvents": True}


def _clean_loc(loc: Sequence[Any], root: Any) -> list[Any] | None:
    """Drop pydantic's union-member tags from ``loc``; None for errors of the branch not taken.

    ``intermediate_data`` is a union; for a file that does not say ``invocation_events`` the
    errors of that branch are noise (and vice versa).
    """
    clean: list[Any] = []
    node = root
    for key in loc:
        if isinstance(key, str) and key in _UNION_BRANCHES:
            has_events = isinstance(node, dict) and (
                "invocation_events" in node or "invocationEvents" in node
            )
            if has_events != _UNION_BRANCHES[key]:
                return None
            continue
        if isinstance(key, str) and "[" in key:
            continue
        clean.append(key)
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            node = None
    return clean


def _message(err: Any) -> str:
    kind = err["type"]
    if kind == "missing":
        return f"required field '{err['loc'][-1]}' is missing"
    if kind == "extra_forbidden":
        return f"unknown field '{err['loc'][-1]}' (ADK rejects unknown keys here)"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return msg


def validate(
    model: type[M],
    data: Any,
    doc: JsonDocument,
    base: Any = None,
    base_loc: Sequence[Any] = (),
    hint: Callable[[Any], str] | None = None,
    snake: bool = False,
) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_failed(
            exc, doc, base=base, base_loc=base_loc, hint=hint, snake=snake
        ) from None
