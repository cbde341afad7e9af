"""The layout's promises, checked from the source: no import cycle, a light JUnit reporter, and
modules a reader can hold in mind."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ci_eval"


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in PACKAGE.rglob("*.py")}


def _module_of(name: str) -> str:
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(path: Path) -> set[str]:
    """The ci_eval modules ``path`` imports when it is imported: its module-level imports
    (those in functions or under ``if TYPE_CHECKING`` run later or never)."""
    me = _name(path)
    found: set[str] = set()
    nodes = list(ast.parse(path.read_text()).body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import):
            found |= {_module_of(a.name) for a in node.names if a.name.startswith("ci_eval.")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ci_eval"):
            assert node.module is not None and not node.level  # absolute imports only
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else _module_of(node.module))
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            nodes += [n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)]
    return found - {me}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph``, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_module_imports_itself_through_others() -> None:
    graph = {name: _imports(path) for name, path in MODULES.items()}
    assert _cycle(graph) is None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_the_junit_reporter_loads_no_metric_judge_http_or_templates() -> None:
    """A fresh interpreter's modules after importing the JUnit reporter alone."""
    probe = (
        "import sys, ci_eval.report.junit\n"
        "heavy = ('ci_eval.metrics', 'ci_eval.dialects', 'requests', 'jinja2', 'rouge_score')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy "
        "or m.startswith(heavy)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


OWN_PACKAGES = ("dialects", "connectors", "metrics", "io", "publish", "model", "report")
OWN_MODULES = (
    "http.py",
    "http_client.py",
    "load.py",
    "discover.py",
    "criteria.py",
    "results.py",
    "compare.py",
    "baseline.py",
    "baseline_file.py",
    "git.py",
)


@pytest.mark.parametrize(
    "path",
    [p for d in OWN_PACKAGES for p in sorted((PACKAGE / d).glob("*.py"))]
    + [PACKAGE / m for m in OWN_MODULES],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_loading_scoring_and_io_modules_stay_under_400_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 400


def _all_imports(name: str) -> set[str]:
    """Every ci_eval module ``name`` imports, module-level or in a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            found |= {_module_of(a.name) for a in node.names if a.name.startswith("ci_eval.")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ci_eval"):
            assert node.module is not None
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else _module_of(node.module))
    return found


def test_the_http_session_knows_none_of_its_callers() -> None:
    """Connectors, the judge and GitHub share ci_eval.http; it raises its own HttpError."""
    assert {
        m
        for m in _all_imports("ci_eval.http")
        if m.startswith(("ci_eval.connectors", "ci_eval.metrics", "ci_eval.publish", "ci_eval.llm"))
    } == set()


def test_loading_reaches_dialects_only_through_their_registry() -> None:
    """A dialect is one module plus one registration: loading names none of them."""
    for name in ("ci_eval.load", "ci_eval.criteria", "ci_eval.discover"):
        assert not {m for m in _all_imports(name) if m.startswith("ci_eval.dialects.")}, name
