"""Eval-set dialects: each recognises its files from content and loads them into the canonical
model. Adding a dialect is one module (a class with ``name``, ``sniff`` and ``load``, and
``dump`` if it can be written too) plus one ``register`` call below."""

from __future__ import annotations

from typing import Any

from ci_eval.dialects.adk import AdkCamelDialect, AdkDialect
from ci_eval.dialects.adk_legacy import AdkLegacyEvalSetDialect, AdkLegacyTestDialect
from ci_eval.dialects.adk_rs import AdkRsDialect
from ci_eval.dialects.base import Dialect, LoadContext, Writer
from ci_eval.dialects.other import looks_like
from ci_eval.dialects.trpc import TrpcDialect
from ci_eval.dialects.watsonx import WatsonxDialect

# order matters: the first whose sniff() accepts the document loads it
DIALECTS: list[Dialect] = []
# ``ci-eval convert --to NAME``: the first registered dialect of each name that can dump
WRITERS: dict[str, Writer] = {}


def register(dialect: Dialect, first: bool = False) -> Dialect:
    """Add a dialect: after the others (``first``: before them, for a shape a built-in dialect
    would otherwise claim)."""
    if first:
        DIALECTS.insert(0, dialect)
    else:
        DIALECTS.append(dialect)
    if callable(getattr(dialect, "dump", None)) and (first or dialect.name not in WRITERS):
        WRITERS[dialect.name] = dialect  # type: ignore[assignment]
    return dialect


def sniff(data: Any) -> Dialect | None:
    return next((d for d in DIALECTS if d.sniff(data)), None)


def defaults_label(name: str, defaults: str) -> str:
    """Whose default metrics a set of dialect ``name`` takes without a sidecar, as ``validate``
    labels them: its tool's (``watsonx Orchestrate defaults``, ``adk-rs defaults``; a
    dialect naming no tool takes ADK's), or what the dialect says applies instead (trpc-agent-go
    has none). ``defaults`` is the set's defaults dialect (``watsonx-quick``: IBM's quick eval)."""
    dialect = next((d for d in DIALECTS if d.name == name), None)
    instead = getattr(dialect, "defaults", None)
    if isinstance(instead, str):
        return instead
    tool = getattr(dialect, "tool", None) or "ADK"
    return f"{tool} quick-eval defaults" if defaults == "watsonx-quick" else f"{tool} defaults"


register(AdkDialect())
register(AdkRsDialect())
register(AdkCamelDialect())
register(TrpcDialect())
register(AdkLegacyTestDialect())
register(AdkLegacyEvalSetDialect())
register(WatsonxDialect())

__all__ = [
    "DIALECTS",
    "WRITERS",
    "Dialect",
    "LoadContext",
    "Writer",
    "defaults_label",
    "looks_like",
    "register",
    "sniff",
]
