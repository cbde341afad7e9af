"""Eval-set dialects: each recognises its files from content and loads them into the canonical
model. Adding a dialect is one module plus one line in ``DIALECTS``."""

from __future__ import annotations

from typing import Any, Protocol

from ci_eval.dialects._common import LoadContext
from ci_eval.dialects.adk import (
    AdkCamelDialect,
    AdkDialect,
    AdkLegacyEvalSetDialect,
    AdkLegacyTestDialect,
)
from ci_eval.dialects.adk_rs import AdkRsDialect
from ci_eval.dialects.trpc import TrpcDialect
from ci_eval.dialects.watsonx import WatsonxDialect
from ci_eval.jsonpos import JsonDocument
from ci_eval.model import EvalSet


class Dialect(Protocol):
    name: str
    label: str

    def sniff(self, data: Any) -> bool: ...

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet: ...


class Writer(Protocol):
    name: str

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        """The dialect's JSON for ``eval_set`` and what it could not represent."""
        ...


# order matters: the first whose sniff() accepts the document loads it
DIALECTS: list[Dialect] = [
    AdkDialect(),
    AdkRsDialect(),
    AdkCamelDialect(),
    TrpcDialect(),
    AdkLegacyTestDialect(),
    AdkLegacyEvalSetDialect(),
    WatsonxDialect(),
]

WRITERS: dict[str, Writer] = {"adk": AdkDialect(), "trpc": TrpcDialect()}


def sniff(data: Any) -> Dialect | None:
    return next((d for d in DIALECTS if d.sniff(data)), None)


__all__ = ["DIALECTS", "WRITERS", "Dialect", "LoadContext", "Writer", "sniff"]
