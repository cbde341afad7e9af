"""``.ci-eval/accept.toml``: how a pull request accepts the score changes it makes on purpose.

The file is committed in the pull request, so the acceptance is reviewed with the code::

    [[accept]]
    case = "support:refund_policy"        # SET_ID:CASE_ID; fnmatch patterns; "*" also
    metrics = ["response_match_score"]    #   accepts a suite-wide drop. metrics: optional
    reason = "new refund wording (#123)"  # required: said wherever the regression is shown

A matched regression is shown as accepted and does not block. Once main's history has the new
scores the entry matches nothing and ci-eval says to remove it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, TypeAdapter, ValidationError

from ci_eval.errors import InputError
from ci_eval.io import tomltext
from ci_eval.io.validation import table_problem
from ci_eval.model.comparison import Acceptance

DEFAULT_PATH = ".ci-eval/accept.toml"
KNOWN = ("case", "metrics", "reason")


def _said(message: str) -> Any:
    """A required text, stripped: refused with ``message`` when missing, blank or not text."""

    def check(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(message)
        return value

    return BeforeValidator(check)


def _names(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
        raise ValueError("metrics must be a list of names")
    return value


@dataclass(slots=True)
class Entry:
    """One ``[[accept]]`` table, as the file says it."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    case: Annotated[str, _said('case is required: "SET_ID:CASE_ID" (or a pattern)')]
    reason: Annotated[str, _said("reason is required: say why the new scores are right")]
    metrics: Annotated[list[str], BeforeValidator(_names)] = field(default_factory=list)

    def acceptance(self) -> Acceptance:
        return Acceptance(self.case.strip(), " ".join(self.reason.split()), list(self.metrics))


@dataclass(slots=True)
class AcceptFile:
    __pydantic_config__ = ConfigDict(extra="forbid")

    accept: list[Entry] = field(default_factory=list)


def _problem(exc: ValidationError) -> tuple[str, str | None]:
    """The first problem in the file's words, and where (``accept[0]``)."""
    return table_problem(exc, "accept", KNOWN, _REQUIRED)


_REQUIRED = {
    "case": 'case is required: "SET_ID:CASE_ID" (or a pattern)',
    "reason": "reason is required: say why the new scores are right",
}


def read_entries(text: str, where: str) -> AcceptFile:
    """The file's entries, checked: a bad one refused in one line with its place."""
    return entries_of(tomltext.parse(text, where), where)


def entries_of(data: Any, where: str) -> AcceptFile:
    """The parsed file's entries, checked (see :func:`read_entries`)."""
    try:
        return TypeAdapter(AcceptFile).validate_python(data)
    except ValidationError as exc:
        message, place = _problem(exc)
        raise InputError(message, path=where, json_path=place) from None


def load(path: Path, required: bool = False) -> list[Acceptance]:
    if not path.is_file():
        if required:
            raise InputError("no such acceptance file", path=str(path))
        return []
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(path)) from None
    return [entry.acceptance() for entry in read_entries(text, str(path)).accept]


def _entries(text: str) -> set[tuple[str, tuple[str, ...], str]]:
    """The entries as the file says them, for what a pull request changed; an unreadable
    copy has none (its own check says why)."""
    try:
        found = read_entries(text, "")
    except InputError:
        return set()
    return {(e.case, tuple(e.metrics), e.reason) for e in found.accept}


def changes(path: Path, base_text: str | None) -> list[str]:
    """The entries a pull request added to (+) or removed from (-) the acceptance file, against
    the merge base's copy (``base_text``; "" when it has none): it is the PR's to change, and
    the verdict says what it changed."""
    if base_text is None:
        return []
    mine = _entries(path.read_text("utf-8")) if path.is_file() else set()
    theirs = _entries(base_text)
    said = []
    for sign, entries in (("+", mine - theirs), ("-", theirs - mine)):
        for case, metrics, reason in sorted(entries):
            which = f" ({', '.join(metrics)})" if metrics else ""
            said.append(f"{path.as_posix()}: {sign} {case}{which}: {reason}")
    return said
