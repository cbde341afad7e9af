"""The composite action (``setup/action.yml``) run step by step as the runner runs it: it
installs ci-eval outside the workspace and runs it, keeps pip's cache whatever the gate
decides, skips the cache (never fails) when pip has none, takes paths with spaces one per line,
installs google-adk when ci-eval.toml says the agent is adk; and the self-test's own check of
the outputs holds on what it produces.

The install is real (a venv, pip, the action's source) but offline: pip reads the wheels
``.ci/run`` puts in its venv's ``wheelhouse`` (``CI_EVAL_WHEELHOUSE`` elsewhere)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SAMPLES
from tests.delivery.runner import Run, path_env, run_composite

SETUP = REPO / "setup"
# the venv the suite runs in: .ci/run makes the wheelhouse beside its packages
WHEELHOUSE = Path(os.environ.get("CI_EVAL_WHEELHOUSE") or Path(sys.prefix) / "wheelhouse")
AGENT = "python samples/agents/weather_agent/command_agent.py"


def _module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install = _module(SETUP / "install.py", "ci_eval_setup_install")
expect = _module(REPO / ".github" / "self-test" / "expect.py", "ci_eval_self_test_expect")


class Cache:
    """actions/cache/restore and /save: what they were asked, a miss on restore."""

    def __init__(self) -> None:
        self.restored: list[dict[str, str]] = []
        self.saved: list[dict[str, str]] = []

    def fakes(self) -> dict[str, Any]:
        def setup_python(given: dict[str, str], env: dict[str, str]) -> dict[str, str]:
            assert given == {"python-version": "3.11", "update-environment": "false"}
            return {"python-path": sys.executable, "python-version": "3.11.7"}

        def restore(given: dict[str, str], env: dict[str, str]) -> dict[str, str]:
            assert given["path"] and given["key"].startswith("ci-eval-pip-")
            self.restored.append(given)
            return {"cache-hit": "false"}

        def save(given: dict[str, str], env: dict[str, str]) -> dict[str, str]:
            self.saved.append(given)
            return {}

        return {
            "actions/setup-python": setup_python,
            "actions/cache/restore": restore,
            "actions/cache/save": save,
        }


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One RUNNER_TEMP for the module, as one job's: the second use reuses the venv."""
    if not any(WHEELHOUSE.glob("*.whl")):
        pytest.skip(f"no wheelhouse at {WHEELHOUSE} (.ci/run makes it)")
    return tmp_path_factory.mktemp("runner temp")


def _workspace(tmp_path: Path) -> Path:
    """A repository with the samples and this action's checkout in it (``uses: ./setup``)."""
    workspace = tmp_path / "work space"
    shutil.copytree(SAMPLES, workspace / "samples")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in install.SOURCE:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, workspace / name, ignore=ignore)
        else:
            shutil.copy2(source, workspace / name)
    shutil.copytree(SETUP, workspace / "setup", ignore=ignore)
    return workspace


def _run(workspace: Path, temp: Path, cache: Cache, inputs: dict[str, str], **env: str) -> Run:
    job_env = {
        **path_env(),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # byte code is written at first import instead, as the test's job needs no more
        "PIP_NO_COMPILE": "1",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
        **env,
    }
    return run_composite(
        workspace / "setup" / "action.yml",
        inputs,
        workspace=workspace,
        temp=temp,
        env=job_env,
        fakes=cache.fakes(),
    )


def test_a_failed_gate_fails_the_step_and_still_saves_pips_cache(
    tmp_path: Path, runner_temp: Path
) -> None:
    workspace = _workspace(tmp_path)
    cache = Cache()
    run = _run(
        workspace,
        runner_temp,
        cache,
        {"agent": "command", "agent-command": AGENT, "paths": "samples/evals", "comment": "false"},
    )
    assert run.step("install").outcome == "success", run.step("install").log
    assert run.step("run").outcome == "failure"  # the gate: the sample's expected failure
    assert run.outputs["gate"] == "failed" and run.outputs["failed"] == "1"
    assert run.outputs["total"] == "6"
    assert len(cache.restored) == 1 and cache.saved == cache.restored  # saved after a failure
    assert (workspace / run.outputs["junit-path"]).is_file()
    leftovers = [p.name for p in workspace.rglob("*") if p.name in ("build", "ci_eval.egg-info")]
    assert leftovers == []


def test_without_pips_cache_the_cache_is_skipped_and_paths_may_hold_spaces(
    tmp_path: Path, runner_temp: Path
) -> None:
    workspace = _workspace(tmp_path)
    (workspace / "samples" / "evals").rename(workspace / "samples" / "eval sets")
    cache = Cache()
    run = _run(
        workspace,
        runner_temp,
        cache,
        {
            "agent": "command",
            "agent-command": AGENT,
            "paths": "samples/eval sets\n",
            "fail-on": "error",
            "comment": "false",
        },
        PIP_NO_CACHE_DIR="1",
    )
    assert not run.failed, [s.log for s in run.steps if s.outcome == "failure"]
    assert run.step("plan").outputs["pip-cache"] == ""
    assert not run.ran("restore") and cache.saved == []
    # the self-test's check of every leg holds on what the action gives
    assert expect.problems(run.outputs, workspace) == []


def _plan(tmp_path: Path, toml: str | None, **inputs: str) -> dict[str, str]:
    workspace = Path(tempfile.mkdtemp(dir=tmp_path))
    (workspace / "agents").mkdir()
    if toml is not None:
        (workspace / "ci-eval.toml").write_text(toml)
    env = {"CI_EVAL_SRC": str(REPO), "GITHUB_WORKSPACE": str(workspace)}
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    return install.plan(env, sys.executable)


def test_adk_in_ci_eval_toml_installs_google_adk(tmp_path: Path) -> None:
    planned = _plan(tmp_path, '[agent]\nkind = "adk"\nmodule = "agents/x"\n')
    assert planned["extras"] == "adk" and planned["cache-key"].endswith("-adk")


def test_the_agent_input_wins_over_ci_eval_toml(tmp_path: Path) -> None:
    assert _plan(tmp_path, '[agent]\nkind = "adk"\n', agent="command")["extras"] == ""
    assert _plan(tmp_path, None, agent="adk")["extras"] == "adk"


def test_the_settings_file_is_found_as_ci_eval_finds_it(tmp_path: Path) -> None:
    toml = '[agent]\nkind = "adk"\n'
    assert _plan(tmp_path, toml, working_directory="agents")["extras"] == "adk"  # above
    (tmp_path / "elsewhere.toml").write_text(toml)
    assert _plan(tmp_path, None, config="../elsewhere.toml")["extras"] == "adk"
    assert _plan(tmp_path, toml, config="../missing.toml")["extras"] == ""


def test_a_settings_file_that_is_not_toml_installs_the_slim_set(tmp_path: Path) -> None:
    assert _plan(tmp_path, "[agent\n")["extras"] == ""  # ci-eval itself reports the file


def test_the_cache_key_changes_with_the_pins(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "pyproject.toml").write_text("x")
    (source / "constraints.txt").write_text("a==1\n")
    before = install.source_hash(source, "")
    (source / "constraints.txt").write_text("a==2\n")
    assert install.source_hash(source, "") != before != install.source_hash(source, "adk")


def test_pip_without_a_cache_gives_no_cache_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    assert install.pip_cache_dir(sys.executable) == ""
    monkeypatch.delenv("PIP_NO_CACHE_DIR")
    assert install.pip_cache_dir(sys.executable) != ""


def test_a_setup_failure_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install.main(["install"], {}) == 1
    assert capsys.readouterr().out == "::error title=ci-eval setup::'CI_EVAL_SRC' is not set\n"
    assert install.main(["what"], {}) == 2
