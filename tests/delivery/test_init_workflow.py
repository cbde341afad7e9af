"""What ``ci-eval init`` writes runs as written: on a copy of an LLM-free ADK project, the
workflow's jobs are run step by step as GitHub's runner runs them (tests/delivery/runner.py) —
main's record job, then a pull request's job with the real setup action — and give a verdict
with no edit. Two things differ from github.com, and only these: the agent's port is a free
one, and ci-eval is installed from the local wheel instead of from github.com."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_init import AGENT_PY, CONFIG, EVAL_SET
from tests.conftest import REPO
from tests.delivery.runner import Run, path_env, run_composite, run_job
from tests.delivery.test_composite import WHEELHOUSE, install
from tests.helpers import git, run_cli

ACTION = "my-org/ci-eval@v9.9.9"
INSTALL = f'"ci-eval @ git+https://github.com/{ACTION}"'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """The LLM-free ADK project of tests/cli/test_init.py, set up by init."""
    pytest.importorskip("google.adk")
    wheels = sorted(WHEELHOUSE.glob("ci_eval-*.whl"))
    if not wheels:
        pytest.skip(f"no wheelhouse at {WHEELHOUSE} (.ci/run makes it)")
    root = tmp_path / "repo"
    (root / "my_agent").mkdir(parents=True)
    (root / "my_agent/__init__.py").write_text("from . import agent  # noqa: F401\n")
    (root / "my_agent/agent.py").write_text(AGENT_PY)
    (root / "my_agent/weather.evalset.json").write_text(json.dumps(EVAL_SET, indent=2))
    (root / "my_agent/test_config.json").write_text(json.dumps(CONFIG))
    git(root, "init", "-q")
    done = run_cli("init", "--action", ACTION, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    yield root


@pytest.fixture
def job_python(tmp_path: Path) -> Path:
    """The job's Python, as setup-python gives it: a venv whose pip finds this suite's
    packages installed (google-adk among them) and nothing on the network."""
    venv = tmp_path / "job python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    ours = sysconfig.get_paths()["purelib"]
    (site / "suite.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return venv / "bin"


def _action_checkout(tmp_path: Path) -> Path:
    """The action's repository at its ref, as `uses: OWNER/REPO/setup@REF` checks it out."""
    action = tmp_path / "action"
    action.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in (*install.SOURCE, "setup"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, action / name, ignore=ignore)
        else:
            shutil.copy2(source, action / name)
    return action


class Job:
    """One job's run: its environment, the fakes of the actions it uses, what it uploaded."""

    def __init__(self, repo: Path, temp: Path, bin_dir: Path, port: int, action: Path) -> None:
        self.repo, self.temp, self.port, self.action = repo, temp, port, action
        self.uploaded: dict[str, list[str]] = {}
        self.setup: Run | None = None
        self.env = {
            **path_env(),
            "PATH": os.pathsep.join(
                [str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
            ),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(WHEELHOUSE),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_COMPILE": "1",
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
        }

    def fakes(self) -> dict[str, Any]:
        def checkout(given: dict[str, str], env: dict[str, str]) -> dict[str, str]:
            if given.get("ref") == "ci-eval-data":
                raise RuntimeError("no branch ci-eval-data yet")  # the very first run
            return {}  # the workspace is the repository, checked out

        def upload(given: dict[str, str], env: dict[str, str]) -> dict[str, str]:
            paths = given["path"].split()
            missing = [p for p in paths if not (self.repo / p).is_file()]
            assert not missing, f"upload-artifact: no {missing}"
            self.uploaded[given["name"]] = paths
            return {}

        def setup(given: dict[str, str], env: dict[str, str]) -> dict[str, str]:
            self.setup = run_composite(
                self.action / "setup" / "action.yml",
                given,
                workspace=self.repo,
                temp=self.temp,
                env=env,
                fakes={
                    "actions/setup-python": lambda g, e: {"python-path": sys.executable},
                    "actions/cache/restore": lambda g, e: {"cache-hit": "false"},
                    "actions/cache/save": lambda g, e: {},
                },
            )
            if self.setup.failed:
                raise RuntimeError("the setup action failed")
            return self.setup.outputs

        return {
            "actions/checkout": checkout,
            "actions/setup-python": lambda g, e: {},
            "actions/upload-artifact": upload,
            "my-org/ci-eval/setup": setup,
        }

    def run(self, workflow: Path, job: str) -> Run:
        try:
            return run_job(
                workflow, job, workspace=self.repo, temp=self.temp, env=self.env,
                fakes=self.fakes(),
            )  # fmt: skip
        finally:  # the agent the job started in the background
            subprocess.run(["pkill", "-f", f"api_server . --port {self.port}"], check=False)


def _as_run_here(repo: Path, port: int, wheel: Path) -> Path:
    """The written workflow with only the port and ci-eval's source changed."""
    written = (repo / ".github/workflows/evals.yml").read_text()
    assert written.count(INSTALL) == 1 and ":8000" in written and "--port 8000 " in written
    here = written.replace(":8000", f":{port}").replace("--port 8000 ", f"--port {port} ")
    here = here.replace(INSTALL, f'"ci-eval @ {wheel.as_uri()}"')
    path = repo.parent / "evals.yml"
    path.write_text(here)
    return path


def _agent_log(repo: Path) -> str:
    log = repo / "agent.log"
    return f"\n--- agent.log\n{log.read_text()[-2000:]}" if log.is_file() else ""


def test_the_workflow_init_writes_records_main_and_gates_a_pull_request_as_written(
    repo: Path, job_python: Path, tmp_path: Path
) -> None:
    port = _free_port()
    wheel = sorted(WHEELHOUSE.glob("ci_eval-*.whl"))[-1]
    workflow = _as_run_here(repo, port, wheel)
    action = _action_checkout(tmp_path)

    # a push to main: main's agent served, the run recorded, only errors fail the push
    main_temp = tmp_path / "main runner temp"
    main_temp.mkdir()
    record = Job(repo, main_temp, job_python, port, action).run(workflow, "record")
    logs = "\n".join(f"--- {s.name} ({s.outcome})\n{s.log[-2000:]}" for s in record.steps)
    logs += _agent_log(repo)
    assert not any(s.conclusion == "failure" for s in record.steps), logs
    assert (repo / ".ci-eval-data/baseline.json").is_file(), logs
    results = json.loads((repo / "ci-eval-results.json").read_text())
    assert [c["status"] for s in results["sets"] for c in s["cases"]].count("PASSED") == 2

    # a pull request: its agent served, the setup action's verdict
    pr_temp = tmp_path / "pr runner temp"
    pr_temp.mkdir()
    job = Job(repo, pr_temp, job_python, port, action)
    pr = job.run(workflow, "evals")
    assert job.setup is not None, "\n".join(s.log[-2000:] for s in pr.steps)
    outputs = job.setup.outputs
    summary = (pr_temp / "summary.md").read_text()
    assert (outputs["gate"], outputs["passed"], outputs["failed"]) == ("failed", "2", "1"), summary
    assert "gate failed: 1 failed case (weather:berlin)" in summary
    assert pr.step("evals").outcome == "failure"  # the gate's verdict fails the job
