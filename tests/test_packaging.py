"""What the package imports at run time is what pyproject.toml installs (the test extra brings
more, so a green test run alone would not notice a missing runtime dependency)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.conftest import REPO

OPTIONAL = {"google"}  # google-adk: the `adk` connector's extra, imported only when used


def _imports() -> set[str]:
    found = set()
    for path in (REPO / "ci_eval").rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"ci_eval"} - OPTIONAL


def test_every_runtime_import_is_a_declared_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {
        re.split(r"[<>=\[ ;]", d)[0].lower().replace("_", "-") for d in project["dependencies"]
    }
    dists = packages_distributions()
    for module in _imports():
        owners = {d.lower().replace("_", "-") for d in dists.get(module, [])}
        # requests', pydantic's and jsonschema's own (its meta-schemas and $ref registry)
        transitive = {"urllib3", "typing-extensions", "jsonschema-specifications", "referencing"}
        assert owners & (declared | transitive), f"{module} ({owners}) is not a dependency"


def test_templates_ship_in_the_wheel() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["ci_eval._templates"] == "templates"
    assert "ci_eval._templates" in config["packages"]
    for name in ("summary.md.j2", "comment.md.j2", "judge/watsonx_keyword_match.j2"):
        assert (REPO / "templates" / name).is_file()


def test_the_judge_prompts_ship_in_the_wheel() -> None:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(data["package-data"]["ci_eval.metrics"]) == {
        "adk_judge_prompts/*",
        "trpc_judge_prompts/*",
        "watsonx_quick_prompts/*",
    }
    shipped = REPO / "ci_eval" / "metrics" / "adk_judge_prompts"
    assert {"NOTICE.md", "final_response_match_v2.txt", "pre_built_personas.json"} <= {
        p.name for p in shipped.iterdir()
    }
    trpc = REPO / "ci_eval" / "metrics" / "trpc_judge_prompts"
    assert {"NOTICE.md", "llm_final_response.txt"} <= {p.name for p in trpc.iterdir()}
    ibm = REPO / "ci_eval" / "metrics" / "watsonx_quick_prompts"
    assert {"NOTICE.md", "general_hallucination_check.json"} <= {p.name for p in ibm.iterdir()}


def test_every_package_ships_in_the_wheel() -> None:
    """The packages are listed by hand (for the templates' mapping): a new package left out
    works in an editable install and in the tests, and is missing from the wheel and the image."""
    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "ci_eval").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set()


def test_numpy_and_scipy_are_not_runtime_dependencies() -> None:
    """They were most of the Docker image for a few dozen lines of statistics
    (ci_eval.gate.stats, checked against scipy in the tests)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=\[ ;]", d)[0].lower() for d in project["dependencies"]}
    assert not names & {"numpy", "scipy"}
    assert not _imports() & {"numpy", "scipy"}
