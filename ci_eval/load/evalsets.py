"""Load discovered files: eval sets in any dialect, their metric sidecars, and what to skip."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.dialects import DIALECTS, LoadContext, looks_like, sniff
from ci_eval.errors import InputError, NotAnEvalSet, ValidationFailed
from ci_eval.io.files import repo_root, safe_resolve
from ci_eval.io.jsonfast import paused_gc
from ci_eval.io.jsonpos import JsonDocument, parse_json, read_json_file, read_json_text
from ci_eval.io.readfile import names_ending
from ci_eval.load import sidecars as criteria
from ci_eval.load.discover import Candidate, display_path
from ci_eval.model import EvalSet
from ci_eval.model.metric_spec import MetricConfig, default_config, defaults_dialect
from ci_eval.text.plural import listed


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


# what loading one file gave
FileOutcome = LoadedEvalSet | LoadedSidecar | Skipped | Failed


def _describe_unknown(data: object) -> str:
    if isinstance(data, dict):
        keys = listed(sorted(map(str, data)), 6) or "none"
        return f"unrecognised JSON (an object with keys: {keys})"
    if isinstance(data, list):
        return "unrecognised JSON (a list that is neither legacy ADK turns nor trpc metrics)"
    return f"unrecognised JSON (a {type(data).__name__})"


# ADK's legacy lists are loose shapes; found by content alone (not by a .test.json name) a list
# of {query} items is one only with a key of ADK's own
_LEGACY_ONLY_KEYS = frozenset(
    {"expected_tool_use", "reference", "expected_intermediate_agent_responses"}
)


def _loose_legacy(data: Any) -> bool:
    items = [x for x in data if isinstance(x, dict)] if isinstance(data, list) else []
    if not items:
        return False
    if "query" in items[0]:
        return not any(set(x) & _LEGACY_ONLY_KEYS for x in items)
    if "data" in items[0]:
        return not all("name" in x for x in items)
    return False


def parse_document(
    doc: JsonDocument,
    rel: str,
    by_content: bool = False,
) -> tuple[str, EvalSet, list[str]] | LoadedSidecar:
    """Recognise and load one parsed document. Raises InputError / NotAnEvalSet.
    ``by_content``: the file was found by its content (in an eval folder), not by its name."""
    data = doc.data
    if criteria.is_adk_config(data):
        return LoadedSidecar(rel, "adk-config", criteria.load_adk_config(doc, rel))
    if criteria.is_trpc_metrics(data):
        return LoadedSidecar(rel, "trpc-metrics", criteria.load_trpc_metrics(doc, rel))
    other = looks_like(data)
    if other:
        raise NotAnEvalSet(f"not an eval set (looks like {other})", path=rel, json_path="$")
    if data == []:
        empty = doc.error("empty list: no eval cases (a legacy ADK .test.json lists turns)")
        raise NotAnEvalSet(
            empty.message,
            path=empty.path,
            line=empty.line,
            col=empty.col,
            json_path=empty.json_path,
        )
    if by_content and _loose_legacy(data):
        raise NotAnEvalSet(
            "not an eval set (a list of {query} or {data} items without ADK's legacy keys "
            "expected_tool_use/reference, or name; name it *.test.json if it is one)",
            path=rel,
            json_path="$",
        )
    dialect = sniff(data)
    if dialect is None:
        raise NotAnEvalSet(f"not an eval set ({_describe_unknown(data)})", path=rel, json_path="$")
    ctx = LoadContext(rel)
    return dialect.name, dialect.load(doc, ctx), ctx.warnings


def _streamed(text: str, rel: str) -> tuple[str, EvalSet, list[str]] | None:
    """The file read as it is parsed by the first dialect, if it can (``load_streamed``: each
    case validated as soon as it is parsed, the file never all in memory as JSON), when
    :func:`parse_document` would give it to that dialect: for an object, what decides before
    the dialects sniff is its keys, and that dialect sniffs the top level it returns."""
    first = DIALECTS[0]
    read = getattr(first, "load_streamed", None)
    ctx = LoadContext(rel)
    got = read(text, ctx) if read is not None else None
    if got is None:
        return None
    top, eval_set = got
    if criteria.is_adk_config(top) or looks_like(top) is not None or not first.sniff(top):
        return None
    return first.name, eval_set, ctx.warnings


class SidecarFinder:
    """Finds and caches the metric configuration that applies to an eval set.

    One rule however the set was reached (a file, its folder, the repository root):

    1. ``--eval-config FILE`` (``[run] eval_config``), when given, applies to every set, as
       ``adk eval --config_file_path`` does;
    2. trpc's ``<evalSetId>.metrics.json`` (or ``.metric.json``) beside the file (or
       ``<file stem>.metrics.json``, or
       the one metrics file whose stem prefixes the set id, as trpc's promptiter examples share
       one);
    3. ADK's ``test_config.json`` / ``eval_config.json`` beside the file (what ADK's
       ``AgentEvaluator`` and a single-file ``adk eval`` read), else the nearest one in a parent
       folder up to the repository root (the agent-starter-pack keeps
       ``tests/eval/eval_config.json`` above ``tests/eval/evalsets/``);
    4. else the dialect's defaults (ADK's).

    A config file in another tool's shape (trpc-agent-python's ``{"metrics": [...]}``) is a
    warning and the set keeps its defaults; a config google-adk rejects is an error.
    """

    def __init__(self, override: Path | None = None) -> None:
        self._cache: dict[Path, MetricConfig | str] = {}
        # per folder, its metrics sidecars (name, suffix)
        self._sidecars: dict[Path, list[tuple[str, str]]] = {}
        self.override = override

    def _load(self, path: Path, trpc: bool) -> MetricConfig | str:
        """The config, or (for an ADK config name) the description of a foreign shape."""
        key = safe_resolve(path)
        if key not in self._cache:
            rel = _shown(path)
            doc = read_json_file(path, rel)
            if trpc:
                if not criteria.is_trpc_metrics(doc.data):
                    raise InputError(
                        "expected a trpc-agent-go metrics list here (a list of "
                        "{metricName, threshold, criterion} beside the eval set)",
                        path=rel,
                        json_path="$",
                    )
                self._cache[key] = criteria.load_trpc_metrics(doc, rel)
            else:
                foreign = criteria.foreign_config_shape(doc.data)
                self._cache[key] = foreign or criteria.load_adk_config(doc, rel)
        return self._cache[key]

    def load_override(self, path: Path, option: str = "--eval-config") -> MetricConfig:
        """The one config for every set; ``option`` names the setting in messages."""
        key = safe_resolve(path)
        cached = self._cache.get(key)
        if isinstance(cached, MetricConfig):
            return cached
        if not path.is_file():
            raise InputError(f"{option}: no such file", path=str(path))
        rel = display_path(path)
        doc = read_json_file(path, rel)
        if criteria.is_trpc_metrics(doc.data):
            config = criteria.load_trpc_metrics(doc, rel)
        else:
            foreign = criteria.foreign_config_shape(doc.data)
            if foreign:
                raise InputError(
                    f"{option}: not an ADK eval config ({foreign}); expected "
                    '{"criteria": {...}} or a trpc-agent-go metrics list',
                    path=rel,
                )
            config = criteria.load_adk_config(doc, rel)
        self._cache[key] = config
        return config

    def find(
        self,
        file: Path,
        eval_set_id: str,
        root: Path | None = None,
        dialect: str = "adk",
        warnings: list[str] | None = None,
    ) -> MetricConfig:
        """``root`` is ignored (the old signature's): the search stops at the repository root."""
        if self.override is not None:
            return self.load_override(self.override)
        folder = file.parent
        stem = file.name.split(".")[0]
        for suffix in criteria.TRPC_METRICS_SUFFIXES:
            for name in (f"{eval_set_id}{suffix}", f"{stem}{suffix}"):
                if "/" not in name and _present(folder / name):
                    return self._expect_config(self._load(folder / name, trpc=True))
        if folder not in self._sidecars:  # one listing of a folder for all its eval sets
            self._sidecars[folder] = [
                (n, next(s for s in criteria.TRPC_METRICS_SUFFIXES if n.endswith(s)))
                for n in names_ending(folder, criteria.TRPC_METRICS_SUFFIXES)
            ]
        shared = [
            folder / n
            for n, suffix in self._sidecars[folder]
            if eval_set_id.startswith(n[: -len(suffix)])
        ]
        if len(shared) == 1:
            return self._expect_config(self._load(shared[0], trpc=True))
        config_file = find_eval_config(file)
        if config_file is None:
            return default_config(dialect)
        try:
            found = self._load(config_file, trpc=False)
        except InputError as exc:
            # the problem is in the config; say which eval set it was read for
            for problem in exc.problems if isinstance(exc, ValidationFailed) else [exc]:
                problem.message += f" (the config of {display_path(file)})"
            raise
        if isinstance(found, str):
            if warnings is not None:
                warnings.append(
                    f"{_shown(config_file)}: not an ADK eval config ({found}); "
                    f"{display_path(file)} uses the default metrics instead (ADK would read "
                    "no criteria from it; give the metrics in ADK's "
                    '{"criteria": {...}} or pass --eval-config)'
                )
            return default_config(dialect)
        return found

    @staticmethod
    def _expect_config(found: MetricConfig | str) -> MetricConfig:
        assert isinstance(found, MetricConfig)  # trpc sidecars never come back as a shape
        return found


def _shown(path: Path) -> str:
    """A config's path as the user would type it from here (``../eval_config.json`` when it
    is above the working directory)."""
    shown = display_path(path)
    if Path(shown).is_absolute():
        try:
            return Path(os.path.relpath(path)).as_posix()
        except ValueError:  # another drive
            return shown
    return shown


def search_stop(file: Path) -> Path:
    """Where the search for a config above ``file`` ends: the repository root (outside a
    repository, the top of the file system: the rule must not depend on where ci-eval runs)."""
    folder = safe_resolve(file).parent
    return repo_root(folder) or Path(folder.anchor)


def find_eval_config(file: Path) -> Path | None:
    """The ADK eval config that applies to the eval set ``file`` (rule 3 above)."""
    stop = search_stop(file)
    current = safe_resolve(file).parent
    while True:
        for name in criteria.ADK_CONFIG_NAMES:
            if _present(current / name):
                return current / name
        if current == stop or current.parent == current:
            return None
        current = current.parent


# The keys some dialect's sniffer (or a sidecar's) needs: a file found by its content with
# none of them is no eval set of any dialect. A large one is skipped without being parsed (an
# unrelated file costs a byte scan, not a parse), and one that is not JSON ci-eval reads (JSON
# lines, comments, NaN, another encoding) is skipped rather than refused.
SIGNATURE_KEYS = frozenset(
    {
        "eval_cases",
        "evalCases",
        "evalSetId",
        "query",
        "data",
        "goal_details",
        "story",
        "metricName",
        "metric_name",
        *criteria.ADK_CONFIG_KEYS,
    }
)
_MARKERS = tuple(f'"{k}"'.encode() for k in sorted(SIGNATURE_KEYS))


# Below this size a file is parsed, so that its reason can say what it looks like.
_SCAN_ONLY_ABOVE = 256 * 1024


def _lacks_markers(path: Path, above: int = _SCAN_ONLY_ABOVE) -> bool:
    """A regular file larger than ``above`` none of whose bytes spell a key any eval-set
    format uses. Read in chunks, so that an unrelated dump bigger than the loader's size limit
    is skipped, not refused."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size <= above:
            return False
        overlap = max(len(m) for m in _MARKERS)
        tail = b""
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                window = tail + chunk
                if any(marker in window for marker in _MARKERS):
                    return False
                tail = window[-overlap:]
    except OSError:
        return False  # the loader reports it
    return True


def _present(path: Path) -> bool:
    """Whether a sidecar is there: anything but a directory counts (a FIFO or a symlink loop
    named like a sidecar is refused with its reason, not silently passed over for defaults). A
    name the system cannot hold (a set id over 255 bytes, a NUL) is simply not there."""
    try:
        return os.path.lexists(path) and not path.is_dir()
    except (OSError, ValueError):
        return False


SCRUBBED_NOTE = "lone surrogates (such as \\ud83d) in the file were replaced with U+FFFD"


# the dialects a ``dialect`` setting may name, and the shapes each reads as its own
READ_AS = {"adk-rs": ("adk",)}


def load_candidate(
    candidate: Candidate, sidecars: SidecarFinder, as_dialect: str | None = None
) -> FileOutcome:
    rel = candidate.rel
    if not candidate.claimed and _lacks_markers(candidate.path):
        return Skipped(rel, "not an eval set (no key any eval-set format uses)")
    with paused_gc():  # a parsed file and its models hold no cycles
        return _load_candidate(candidate, sidecars, as_dialect)


def _load_candidate(
    candidate: Candidate, sidecars: SidecarFinder, as_dialect: str | None
) -> FileOutcome:
    rel = candidate.rel
    doc: JsonDocument | None = None
    try:
        try:
            text = read_json_text(candidate.path, rel)
            parsed = _streamed(text, rel)
            doc = parse_json(text, rel) if parsed is None else None
        except InputError as exc:
            raise _unreadable(candidate, exc) from None
        del text
        if parsed is None:
            assert doc is not None
            parsed = parse_document(doc, rel, by_content=not candidate.claimed)
        if isinstance(parsed, LoadedSidecar):
            return parsed
        dialect, eval_set, warnings = parsed
        if as_dialect and dialect in READ_AS.get(as_dialect, ()):
            dialect = as_dialect
        if not eval_set.eval_cases:
            warnings.append(f"{rel}: empty eval set: it has no cases, nothing will run")
        metrics = sidecars.find(
            candidate.path,
            eval_set.eval_set_id,
            candidate.root,
            defaults_dialect(dialect, eval_set),
            warnings,
        )
        if doc is not None and doc.scrubbed:
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


def _unreadable(candidate: Candidate, error: InputError) -> InputError:
    """Why a file could not be read as JSON: found by its content, with no key any eval-set
    format uses, it is no eval set of any dialect (JSON lines, a dataset with comments), not a
    broken one."""
    if candidate.claimed or not _lacks_markers(candidate.path, above=-1):
        return error
    return NotAnEvalSet(
        f"not an eval set ({error.message}; it has no key any eval-set format uses)",
        path=candidate.rel,
    )


def _noted(error: InputError, doc: JsonDocument | None) -> InputError:
    """Say that lone surrogates were replaced: two ids that differ only there now collide."""
    if doc is not None and doc.scrubbed:
        problems = getattr(error, "problems", None) or [error]
        for problem in problems:
            problem.message += f" ({SCRUBBED_NOTE})"
        error.message = problems[0].message
    return error


def skipped_line(outcomes: list[FileOutcome], limit: int = 5) -> str | None:
    """The one line a run says of the JSON it found and skipped (a dataset in ``tests/eval/``,
    an agent spec, a results file), naming them; None when there were none."""
    skipped = [o.path for o in outcomes if isinstance(o, Skipped)]
    if not skipped:
        return None
    n = len(skipped)
    what = "JSON file that is not an eval set" if n == 1 else "JSON files that are not eval sets"
    return (
        f"skipped {n} {what} of any dialect: {listed(skipped, limit)} "
        "(`ci-eval validate -v` says why; a file named in [run] paths or on the command line "
        "is read as an eval set)"
    )


def load_all(
    candidates: list[Candidate],
    eval_config: Path | None = None,
    option: str = "--eval-config",
    dialect: str | None = None,
) -> list[FileOutcome]:
    """Load every candidate. A bad ``eval_config`` (``--eval-config``; ``option`` names it as the
    user did) raises InputError once, before any set is read, rather than failing every set.
    ``dialect`` (the ``dialect`` setting) names the dialect of the sets in ADK's shape. A set
    whose id another file's set has is refused (:func:`ids_apart`)."""
    sidecars = SidecarFinder(eval_config)
    if eval_config is not None:
        sidecars.load_override(eval_config, option)
    return ids_apart([load_candidate(c, sidecars, dialect) for c in candidates])


# where a dialect's file names its eval set's id (the others derive it from the file's path,
# which no other file has)
_ID_PATHS = {"adk": "$.eval_set_id", "adk-camel": "$.evalSetId", "adk-rs": "$.eval_set_id",
             "trpc": "$.evalSetId"}  # fmt: skip


def ids_apart(outcomes: list[FileOutcome]) -> list[FileOutcome]:
    """``outcomes`` with every eval set whose id an earlier file's set already has refused, in
    one line naming both files. ci-eval knows a set by its id — in the reports, in a replay's
    recordings, in main's history — so two files of one id would be scored from each other's
    recordings and judged by each other's history (trpc-agent-go's examples have two
    ``math-basic`` sets); the user gives one another id."""
    first: dict[str, str] = {}
    out: list[FileOutcome] = []
    for outcome in outcomes:
        if isinstance(outcome, LoadedEvalSet):
            set_id = outcome.eval_set.eval_set_id
            other = first.setdefault(set_id, outcome.path)
            if other != outcome.path:
                outcome = Failed(
                    outcome.path,
                    InputError(
                        f"eval set id {set_id!r} is also the id of {other}: ci-eval tells eval "
                        "sets apart by their id (reports, replays, main's history), so one "
                        "would be scored or judged as the other; give this set an id of its own",
                        path=outcome.path,
                        json_path=_ID_PATHS.get(outcome.dialect),
                    ),
                )
        out.append(outcome)
    return out
