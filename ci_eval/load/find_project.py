"""What ``ci-eval init`` finds in a repository: how its agent is reached — an ADK agent package
(``agent.py`` assigning ``root_agent``, or ``root_agent.yaml``), else an ``adk api_server`` a
script or README starts, else a trpc-agent-go module — and its eval sets, found and read as
``validate`` finds and reads them, with the config that applies to each. Files are read,
never imported or run: ``agent.py`` is parsed with :mod:`ast`."""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io.files import repo_root, safe_resolve
from ci_eval.load.discover import SKIP_DIRS, discover_all
from ci_eval.load.evalsets import Failed, LoadedEvalSet, LoadedSidecar, load_all

TRPC_MODULE = "trpc.group/trpc-go/trpc-agent-go"
ADK_SERVER_PORT = 8000
_MAX_SOURCE = 1 << 20  # an agent.py or a script bigger than this is not read
_TEST_DIRS = frozenset({"test", "tests", "testdata", "fixtures", "__fixtures__"})
# where an `adk api_server` command line is looked for: files at the root, and these folders
_SCRIPT_DIRS = ("scripts", "bin", "deploy", ".github/workflows")
_SCRIPT_NAMES = re.compile(
    r"^(makefile|gnumakefile|justfile|procfile|taskfile\.ya?ml|dockerfile.*|.*compose.*\.ya?ml"
    r"|readme.*|.*\.sh|.*\.md|pyproject\.toml|package\.json|.*\.ya?ml)$",
    re.IGNORECASE,
)
_API_SERVER = re.compile(r"\badk\s+api_server\b([^\n`'\"]*)")
# api_server's options that take a value (the rest are flags)
_VALUED = frozenset(
    {
        "--host",
        "--port",
        "--session_service_uri",
        "--artifact_service_uri",
        "--memory_service_uri",
        "--eval_storage_uri",
        "--log_level",
        "--allow_origins",
        "--session_db_url",
        "--artifact_storage_uri",
        "--extra_plugins",
        "--url_prefix",
    }
)


@dataclass(frozen=True)
class AgentFound:
    """How the agent is reached, as far as the files tell. ``kind`` None: nothing found."""

    kind: str | None = None
    module: str | None = None  # adk: the agent's folder, relative to the root
    url: str | None = None  # adk-http
    app_name: str | None = None  # adk-http, when the files name it
    evidence: str = ""  # what was found where, one phrase
    others: tuple[str, ...] = ()  # other agents found, not chosen


@dataclass(frozen=True)
class SetFound:
    path: str  # relative to the root, posix
    # the set's id; its path when the id is only its path (see named_by_path), said once
    eval_set_id: str
    dialect: str
    cases: int
    config: str  # the config that applies (relative to the root), or "default"
    metrics: tuple[str, ...]
    scenarios: int  # cases whose user turns a simulator writes


@dataclass
class ProjectFound:
    root: Path
    agent: AgentFound
    sets: list[SetFound] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)  # sidecars found, relative to the root
    problems: list[str] = field(default_factory=list)  # files that did not load, one line each
    in_repository: bool = True  # the root holds .git (ci-eval.toml is found from subfolders)
    requirements: str | None = None  # requirements.txt or pyproject.toml at the root

    @property
    def folders(self) -> list[str]:
        """The folders holding the eval sets, none inside another: ``[run] paths``."""
        parents = sorted({Path(s.path).parent.as_posix() for s in self.sets})
        kept: list[str] = []
        for folder in parents:
            if folder == "." or not any(k == "." or folder.startswith(k + "/") for k in kept):
                kept.append(folder)
        return ["."] if "." in kept else kept


def assigns_root_agent(source: str) -> bool:
    """Whether the module's top level binds ``root_agent`` (an assignment, an annotated one, or
    an import as that name), also inside top-level ``if``/``try``/``with`` blocks."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False

    def binds(statements: list[ast.stmt]) -> bool:
        for node in statements:
            if isinstance(node, ast.Assign):
                names = [n for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                if any(n.id == "root_agent" for n in names):
                    return True
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                if isinstance(node.target, ast.Name) and node.target.id == "root_agent":
                    return True
            elif isinstance(node, ast.ImportFrom | ast.Import):
                if any((a.asname or a.name) == "root_agent" for a in node.names):
                    return True
            elif isinstance(node, ast.If | ast.Try | ast.With):
                blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
                blocks += [h.body for h in getattr(node, "handlers", [])]
                if any(binds(b) for b in blocks):
                    return True
        return False

    return binds(tree.body)


def _read(path: Path) -> str | None:
    """A regular file's text, at most ``_MAX_SOURCE`` bytes; None for anything else (a device,
    a FIFO, a link to one: the repository is input, and never blocks or floods init)."""
    from ci_eval.errors import InputError
    from ci_eval.io.readfile import read_regular_file

    try:
        return read_regular_file(path, str(path), _MAX_SOURCE).decode("utf-8", errors="replace")
    except InputError:
        return None


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    """The agent folders (holding ``agent.py`` that binds ``root_agent``, or
    ``root_agent.yaml``) and the ``go.mod`` files under ``root``; hidden folders, virtual
    environments and what discovery skips are not entered."""
    agents: list[Path] = []
    go_mods: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not d.startswith(".")
            and not os.path.isfile(os.path.join(dirpath, d, "pyvenv.cfg"))
        )
        folder = Path(dirpath)
        if "root_agent.yaml" in filenames:
            agents.append(folder)
        elif "agent.py" in filenames:
            source = _read(folder / "agent.py")
            if source is not None and assigns_root_agent(source):
                agents.append(folder)
        if "go.mod" in filenames:
            go_mods.append(folder / "go.mod")
    return agents, go_mods


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return path.as_posix()


def _rank(folder: str) -> tuple[bool, int, str]:
    """Agents outside test folders first, then the shallowest."""
    parts = folder.split("/")
    return (any(p.lower() in _TEST_DIRS for p in parts), len(parts), folder)


def _script_files(root: Path) -> list[Path]:
    files = []
    for folder in (root, *(root / d for d in _SCRIPT_DIRS)):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        files += [folder / n for n in names if _SCRIPT_NAMES.match(n) and (folder / n).is_file()]
    return files


def parse_api_server(args: str) -> tuple[int, str | None]:
    """The port and the agents folder of an ``adk api_server ARGS`` command line."""
    try:
        tokens = shlex.split(args, comments=True)
    except ValueError:
        tokens = args.split()
    port, folder, skip = ADK_SERVER_PORT, None, False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if token in {"&", "&&", "|", "||", ";", ">", "2>", "\\"} or token.startswith((">", "$(")):
            break
        name, eq, value = token.partition("=")
        if name == "--port":
            text = value if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
            port = int(text) if text.isdigit() else port
        if token.startswith("-"):
            skip = name in _VALUED and not eq
        elif folder is None:
            folder = token
    return port, folder


def _api_server(root: Path) -> AgentFound | None:
    for file in _script_files(root):
        text = _read(file)
        match = _API_SERVER.search(text or "")
        if match is None:
            continue
        port, folder = parse_api_server(match.group(1))
        app = None
        base = (root / folder) if folder and not Path(folder).is_absolute() else root
        if base.is_dir():
            apps = sorted(
                d.name
                for d in base.iterdir()
                if d.is_dir() and ((d / "agent.py").is_file() or (d / "root_agent.yaml").is_file())
            )
            app = apps[0] if len(apps) == 1 else None
        line = " ".join(match.group(0).split())
        return AgentFound(
            kind="adk-http",
            url=f"http://localhost:{port}",
            app_name=app,
            evidence=f"`{line}` in {_rel(file, root)}",
        )
    return None


def find_agent(root: Path) -> AgentFound:
    """ADK in process, else an api_server, else trpc-agent-go (a command), else nothing."""
    folders, go_mods = _walk(root)
    found = sorted((_rel(f, root) for f in folders), key=_rank)
    if found:
        module = found[0]
        marker = "root_agent.yaml" if (root / module / "root_agent.yaml").is_file() else None
        what = marker or "agent.py, which assigns root_agent"
        return AgentFound(
            kind="adk",
            module=module,
            evidence=f"an ADK agent: {module}/{what}".replace("./", ""),
            others=tuple(found[1:]),
        )
    served = _api_server(root)
    if served is not None:
        return served
    for go_mod in go_mods:
        if TRPC_MODULE in (_read(go_mod) or ""):
            return AgentFound(
                kind="command",
                evidence=f"a trpc-agent-go module: {_rel(go_mod, root)} requires {TRPC_MODULE}",
            )
    return AgentFound()


def _config_of(loaded: LoadedEvalSet, root: Path) -> str:
    source = loaded.metrics.source
    if not source or source == "default":
        return "default"
    return _rel(safe_resolve(Path(source)), safe_resolve(root))


def named_by_path(eval_set_id: str, path: str) -> str:
    """The id init names a set by: a set whose id is its path (a legacy ``.test.json``'s) or
    its path without ``.json`` (every Orchestrate file's) is named by its path alone, which
    init then says once, not twice ("data.json (data: 1 case, …)")."""
    return path if eval_set_id in (path, path.removesuffix(".json")) else eval_set_id


def find_project(root: Path) -> ProjectFound:
    """Everything ``init`` reports and writes for the repository at ``root``."""
    root = safe_resolve(root)
    project = ProjectFound(root, find_agent(root), in_repository=repo_root(root) == root)
    for name in ("requirements.txt", "pyproject.toml"):
        if (root / name).is_file():
            project.requirements = name
            break
    try:
        discovery = discover_all([root], base=root)
        outcomes = load_all(discovery.candidates)
    except InputError as exc:
        project.problems.append(str(exc))
        return project
    for outcome in outcomes:
        if isinstance(outcome, LoadedEvalSet):
            cases = outcome.eval_set.eval_cases
            path = _rel(root / outcome.path, root)
            project.sets.append(
                SetFound(
                    path=path,
                    eval_set_id=named_by_path(outcome.eval_set.eval_set_id, path),
                    dialect=outcome.dialect,
                    cases=len(cases),
                    config=_config_of(outcome, root),
                    metrics=tuple(m.name for m in outcome.metrics.metrics),
                    scenarios=sum(1 for c in cases if c.conversation_scenario is not None),
                )
            )
        elif isinstance(outcome, LoadedSidecar):
            project.configs.append(_rel(root / outcome.path, root))
        elif isinstance(outcome, Failed):
            project.problems.append(str(outcome.error))
    for found in project.sets:  # configs beside a set, found by its name, not by discovery
        if found.config != "default" and found.config not in project.configs:
            project.configs.append(found.config)
    project.configs.sort()
    return project
