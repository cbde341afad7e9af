"""The linters GitHub users run over workflows and actions pass over ours: zizmor (offline) and
GitHub's action and workflow schemas (check-jsonschema's vendored copies), on every action file,
every workflow, the sample workflows of docs/workflows/, and every workflow or list of steps the
README and docs/ show."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.delivery.yamlfiles import ACTIONS, sample_workflows, workflows, yaml_texts

BIN = Path(sys.executable).parent
_CONFIG = ("--config", str(REPO / ".github" / "zizmor.yml"))
# a job around a list of steps from the docs
WRAPPER = "on: push\npermissions: {}\njobs:\n  evals:\n    runs-on: ubuntu-latest\n    steps:\n"


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def _documented_workflows(into: Path) -> list[Path]:
    """The docs' blocks as workflow files: a whole workflow as it is, a list of steps inside
    a job with no permissions (as a user would paste it)."""
    written = []
    for n, text in enumerate(t for t in yaml_texts() if " block " in t.where):
        data = yaml.safe_load(text.text)
        if isinstance(data, list):
            body = WRAPPER + textwrap.indent(textwrap.dedent(text.text), " " * 6)
        elif "jobs" in data:
            body = text.text
        else:
            continue  # a settings fragment, not a workflow
        path = into / f"docs-{n}.yml"
        path.write_text(body)
        written.append(path)
    return written


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's action files and workflows, and the docs' workflows beside them."""
    root = tmp_path_factory.mktemp("lint")
    for name in ACTIONS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    flows = root / ".github" / "workflows"
    flows.mkdir(parents=True)
    for path in workflows():
        shutil.copy(path, flows / path.name)
    for path in sample_workflows():  # the README's workflows, as the files they are
        shutil.copy(path, flows / f"sample-{path.name}")
    assert _documented_workflows(flows)
    return root


def test_zizmor_finds_nothing(tree: Path) -> None:
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--format=json", "--no-progress", *_CONFIG, str(tree)],
        capture_output=True,
        text=True,
        check=False,
    )
    findings = json.loads(done.stdout or "[]")
    assert not findings, "\n".join(_finding(f) for f in findings)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_actions_match_githubs_action_schema(tree: Path) -> None:
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions"]
        + [str(tree / name) for name in ACTIONS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_workflows_match_githubs_workflow_schema(tree: Path) -> None:
    files = sorted((tree / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows"]
        + [str(p) for p in files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _finding(finding: dict) -> str:
    """``ident: file:line``, as zizmor's own report heads a finding."""
    try:
        location = finding["locations"][0]
        path = json.dumps(location["symbolic"]["key"])
        line = location["concrete"]["location"]["start_point"]["row"] + 1
    except (KeyError, IndexError):
        return finding.get("ident", str(finding))
    return f"{finding['ident']}: {path}:{line}"
