"""A main branch with a history, and pull requests against it, as a PR job sees them
(``GITHUB_BASE_REF``): the bundled samples, their agent and a baseline of two jobs of 3 runs
each on main; a pull request breaks a case (the agent forgets Paris's weather) unless told not
to, and writes what it is given."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import git, run_cli

# the agent no longer knows Paris's weather
BROKEN = ('"Paris": {"condition": "sunny"', '"Pariss": {"condition": "sunny"')


def make_main_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: the samples, ci-eval.toml and a baseline of two jobs of 3 runs each."""
    root = tmp_path_factory.mktemp("goalposts") / "main"
    root.mkdir()
    shutil.copytree(REPO / "samples", root / "samples")
    shutil.copy(REPO / "ci-eval.toml", root / "ci-eval.toml")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "samples")
    env = clean_env()
    for i in range(2):
        done = run_cli("run", "--num-runs", "3", "--results", f"r{i}.json", cwd=root, env=env)
        assert done.returncode in (0, 1), done.stderr
        done = run_cli("baseline", "update", f"r{i}.json", cwd=root, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        (root / f"r{i}.json").unlink()
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "history")
    return root


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return {**env, **extra}


def pull_request(main_repo: Path, tmp_path: Path, broken: bool = True, **files: str) -> Path:
    """A clone on branch feature: paris_weather broken (unless not ``broken``), and ``files``
    written (path → text)."""
    clone = tmp_path / "pr"
    git(tmp_path, "clone", "-q", main_repo.as_uri(), "pr")
    git(clone, "checkout", "-q", "-b", "feature")
    if broken:
        logic = clone / "samples/agents/weather_agent/logic.py"
        logic.write_text(logic.read_text().replace(*BROKEN))
    for name, text in files.items():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(text)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "--allow-empty", "-m", "the pull request")
    return clone


def run_pr(clone: Path, *args: str, **env: str) -> tuple[int, str]:
    """The exit code, and stderr then stdout (whose last line is the verdict)."""
    done = run_cli("run", *args, cwd=clone, env=clean_env(GITHUB_BASE_REF="main", **env))
    return done.returncode, done.stderr + done.stdout
