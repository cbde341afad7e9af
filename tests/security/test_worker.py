"""Code a pull request controls never runs in ci-eval's process (the one holding the job's
token): each attack tried as a hostile pull request would, through the CLI, on a real git
repository whose branch ``feature`` is the pull request and ``main`` its base.

Every hostile file leaves a mark when it runs: the process id it ran in and the token it read.
A mark with this process's id would be the job's credentials in the PR's hands."""

from __future__ import annotations

import json
import os
import py_compile
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import git, run_cli

TOKEN = "ghs_" + "s3cr3t" * 6
MARK = (
    "import os as _os, pathlib as _pathlib\n"
    "_pathlib.Path({where!r}).write_text("
    "f\"{{_os.getpid()}} {{_os.environ.get('GITHUB_TOKEN', '')}}\")\n"
)
AGENT = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps({'final_response': 'it rains in Paris'}), flush=True)\n"
)
EVALSET = {
    "eval_set_id": "basic",
    "eval_cases": [
        {
            "eval_id": "paris",
            "conversation": [
                {
                    "invocation_id": "i",
                    "user_content": {"role": "user", "parts": [{"text": "Paris?"}]},
                    "final_response": {"role": "model", "parts": [{"text": "sunny, 21 C"}]},
                }
            ],
        }
    ],
}
TOML = """[agent]
kind = "command"
command = "python echo_agent.py"

[custom_metrics]
mine = "team.metrics:score"

[metrics]
response_match_score = 0.8
mine = 0.5
"""
METRICS = (
    "from team import helper\n\n\n"
    "def score(expected, actual, criterion):\n    return helper.value()\n"
)
HELPER = "def value():\n    return 0.25\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """main: a command agent that answers wrong (the case fails response_match_score), a team
    metric and its helper; the pull request's branch ``feature`` is checked out."""
    root = tmp_path / "repo"
    (root / "team").mkdir(parents=True)
    (root / "evals").mkdir()
    (root / "echo_agent.py").write_text(AGENT)
    (root / "ci-eval.toml").write_text(TOML)
    (root / "evals/basic.evalset.json").write_text(json.dumps(EVALSET))
    (root / "team/__init__.py").write_text("")
    (root / "team/metrics.py").write_text(METRICS)
    (root / "team/helper.py").write_text(HELPER)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "feature")
    monkeypatch.chdir(root)
    yield root
    for name in [m for m in sys.modules if m.split(".")[0] in ("team", "evil")]:
        del sys.modules[name]


def _pull_request(root: Path, files: dict[str, str | bytes]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text)
    git(root, "add", "-f", ".")
    git(root, "commit", "-q", "-m", "the pull request")


def _run(root: Path, *extra: str) -> tuple[int, str, dict]:
    env = {
        **os.environ,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_BASE_REF": "main",
        "GITHUB_EVENT_NAME": "pull_request",
    }
    results = root / "out/results.json"
    proc = run_cli(
        "run", "evals", "--results", str(results), "--summary", str(root / "out/summary.md"),
        *extra, cwd=root, env=env,
    )  # fmt: skip
    assert TOKEN not in proc.stdout + proc.stderr
    data = json.loads(results.read_text()) if results.exists() else {}
    return proc.returncode, proc.stdout + proc.stderr, data


def _case_metrics(data: dict) -> dict[str, dict]:
    [case] = [c for s in data["sets"] for c in s["cases"]]
    return {m["name"]: m for m in case["metrics"]}


def _metrics(data: dict) -> dict[str, str]:
    return {name: m["status"] for name, m in _case_metrics(data).items()}


def _not_here(mark: Path) -> None:
    """The hostile code did not run in this process, nor with the token."""
    if mark.exists():
        pid, _, token = mark.read_text().partition(" ")
        assert int(pid) != os.getpid(), "the pull request's code ran in ci-eval's process"
        assert token == "", "the pull request's code read the job's token"


def test_a_module_the_pr_adds_under_a_dependency_s_name_is_never_imported(repo: Path) -> None:
    mark = repo.parent / "jinja2-ran"
    _pull_request(repo, {"jinja2/__init__.py": MARK.format(where=str(mark))})
    code, said, data = _run(repo)
    assert not mark.exists()  # installed jinja2 wins, in the worker too; never the PR's
    assert code == 1, said  # the case fails as it does without the PR's file
    assert _metrics(data)["response_match_score"] == "FAILED"
    assert (repo / "out/summary.md").read_text().startswith("#")  # rendered by the real jinja2


def test_an_edited_helper_of_an_unchanged_metric_runs_in_the_worker_and_decides_nothing(
    repo: Path,
) -> None:
    mark = repo.parent / "helper-ran"
    hostile = (
        MARK.format(where=str(mark))
        + "from ci_eval.metrics import REGISTRY\n"  # the worker's registry: not the job's
        + "REGISTRY.pop('response_match_score', None)\n"
        + "def value():\n    return 1.0\n"
    )
    _pull_request(repo, {"team/helper.py": hostile})
    code, said, data = _run(repo)
    _not_here(mark)
    assert mark.exists()  # it ran, in the worker, without the token
    statuses = _metrics(data)
    assert statuses["mine"] == "NOT_EVALUATED"
    assert statuses["response_match_score"] == "FAILED"  # the job's scorer, untouched
    assert code == 1, said
    why = "custom metric mine: code it runs (team/helper.py) is added or changed by this pull"
    assert why in str(_case_metrics(data)["mine"])
    assert f"warning: {why}" in said  # and the run says it


def test_an_unchecked_bytecode_file_beside_an_unchanged_module_is_never_read(
    repo: Path, tmp_path: Path
) -> None:
    mark = repo.parent / "pyc-ran"
    source = tmp_path / "metrics.py"
    source.write_text(MARK.format(where=str(mark)) + "def score(*a):\n    return 1.0\n")
    cache = repo / "team/__pycache__" / f"metrics.{sys.implementation.cache_tag}.pyc"
    cache.parent.mkdir()
    py_compile.compile(
        str(source), str(cache), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    _pull_request(repo, {})
    code, said, data = _run(repo)
    assert not mark.exists()  # the module ran from its source, the merge base's
    assert _metrics(data)["mine"] == "FAILED"  # helper.value() = 0.25, from source
    assert code == 1, said


def test_a_workspace_entry_point_the_pr_adds_is_not_run(repo: Path) -> None:
    mark = repo.parent / "plugin-ran"
    _pull_request(
        repo,
        {
            "evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
            "evil-1.0.dist-info/entry_points.txt": "[ci_eval.metrics]\nloud = evil:score\n",
            "evil.py": MARK.format(where=str(mark)) + "def score(*a):\n    return 1.0\n",
            "ci-eval.toml": TOML,
        },
    )
    code, said, data = _run(repo, "--metric", "response_match_score", "--metric", "loud=0.5")
    assert not mark.exists()
    loud = _case_metrics(data)["loud"]
    assert loud["status"] == "NOT_EVALUATED"
    assert "code it runs (evil-1.0.dist-info/entry_points.txt) is added or changed" in str(loud)
    assert code == 1, said


def test_a_workspace_entry_point_on_main_runs_in_the_worker(repo: Path) -> None:
    mark = repo.parent / "plugin-ran"
    git(repo, "checkout", "-q", "main")
    _pull_request(
        repo,
        {
            "evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
            "evil-1.0.dist-info/entry_points.txt": "[ci_eval.metrics]\nloud = evil:score\n",
            "evil.py": MARK.format(where=str(mark)) + "def score(*a):\n    return 1.0\n",
        },
    )
    git(repo, "checkout", "-q", "-b", "feature2")
    _, _, data = _run(repo, "--metric", "response_match_score", "--metric", "loud=0.5")
    _not_here(mark)
    assert mark.exists()
    assert _metrics(data)["loud"] == "PASSED", _case_metrics(data)["loud"]


def test_a_code_config_naming_a_standard_library_function_runs_in_the_worker(
    repo: Path,
) -> None:
    pytest.importorskip("google.adk")
    config = {
        "criteria": {"response_match_score": 0.8, "json.dumps": 0.5},
        "custom_metrics": {"json.dumps": {"code_config": {"name": "json.dumps"}}},
    }
    _pull_request(repo, {"evals/test_config.json": json.dumps(config)})
    code, said, data = _run(repo)
    statuses = _metrics(data)
    assert statuses["json.dumps"] in ("ERROR", "NOT_EVALUATED")  # never a pass
    assert statuses["response_match_score"] == "FAILED"
    assert code != 0, said


def test_the_in_process_adk_agent_runs_in_a_worker_without_the_token(repo: Path) -> None:
    pytest.importorskip("google.adk")
    mark = repo.parent / "agent-ran"
    agent = (
        MARK.format(where=str(mark))
        + "from google.adk.agents import BaseAgent\n"
        + "class Quiet(BaseAgent):\n"
        + "    async def _run_async_impl(self, ctx):\n"
        + "        return\n        yield\n"
        + "root_agent = Quiet(name='quiet')\n"
    )
    _pull_request(repo, {"quiet_agent/__init__.py": "from . import agent\n",
                         "quiet_agent/agent.py": agent})  # fmt: skip
    code, said, _ = _run(repo, "--agent", "adk", "--agent-module", "quiet_agent")
    _not_here(mark)
    assert mark.exists(), said  # the agent ran: in its worker
    assert code == 1, said
