"""Load discovered files: eval sets in any dialect, their metric sidecars, and what to skip."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import criteria
from ci_eval.criteria import MetricConfig
from ci_eval.dialects import LoadContext, sniff
from ci_eval.dialects.adk import reject_empty_list
from ci_eval.dialects.other import looks_like
from ci_eval.discover import Candidate, display_path, safe_resolve
from ci_eval.errors import InputError, NotAnEvalSet
from ci_eval.jsonpos import JsonDocument, read_json_file
from ci_eval.model import EvalSet


@dataclass
class LoadedEvalSet:
    path: str
    dialect: str
    eval_set: EvalSet
    metrics: MetricConfig
    warnings: list[str] = field(default_factory=list)


@dataclass
class LoadedSidecar:
    path: str
    kind: str  # "adk-config" or "trpc-metrics"
    config: MetricConfig


@dataclass
class Skipped:
    path: str
    reason: str


@dataclass
class Failed:
    path: str
    error: InputError


Outcome = LoadedEvalSet | LoadedSidecar | Skipped | Failed


def _describe_unknown(data: object) -> str:
    if isinstance(data, dict):
        keys = ", ".join(sorted(map(str, data))[:6]) or "none"
        return f"unrecognised JSON (an object with keys: {keys})"
    if isinstance(data, list):
        return "unrecognised JSON (a list that is neither legacy ADK turns nor trpc metrics)"
    return f"unrecognised JSON (a {type(data).__name__})"


def parse_document(
    doc: JsonDocument,
    rel: str,
) -> tuple[str, EvalSet, list[str]] | LoadedSidecar:
    """Recognise and load one parsed document. Raises InputError / NotAnEvalSet."""
    data = doc.data
    if criteria.is_adk_config(data):
        return LoadedSidecar(rel, "adk-config", criteria.load_adk_config(doc, rel))
    if criteria.is_trpc_metrics(data):
        return LoadedSidecar(rel, "trpc-metrics", criteria.load_trpc_metrics(doc, rel))
    other = looks_like(data)
    if other:
        raise NotAnEvalSet(f"not an eval set (looks like {other})", path=rel, json_path="$")
    if data == []:
        raise reject_empty_list(doc)
    dialect = sniff(data)
    if dialect is None:
        raise NotAnEvalSet(f"not an eval set ({_describe_unknown(data)})", path=rel, json_path="$")
    ctx = LoadContext(rel)
    return dialect.name, dialect.load(doc, ctx), ctx.warnings


class SidecarFinder:
    """Finds and caches the metric configuration that applies to an eval set.

    In order: trpc's ``<evalSetId>.metrics.json`` beside the file (or ``<file stem>.metrics.json``,
    or the one metrics file whose stem prefixes the set id, as trpc's promptiter examples share
    one), then ADK's ``test_config.json`` / ``eval_config.json`` in the file's folder or the
    nearest parent up to the searched directory, else ADK's defaults.
    """

    def __init__(self) -> None:
        self._cache: dict[Path, MetricConfig] = {}

    def _load(self, path: Path, trpc: bool) -> MetricConfig:
        key = safe_resolve(path)
        if key not in self._cache:
            rel = display_path(path)
            doc = read_json_file(path, rel)
            ok = criteria.is_trpc_metrics(doc.data) if trpc else criteria.is_adk_config(doc.data)
            if not ok:
                kind = "a trpc-agent-go metrics list" if trpc else "an ADK eval config"
                raise InputError(
                    f"expected {kind} here (it sits where one is looked for)",
                    path=rel,
                    json_path="$",
                )
            self._cache[key] = (
                criteria.load_trpc_metrics(doc, rel) if trpc else criteria.load_adk_config(doc, rel)
            )
        return self._cache[key]

    def find(
        self,
        file: Path,
        eval_set_id: str,
        root: Path,
        dialect: str = "adk",
    ) -> MetricConfig:
        folder = file.parent
        suffix = criteria.TRPC_METRICS_SUFFIX
        stem = file.name.split(".")[0]
        for name in (f"{eval_set_id}{suffix}", f"{stem}{suffix}"):
            if "/" not in name and _present(folder / name):
                return self._load(folder / name, trpc=True)
        shared = [
            p for p in folder.glob(f"*{suffix}") if eval_set_id.startswith(p.name[: -len(suffix)])
        ]
        if len(shared) == 1:
            return self._load(shared[0], trpc=True)
        stop = safe_resolve(root)
        current = safe_resolve(folder)
        while True:
            for name in criteria.ADK_CONFIG_NAMES:
                if _present(current / name):
                    return self._load(current / name, trpc=False)
            if current == stop or current.parent == current or stop not in current.parents:
                break
            current = current.parent
        return criteria.default_config(dialect)


def _present(path: Path) -> bool:
    """Whether a sidecar is there: anything but a directory counts (a FIFO or a symlink loop
    named like a sidecar is refused with its reason, not silently passed over for defaults). A
    name the system cannot hold (a set id over 255 bytes, a NUL) is simply not there."""
    try:
        return os.path.lexists(path) and not path.is_dir()
    except (OSError, ValueError):
        return False


SCRUBBED_NOTE = "lone surrogates (such as \\ud83d) in the file were replaced with U+FFFD"


def load_candidate(candidate: Candidate, sidecars: SidecarFinder) -> Outcome:
    rel = candidate.rel
    doc: JsonDocument | None = None
    try:
        doc = read_json_file(candidate.path, rel)
        parsed = parse_document(doc, rel)
        if isinstance(parsed, LoadedSidecar):
            return parsed
        dialect, eval_set, warnings = parsed
        metrics = sidecars.find(candidate.path, eval_set.eval_set_id, candidate.root, dialect)
        if doc.scrubbed:
            warnings = [*warnings, SCRUBBED_NOTE]
        return LoadedEvalSet(rel, dialect, eval_set, metrics, warnings)
    except NotAnEvalSet as exc:
        if candidate.claimed:
            return Failed(rel, _noted(exc, doc))
        return Skipped(rel, exc.message)
    except InputError as exc:
        return Failed(rel, _noted(exc, doc))
    except (OSError, ValueError, RuntimeError, RecursionError) as exc:
        # a hostile file must not hide the other files' problems behind one internal error
        return Failed(
            rel, InputError(f"cannot load this file ({type(exc).__name__}: {exc})", path=rel)
        )


def _noted(error: InputError, doc: JsonDocument | None) -> InputError:
    """Say that lone surrogates were replaced: two ids that differ only there now collide."""
    if doc is not None and doc.scrubbed:
        problems = getattr(error, "problems", None) or [error]
        for problem in problems:
            problem.message += f" ({SCRUBBED_NOTE})"
        error.message = problems[0].message
    return error


def load_all(candidates: list[Candidate]) -> list[Outcome]:
    sidecars = SidecarFinder()
    return [load_candidate(c, sidecars) for c in candidates]
