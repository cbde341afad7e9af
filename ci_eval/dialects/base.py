"""What a dialect is (``Dialect``, ``Writer``) and what the loaders share: the load context, case
sources, unique case ids. Validation errors placed in the file are ``ci_eval.io.validation``'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.io.jsonpos import JsonDocument
from ci_eval.model import EvalSet, SourceRef


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
    # Optional: ``tool``, the name of the tool whose files these are ("trpc-agent-go"), and
    # ``defaults``, what applies without a sidecar where it is not that tool's own defaults;
    # see ``defaults_label``.

    def sniff(self, data: Any) -> bool: ...

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet: ...

    # Optional, for the first dialect: ``load_streamed(text, ctx)`` reads the set as the text is
    # parsed and returns (its top level, the set), or None for the usual way; the top level is
    # what ``sniff`` gets, so that the file goes to this dialect only if sniff says so.


class Writer(Protocol):
    """A dialect that can also write an eval set (``ci-eval convert --to NAME``)."""

    name: str

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        """The dialect's JSON for ``eval_set`` and what it could not represent."""
        ...


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
