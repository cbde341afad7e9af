"""``ci-eval init`` treats the repository as input, not as code: what it copies into the
workflow's script is a plain path or not copied (and said); it reads only regular files; it
never writes through a symlink or outside the repository; any file-name bytes work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import run_cli

AGENT = "from google.adk.agents import Agent\nroot_agent = Agent(name='a')\n"
EVALSET = '{"eval_set_id": "s", "eval_cases": []}'


def _repo(root: Path, **files: str) -> Path:
    for name, text in {"evals/s.evalset.json": EVALSET, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _scripts(root: Path) -> list[str]:
    workflow = yaml.safe_load((root / ".github/workflows/evals.yml").read_text())
    return [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]


def test_a_readme_command_line_is_never_copied_into_the_workflows_script(tmp_path: Path) -> None:
    hostile = "adk api_server agents;touch${IFS}PWNED;#x --port 8000"
    root = _repo(tmp_path, **{"README.md": f"Serve it:\n\n    {hostile}\n"})
    done = run_cli("init", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    scripts = "\n".join(_scripts(root))
    assert "PWNED" not in scripts and "touch" not in scripts
    assert "is not a plain path" in done.stdout  # said: not copied
    for script in _scripts(root):  # and the serve step still runs as a shell would read it
        subprocess.run(["bash", "-n", "-c", script], check=True)


def test_a_plain_agents_folder_is_copied_quoted(tmp_path: Path) -> None:
    root = _repo(tmp_path, **{"Makefile": "serve:\n\tadk api_server my_agents --port 8080\n"})
    assert run_cli("init", str(root)).returncode == 0
    assert any("adk api_server my_agents --port 8080 >" in s for s in _scripts(root))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/stdin"])
def test_an_agent_file_that_is_a_device_is_not_read(tmp_path: Path, device: str) -> None:
    root = _repo(tmp_path)
    (root / "agents/a").mkdir(parents=True)
    (root / "agents/a/agent.py").symlink_to(device)
    read, write = os.pipe()  # /dev/stdin an open pipe nobody writes to: a read would hang
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ci_eval", "init", str(root), "--dry-run"],
            stdin=read,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(read)
        os.close(write)
    assert done.returncode == 0, done.stderr


def test_a_github_folder_that_links_outside_is_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "workflows").mkdir(parents=True)
    (outside / "workflows/evals.yml").write_text("theirs\n")
    root = _repo(tmp_path / "repo", **{"agents/a/agent.py": AGENT})
    (root / ".github").symlink_to(outside)
    for args in ((), ("--force",)):
        done = run_cli("init", str(root), *args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "kept .github/workflows/evals.yml: .github is a symlink" in done.stdout
        assert (outside / "workflows/evals.yml").read_text() == "theirs\n"
        assert sorted(p.name for p in (outside / "workflows").iterdir()) == ["evals.yml"]


def test_force_replaces_only_a_regular_file(tmp_path: Path) -> None:
    root = _repo(tmp_path, **{"agents/a/agent.py": AGENT})
    (tmp_path / "elsewhere.toml").write_text("mine\n")
    (root / "ci-eval.toml").symlink_to(tmp_path / "elsewhere.toml")
    done = run_cli("init", str(root), "--force")
    assert "kept ci-eval.toml: ci-eval.toml is a symlink" in done.stdout
    assert (tmp_path / "elsewhere.toml").read_text() == "mine\n"


def test_a_folder_name_that_is_not_utf8_is_said_with_its_escapes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folder = os.fsencode(root) + b"/evals\xff"
    os.makedirs(folder)
    with open(folder + b"/s.evalset.json", "w") as out:
        out.write(EVALSET)
    (root / "agents/a").mkdir(parents=True)
    (root / "agents/a/agent.py").write_text(AGENT)
    done = subprocess.run(
        [sys.executable, "-m", "ci_eval", "init", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "evals\\xff" in done.stdout and "is not UTF-8" in done.stdout
    toml = (root / "ci-eval.toml").read_text("utf-8")
    assert "evals\\xff" in toml and "rename it" in toml
