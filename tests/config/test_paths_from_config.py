"""Paths mean one thing: every relative path ci-eval.toml gives — and the defaults it implies
(the baseline, the agent command's folder) — is relative to ci-eval.toml's folder, and the
files reports name are too; a flag's path is the working directory's. The same repository
gives the same verdict from its root and from any subfolder."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import run_cli


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the bundled sample and its ci-eval.toml at the root."""
    shutil.copytree(
        REPO / "samples", tmp_path / "samples", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "ci-eval.toml", tmp_path / "ci-eval.toml")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def _verdict(folder: Path, *args: str) -> tuple[int, str]:
    proc = run_cli("run", "--junit", "junit.xml", *args, cwd=folder)
    return proc.returncode, proc.stdout.strip().splitlines()[-1]


def test_the_same_verdict_from_the_root_and_from_a_subfolder(repo: Path) -> None:
    root = _verdict(repo)
    assert (
        root[0] == 1 and "gate on thresholds only: no baseline at .ci-eval/baseline.json" in root[1]
    )
    sub = _verdict(repo / "samples/evals")
    assert sub == (1, root[1].replace(".ci-eval/baseline.json", "../../.ci-eval/baseline.json"))


def test_the_default_baseline_is_the_one_beside_ci_eval_toml(repo: Path) -> None:
    run_cli("run", "--update-baseline", "--fail-on", "error", cwd=repo)
    assert (repo / ".ci-eval/baseline.json").is_file()
    code, line = _verdict(repo / "samples")
    assert code == 0 and line.startswith("gate passed: 0 regressions against main's history")
    assert not (repo / "samples/.ci-eval").exists()


def test_reports_name_files_relative_to_ci_eval_toml(repo: Path) -> None:
    _verdict(repo / "samples/evals")
    junit = (repo / "samples/evals/junit.xml").read_text()  # a flag's path: the cwd's
    assert 'file="samples/evals/weather_basic.evalset.json"' in junit


def test_an_agent_folder_in_ci_eval_toml_is_relative_to_it(repo: Path) -> None:
    (repo / "ci-eval.toml").write_text(
        '[agent]\nkind = "adk"\nmodule = "samples/agents/weather_agent"\n'
    )
    settings = _load_from(repo / "samples/evals", repo / "ci-eval.toml")
    module = repo / "samples/evals" / settings.agent.module  # type: ignore[attr-defined]
    assert module.resolve() == (repo / "samples/agents/weather_agent").resolve()


def _load_from(cwd: Path, config: Path) -> object:
    import os

    from ci_eval.settings import load_config

    here = Path.cwd()
    os.chdir(cwd)
    try:
        return load_config(Path(os.path.relpath(config)), required=True)
    finally:
        os.chdir(here)


def test_a_flags_path_is_the_working_directorys(repo: Path) -> None:
    proc = run_cli("run", "--results", "r.json", cwd=repo / "samples")
    assert proc.returncode == 1
    assert json.loads((repo / "samples/r.json").read_text())["sets"]
