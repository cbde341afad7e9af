"""The sample workflows (``docs/workflows/*.yml``) are the files the README shows: each is a
workflow GitHub loads, calls ci-eval's actions only with inputs action.yml has and ci-eval's
commands only with options they have, and installs ci-eval in a way that works without PyPI. The
main push records main's history and never gates on failures main already has (issue #33, item
8); pull requests gate and comment."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_eval import ACTION_REPO
from docs import outputs
from tests.conftest import REPO
from tests.helpers import run_cli

WORKFLOWS = sorted((REPO / "docs" / "workflows").glob("*.yml"))
INPUTS = set(yaml.safe_load((REPO / "action.yml").read_text())["inputs"])
INSTALL = f'"ci-eval @ git+https://github.com/{ACTION_REPO}@v'


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text("utf-8"))
    assert isinstance(data, dict) and "jobs" in data, path
    return data


def _steps(path: Path) -> list[dict[str, Any]]:
    return [step for job in _load(path)["jobs"].values() for step in job.get("steps", [])]


def _ci_eval_commands(path: Path) -> list[list[str]]:
    """Every ``ci-eval SUBCOMMAND ...`` a run step calls, as its words (comments, shell arrays
    and variables dropped; a folded ``>`` script is one line already)."""
    found = []
    for step in _steps(path):
        for line in str(step.get("run", "")).splitlines():
            for part in re.split(r"[;&|]+", line.split(" #", 1)[0]):
                words = shlex.split(part) if "ci-eval " in part else []
                if words[:1] == ["ci-eval"] and len(words) > 1:
                    found.append([w for w in words if not w.startswith("$")])
    return found


def test_there_is_a_workflow_for_each_path_the_readme_shows() -> None:
    assert {p.stem for p in WORKFLOWS} >= {"evals", "evals-main", "fork-evals", "fork-comment"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_each_workflow_is_shown_in_a_document_as_it_is(path: Path) -> None:
    where = outputs.marked(
        {outputs._doc_name(d): d.read_text("utf-8") for d in outputs.documents()}
    )
    assert f"workflow-{path.stem}" in where
    doc = REPO / where[f"workflow-{path.stem}"]
    [block] = [
        b for b in outputs.blocks(doc.read_text("utf-8")) if b.name == f"workflow-{path.stem}"
    ]
    assert block.body == path.read_text("utf-8").rstrip("\n") and block.info == "yaml"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_the_actions_get_only_inputs_that_action_yml_has(path: Path) -> None:
    used = [s for s in _steps(path) if str(s.get("uses", "")).startswith(ACTION_REPO)]
    for step in used:
        assert re.fullmatch(rf"{ACTION_REPO}(/adk|/setup)?@v\d+\.\d+\.\d+", step["uses"]), step
        unknown = set(step.get("with", {})) - INPUTS
        assert not unknown, f"{path.name}: {step['uses']} has no input(s) {sorted(unknown)}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_the_commands_get_only_options_they_have(path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    for words in _ci_eval_commands(path):
        command = words[1:2] if words[1] != "baseline" else words[1:3]
        helped = run_cli(*command, "--help", env=env)
        assert helped.returncode == 0, helped.stderr
        for option in (w.split("=")[0] for w in words if w.startswith("--")):
            assert option in helped.stdout, f"{path.name}: ci-eval {command[0]} has no {option}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_ci_eval_is_installed_from_the_release_tag_not_from_pypi(path: Path) -> None:
    for step in _steps(path):
        run = str(step.get("run", ""))
        if "pip install" in run and "ci-eval" in run:
            assert INSTALL in run, f"{path.name}: {run!r}"


def test_main_records_its_history_and_does_not_gate_on_what_main_already_fails() -> None:
    """Issue #33, item 8: a first push to main is green although a case fails."""
    path = REPO / "docs" / "workflows" / "evals-main.yml"
    data = _load(path)
    on = data.get("on", data.get(True))  # PyYAML reads `on:` as True
    assert "pull_request" not in on and on["push"]["branches"] == ["main"]
    [step] = [s for s in _steps(path) if str(s.get("uses", "")).startswith(ACTION_REPO)]
    assert step["with"]["fail-on"] == "error"  # records; pull requests gate
    assert step["with"]["comment"] is False  # a push has no pull request to comment on
    [update] = [w for w in _ci_eval_commands(path) if w[1:3] == ["baseline", "update"]]
    assert update[3] == "../ci-eval-results.json"  # the action's default results path
    assert data["jobs"]["history"]["permissions"] == {"contents": "write"}
    assert "steps" in data["jobs"]["evals"] and data["jobs"]["evals"]["permissions"] == {
        "contents": "read"
    }


def test_pull_requests_gate_on_mains_history_and_comment() -> None:
    path = REPO / "docs" / "workflows" / "evals.yml"
    [step] = [s for s in _steps(path) if str(s.get("uses", "")).startswith(ACTION_REPO)]
    assert step["with"]["baseline-branch"] == "ci-eval-data"
    assert "fail-on" not in step["with"] and step["with"].get("comment", True) is not False
    job = next(iter(_load(path)["jobs"].values()))
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
