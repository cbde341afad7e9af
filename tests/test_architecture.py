"""The layout's promises, checked from the source: stage packages in a declared layer order, no
import cycle and no import against the order (counting imports inside functions, which run
later but run), no private name imported from another module, a light JUnit reporter, and
modules a reader can hold in mind."""

from __future__ import annotations

import ast
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ci_eval"

# lowest first: a module imports its own layer and the layers below it, never one above. The
# plug-in packages (dialects, connectors, simulate, metrics) sit with the stage that uses them.
LAYERS = (
    ("ci_eval", "ci_eval.errors"),  # the package itself: its version and names
    ("ci_eval.io", "ci_eval.text", "ci_eval.net"),  # no domain knowledge
    ("ci_eval.model",),  # eval sets, results, metric specs, statuses
    ("ci_eval.results",),  # the results file over the model
    ("ci_eval.settings",),
    ("ci_eval.load", "ci_eval.dialects"),
    # the worker process's trusted side (start it, ask it); what it serves is further up
    ("ci_eval.run", "ci_eval.connectors", "ci_eval.simulate", "ci_eval.worker"),
    ("ci_eval.score", "ci_eval.metrics"),
    ("ci_eval.gate",),
    ("ci_eval.report",),
    ("ci_eval.publish",),
    ("ci_eval.preflight", "ci_eval.pipeline"),  # the pipeline orchestrates rounds (reruns)
    # the worker process itself: metrics and agents, on request
    ("ci_eval.worker.serve", "ci_eval.worker.ops", "ci_eval.worker.__main__"),
    ("ci_eval.cli", "ci_eval.__main__"),
)
TOP_LEVEL = {"__init__.py", "__main__.py", "pipeline.py", "errors.py", "preflight.py"}
WARN_LINES, MAX_LINES = 400, 600


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in PACKAGE.rglob("*.py")}


def _module_of(name: str) -> str:
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """(ci_eval module, name imported from it or None) for every import ``path`` runs: at
    module level or in a function; not those under ``if TYPE_CHECKING``, which never run."""
    tree = ast.parse(path.read_text())
    unrun = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if id(node) in unrun:
            continue
        if isinstance(node, ast.Import):
            found += [
                (_module_of(a.name), None) for a in node.names if a.name.startswith("ci_eval.")
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ci_eval"):
            assert node.module is not None and not node.level  # absolute imports only
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append((sub, None) if sub in MODULES else (node.module, alias.name))
    return found


GRAPH = {name: {m for m, _ in _imports(path)} - {name} for name, path in MODULES.items()}


def layer(module: str) -> int:
    """The index of the layer ``module`` belongs to (its longest matching prefix)."""
    best: tuple[int, int] | None = None
    for i, group in enumerate(LAYERS):
        for prefix in group:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[1]):
                best = (i, len(prefix))
    assert best is not None, f"{module} is in no layer: add its package to LAYERS"
    return best[0]


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


def test_the_top_level_holds_the_pipeline_and_the_stage_packages_only() -> None:
    loose = {p.name for p in PACKAGE.glob("*.py")} - TOP_LEVEL
    assert not loose, f"modules outside a stage package: {sorted(loose)}"


def test_no_module_imports_itself_through_others_even_from_a_function() -> None:
    assert _cycle(GRAPH) is None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_no_module_imports_one_of_a_later_layer() -> None:
    against = sorted(
        f"{name} imports {dep}"
        for name, deps in GRAPH.items()
        for dep in deps
        if layer(dep) > layer(name)
    )
    assert not against


def test_the_layer_check_sees_an_arrow_against_the_order() -> None:
    assert layer("ci_eval.run.runner") < layer("ci_eval.gate.compare")
    assert layer("ci_eval.connectors.command") == layer("ci_eval.run.runner")
    assert layer("ci_eval.text.redact") < layer("ci_eval.report.markdown")


def test_no_private_name_is_imported_from_another_module() -> None:
    private = sorted(
        f"{name} imports {module}.{alias}"
        for name, path in MODULES.items()
        for module, alias in _imports(path)
        if alias and alias.startswith("_") and not alias.startswith("__") and module != name
    )
    assert not private


@pytest.mark.parametrize("name", sorted(MODULES), ids=lambda n: n.removeprefix("ci_eval."))
def test_a_module_is_one_concept_a_reader_can_hold(name: str) -> None:
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name}: {lines} lines; split it by concept"
    if lines > WARN_LINES:
        warnings.warn(f"{name}: {lines} lines (past {WARN_LINES})", stacklevel=1)


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


def test_the_http_session_knows_none_of_its_callers() -> None:
    """Connectors, the judge and GitHub share ci_eval.net.http; it raises its own HttpError."""
    callers = ("ci_eval.connectors", "ci_eval.metrics", "ci_eval.publish", "ci_eval.net.llm")
    assert not {m for m in GRAPH["ci_eval.net.http"] if m.startswith(callers)}


def test_loading_reaches_dialects_only_through_their_registry() -> None:
    """A dialect is one module plus one registration: loading names none of them."""
    for name in ("ci_eval.load.evalsets", "ci_eval.load.sidecars", "ci_eval.load.discover"):
        assert not {m for m in GRAPH[name] if m.startswith("ci_eval.dialects.")}, name
