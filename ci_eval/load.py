"""Load discovered files: eval sets in any dialect, their metric sidecars, and what to skip."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ci_eval import criteria
from ci_eval.criteria import MetricConfig
from ci_eval.dialects import LoadContext, sniff
from ci_eval.dialects.adk import reject_empty_list
from ci_eval.dialects.other import looks_like
from ci_eval.discover import Candidate, display_path
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
        raise NotAnEvalSet(f"not an eval set (looks like {other})", path=rel)
    if data == []:
        raise reject_empty_list(doc)
    dialect = sniff(data)
    if dialect is None:
        raise NotAnEvalSet(f"not an eval set ({_describe_unknown(data)})", path=rel)
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
        key = path.resolve()
        if key not in self._cache:
            rel = display_path(path)
            doc = read_json_file(path, rel)
            ok = criteria.is_trpc_metrics(doc.data) if trpc else criteria.is_adk_config(doc.data)
            if not ok:
                kind = "a trpc-agent-go metrics list" if trpc else "an ADK eval config"
                raise InputError(
                    f"expected {kind} here (it sits where one is looked for)", path=rel
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
            if "/" not in name and (folder / name).is_file():
                return self._load(folder / name, trpc=True)
        shared = [
            p for p in folder.glob(f"*{suffix}") if eval_set_id.startswith(p.name[: -len(suffix)])
        ]
        if len(shared) == 1:
            return self._load(shared[0], trpc=True)
        stop = root.resolve()
        current = folder.resolve()
        while True:
            for name in criteria.ADK_CONFIG_NAMES:
                if (current / name).is_file():
                    return self._load(current / name, trpc=False)
            if current == stop or current.parent == current or stop not in current.parents:
                break
            current = current.parent
        return criteria.default_config(dialect)


def load_candidate(candidate: Candidate, sidecars: SidecarFinder) -> Outcome:
    rel = candidate.rel
    try:
        doc = read_json_file(candidate.path, rel)
        parsed = parse_document(doc, rel)
        if isinstance(parsed, LoadedSidecar):
            return parsed
        dialect, eval_set, warnings = parsed
        metrics = sidecars.find(candidate.path, eval_set.eval_set_id, candidate.root, dialect)
        return LoadedEvalSet(rel, dialect, eval_set, metrics, warnings)
    except NotAnEvalSet as exc:
        if candidate.claimed:
            return Failed(rel, exc)
        return Skipped(rel, exc.message)
    except InputError as exc:
        return Failed(rel, exc)


def load_all(candidates: list[Candidate]) -> list[Outcome]:
    sidecars = SidecarFinder()
    return [load_candidate(c, sidecars) for c in candidates]
