"""The layout's promises, checked from the source. The layer order, the independence of plug-in
modules and the cycles inside a package are import-linter contracts (``[tool.importlinter]`` in
pyproject.toml), checked here; what import-linter cannot say is checked by hand: no module-level
cycle between the packages of one layer, no private name imported from another module, a
light JUnit reporter, and modules a reader can hold in mind."""

from __future__ import annotations

import ast
import contextlib
import io
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ci_eval"

# the pipeline and the two parts of its orchestration beside it (its checks, the same-day
# control), in one layer of the import contract
TOP_LEVEL = {
    "__init__.py",
    "__main__.py",
    "pipeline.py",
    "errors.py",
    "preflight.py",
    "same_day.py",
}
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
    """Inside a package import-linter says it (acyclic_siblings); this sees the modules of the
    packages of one layer too, which may import each other (io and text) but not in a circle."""
    assert _cycle(GRAPH) is None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def _lint(config: Path) -> tuple[int, str]:
    """import-linter's exit code and report for ``config``, in this process, no cache."""
    from importlinter.cli import lint_imports

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = lint_imports(config_filename=str(config), no_cache=True, no_logo=True)
    return code, out.getvalue()


def test_the_import_contracts_hold() -> None:
    code, report = _lint(PACKAGE.parent / "pyproject.toml")
    assert code == 0, report
    assert "7 kept, 0 broken" in report, report


def test_an_import_inside_a_function_against_the_layers_breaks_the_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """import-linter counts the imports a module runs later, and those only for types."""
    package = tmp_path / "layered"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("")
    (package / "typed.py").write_text("")
    (package / "low.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import layered.typed\n"
        "def later():\n    from layered import high\n"
    )
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["layered"]\n'
        '[[tool.importlinter.contracts]]\nname = "order"\ntype = "layers"\n'
        'layers = ["layered.high : layered.typed", "layered.low"]\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, report = _lint(config)
    assert code == 1
    assert "layered.low -> layered.high" in report
    assert "layered.low -> layered.typed" in report


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
