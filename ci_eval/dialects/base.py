"""What a dialect is (``Dialect``, ``Writer``) and what the loaders share: the load context,
validation errors placed in the file, case sources, unique case ids. ``criteria`` uses the
validation helpers for eval configs too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_snake

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.io.jsonpos import JsonDocument, json_path
from ci_eval.model import EvalSet, SourceRef

MAX_PROBLEMS = 20
M = TypeVar("M", bound=BaseModel)


@dataclass
class LoadContext:
    """What a loader knows besides the JSON: the repo-relative path and where to put warnings."""

    rel_path: str
    warnings: list[str] = field(default_factory=list)

    @property
    def stem(self) -> str:
        name = self.rel_path.rsplit("/", 1)[-1]
        for suffix in (".evalset.json", ".test.json", ".json"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name

    @property
    def path_without_json(self) -> str:
        return self.rel_path[:-5] if self.rel_path.endswith(".json") else self.rel_path


class Dialect(Protocol):
    """Recognises its files from content (``sniff``) and loads them into the canonical model."""

    name: str

    def sniff(self, data: Any) -> bool: ...

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet: ...


class Writer(Protocol):
    """A dialect that can also write an eval set (``ci-eval convert --to NAME``)."""

    name: str

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        """The dialect's JSON for ``eval_set`` and what it could not represent."""
        ...


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
    seen: set[str] = set()
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
        problem = doc.error(message, loc, base=base)
        problem.json_path = json_path([*base_loc, *loc])
        key = str(problem)
        if key not in seen:
            seen.add(key)
            problems.append(problem)
        if len(problems) >= MAX_PROBLEMS:
            break
    if not problems:  # every error belonged to a union branch we chose not to show
        problems.append(doc.error(str(exc.errors()[0]["msg"]), base=base))
    return ValidationFailed(problems)


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


def attach_sources(
    eval_set: EvalSet, raw_cases: Sequence[Any], doc: JsonDocument, rel_path: str
) -> None:
    for case, raw in zip(eval_set.eval_cases, raw_cases, strict=True):
        case._source = SourceRef(rel_path, doc.line_of(raw))


def check_unique_ids(
    eval_set: EvalSet, doc: JsonDocument, raw_cases: Sequence[Any], key: str, prefix: Sequence[Any]
) -> None:
    """Results and baselines key on case ids, so a set may not repeat one."""
    seen: dict[str, int] = {}
    problems: list[InputError] = []
    for i, case in enumerate(eval_set.eval_cases):
        if case.eval_id in seen:
            first = seen[case.eval_id]
            first_line = doc.line_of(raw_cases[first])
            problem = doc.error(
                f"duplicate case id '{case.eval_id}' (first at line {first_line}); case ids "
                "must be unique within an eval set",
                [*prefix, i, key],
            )
            problems.append(problem)
        else:
            seen[case.eval_id] = i
    if problems:
        raise ValidationFailed(problems)
