"""The GitHub Action: `ci-eval action` run the way its container runs it, against the real ADK
api_server and a loopback GitHub; action.yml, the entrypoint and the README agree; sharding
partitions cases and merging shards gives the unsharded run's verdict."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval.action import INPUTS, OUTPUTS
from ci_eval.shard import shard_of
from tests.adk_server import adk_api_server
from tests.conftest import REPO, SAMPLES
from tests.github_server import GitHubServer

TOKEN = "ghs_actionTokenValue123"


def _action_yml() -> str:
    return (REPO / "action.yml").read_text()


def _yml_names(section: str) -> list[str]:
    text = _action_yml()
    block = text.split(f"\n{section}:\n", 1)[1]
    block = re.split(r"\n\S", block, maxsplit=1)[0]
    return re.findall(r"^  ([a-z0-9-]+):$", block, re.MULTILINE)


def test_action_yml_inputs_are_the_entrypoints_and_documented() -> None:
    inputs = _yml_names("inputs")
    assert sorted(inputs) == sorted(INPUTS)
    readme = (REPO / "README.md").read_text()
    for name in inputs:
        assert f"`{name}`" in readme, f"input {name} is not in the README"
    assert sorted(_yml_names("outputs")) == sorted(OUTPUTS)
    assert "using: docker" in _action_yml() and "image: Dockerfile" in _action_yml()


def test_dockerfile_is_small_pinned_and_runs_the_entrypoint() -> None:
    text = (REPO / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11\.\d+-slim", text, re.MULTILINE)
    assert 'ENTRYPOINT ["ci-eval", "action"]' in text
    assert "safe.directory '*'" in text
    assert not re.search(r"^(USER|WORKDIR)\b", text, re.MULTILINE)


@pytest.fixture(scope="module")
def adk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with adk_api_server(tmp_path_factory.mktemp("adk")) as url:
        yield url


def _job(workspace: Path, api: str, **inputs: str) -> dict[str, str]:
    event = workspace.parent / "event.json"
    event.write_text(json.dumps({"action": "opened", "pull_request": {"number": 9}}))
    for name in ("summary.md", "output.txt"):
        (workspace.parent / name).write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(workspace.parent),
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_API_URL": api,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_WORKFLOW": "evals",
        "GITHUB_JOB": "agent",
        "GITHUB_STEP_SUMMARY": str(workspace.parent / "summary.md"),
        "GITHUB_OUTPUT": str(workspace.parent / "output.txt"),
        # action.yml's defaults, as the runner passes them
        "INPUT_JUNIT": "ci-eval-junit.xml",
        "INPUT_RESULTS": "ci-eval-results.json",
        "INPUT_COMMENT": "true",
        "INPUT_JOB-SUMMARY": "true",
        "INPUT_GITHUB-TOKEN": TOKEN,
    }
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return env


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLES / "evals", workspace / "evals")
    return workspace


def test_the_action_end_to_end(adk_server: str, tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    with GitHubServer() as hub:
        env = _job(
            workspace,
            hub.url,
            agent="adk-http",
            agent_url=adk_server,
            paths="evals/weather_basic.evalset.json",
        )
        proc = subprocess.run(
            [sys.executable, "-m", "ci_eval", "action"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        posted = [body for method, _, body in hub.requests if method == "POST"]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # berlin fails; no baseline
    junit = (workspace / "ci-eval-junit.xml").read_text()
    assert 'tests="3"' in junit and 'failures="1"' in junit
    assert 'file="evals/weather_basic.evalset.json"' in junit  # repo-relative
    results = json.loads((workspace / "ci-eval-results.json").read_text())
    assert results["totals"]["passed"] == 2
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("## ❌ ci-eval failed: 1 failed of 3 cases")
    outputs = dict(
        line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines()
    )
    for name in OUTPUTS:
        assert name in outputs
    assert (outputs["total"], outputs["failed"], outputs["regressions"]) == ("3", "1", "0")
    assert outputs["junit-path"] == "ci-eval-junit.xml"
    assert "::error file=evals/weather_basic.evalset.json,line=49," in proc.stdout
    [comment] = posted
    assert comment["body"].startswith("<!-- ci-eval report (id: evals/agent) -->")
    lines = [
        x for x in (proc.stdout + proc.stderr).splitlines() if not x.startswith("::add-mask::")
    ]
    assert not any(TOKEN in x for x in lines)


def test_a_bad_input_is_one_error_line(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    env = _job(workspace, "http://127.0.0.1:9", agent="command", num_runs="many")
    proc = subprocess.run(
        [sys.executable, "-m", "ci_eval", "action"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "::error title=ci-eval::input num-runs: 'many' is not an integer" in proc.stdout
    env = _job(workspace, "http://127.0.0.1:9")  # no agent input and no ci-eval.toml
    proc = subprocess.run(
        [sys.executable, "-m", "ci_eval", "action"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "input agent is required" in proc.stdout


def test_underscore_input_names_work_too(tmp_path: Path) -> None:
    from ci_eval.action import get_input

    assert get_input({"INPUT_NUM_RUNS": "3"}, "num-runs") == "3"
    assert get_input({"INPUT_NUM-RUNS": "2", "INPUT_NUM_RUNS": "3"}, "num-runs") == "2"
    assert get_input({"INPUT_NUM-RUNS": "  "}, "num-runs") is None


# --- sharding --------------------------------------------------------------------------------


@pytest.mark.parametrize("total", range(1, 9))
def test_shards_partition_the_cases(total: int) -> None:
    keys = [(f"set{s}", f"case{c}") for s in range(7) for c in range(40)]
    owners = Counter(shard_of(s, c, total) for s, c in keys)
    assert sum(owners.values()) == len(keys)  # every case exactly once
    assert set(owners) == set(range(1, total + 1))  # no shard left empty at this size


def test_merging_shards_gives_the_unsharded_verdict(tmp_path: Path) -> None:
    command = "python samples/agents/weather_agent/command_agent.py"

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "ci_eval",
                "run",
                "samples/evals",
                "samples/orchestrate/weather_paris.json",
                "--agent",
                "command",
                "--agent-command",
                command,
                *extra,
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO,
        )

    whole = run("--results", str(tmp_path / "whole.json"))
    shards = [tmp_path / f"shard{i}.json" for i in (1, 2, 3)]
    for i, path in enumerate(shards, 1):
        run("--shard", f"{i}/3", "--results", str(path))
    merged = tmp_path / "merged.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ci_eval", "merge", *map(str, shards), "-o", str(merged)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr

    def verdicts(path: Path) -> dict:
        data = json.loads(path.read_text())
        return {
            (s["eval_set_id"], c["eval_id"]): (
                c["status"],
                [(m["name"], m["score"]) for m in c["metrics"] if not m["informational"]],
            )
            for s in data["sets"]
            for c in s["cases"]
        }

    assert verdicts(merged) == verdicts(tmp_path / "whole.json")
    assert (
        json.loads(merged.read_text())["totals"]
        == json.loads((tmp_path / "whole.json").read_text())["totals"]
    )
    again = subprocess.run(
        [sys.executable, "-m", "ci_eval", "report", str(merged)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == whole.returncode == 1
    dup = subprocess.run(
        [
            sys.executable,
            "-m",
            "ci_eval",
            "merge",
            str(shards[0]),
            str(shards[0]),
            "-o",
            str(tmp_path / "x.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert dup.returncode == 2 and "were the shards run with different" in dup.stderr
