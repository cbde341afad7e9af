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
import tomllib
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ci_eval.cli.action_entry import INPUTS, OUTPUTS
from ci_eval.run.selection import shard_of
from tests.conftest import REPO, SAMPLES
from tests.github_server import GitHubServer
from tests.helpers import WEATHER_AGENT, run_cli, run_process

TOKEN = "ghs_actionTokenValue123"


def _action_yml(name: str = "action.yml") -> str:
    return (REPO / name).read_text()


def test_action_yml_inputs_are_the_entrypoints_and_documented() -> None:
    action = yaml.safe_load(_action_yml())
    inputs = list(action["inputs"])
    assert sorted(inputs) == sorted(INPUTS)
    readme = (REPO / "README.md").read_text()
    for name in inputs:
        assert f"`{name}`" in readme, f"input {name} is not in the README"
    assert sorted(action["outputs"]) == sorted(OUTPUTS)


def test_the_actions_run_the_release_image_of_this_version() -> None:
    from ci_eval import IMAGE, __version__

    assert f"\n  using: docker\n  image: docker://{IMAGE}:v{__version__}\n" in _action_yml()
    adk = _action_yml("adk/action.yml")
    assert f"\n  using: docker\n  image: docker://{IMAGE}:v{__version__}-adk\n" in adk
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__


def test_the_composite_action_passes_every_input_to_the_entrypoint_through_env() -> None:
    steps = {
        s.get("id"): s for s in yaml.safe_load(_action_yml("setup/action.yml"))["runs"]["steps"]
    }
    run = steps["run"]
    for name in INPUTS:
        env = f"INPUT_{name.upper().replace('-', '_')}"
        assert run["env"][env] == f"${{{{ inputs.{name} }}}}", name
    assert "${{" not in run["run"] and 'ci-eval" action' in run["run"]
    assert "install.py" in steps["install"]["run"] and "install.py" in steps["plan"]["run"]


def _from_tags(dockerfile: str) -> list[str]:
    return re.findall(r"^FROM (\S+)", dockerfile, re.MULTILINE)


def test_dockerfile_is_slim_locked_and_runs_the_entrypoint() -> None:
    text = (REPO / "Dockerfile").read_text()
    tags = _from_tags(text)
    assert len(tags) == 2 and len(set(tags)) == 1  # a build stage and the image, one base
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", tags[0])
    build, image = text.split("\nFROM ")[1:]
    assert "--constraint /src/constraints.txt" in build and "--no-cache-dir" in build
    assert "apt-get" not in image and "pip install" not in image  # nothing built in the image
    assert "COPY --from=build /usr/bin/git /usr/bin/git" in image  # git without perl
    assert 'ENTRYPOINT ["ci-eval", "action"]' in image
    assert "safe.directory '*'" in image
    assert not re.search(r"^(USER|WORKDIR)\b", text, re.MULTILINE)
    ignored = (REPO / ".dockerignore").read_text().split()
    assert "constraints.txt" not in ignored


def test_the_release_workflow_pins_the_base_and_pushes_both_images_for_two_arches() -> None:
    text = (REPO / ".github/workflows/release.yml").read_text()
    [tag] = set(_from_tags((REPO / "Dockerfile").read_text()))
    assert re.search(rf"^  BASE_IMAGE: {re.escape(tag)}$", text, re.MULTILINE)
    assert re.search(r"^  BASE_DIGEST: sha256:[0-9a-f]{64}$", text, re.MULTILINE)
    assert "${{ env.BASE_IMAGE }}=docker-image://${{ env.BASE_IMAGE }}@${{ env.BASE_DIGEST }}" in (
        text
    )
    assert 'tags: ["v*.*.*"]' in text
    assert "platforms: linux/amd64,linux/arm64" in text
    for action in ("docker/setup-qemu-action@", "docker/setup-buildx-action@"):
        assert action in text
    assert "docker/build-push-action@" in text and "push: true" in text
    assert "extras: adk" in text and "suffix: -adk" in text


def test_constraints_pin_every_runtime_dependency() -> None:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name.strip().lower())] = version
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["adk"]
    for requirement in wanted:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]
        assert pins.get(re.sub(r"[-_.]+", "-", name.lower())), f"{name} is not pinned"


def test_the_self_test_runs_every_way_to_use_the_action_and_reads_the_reports_back() -> None:
    jobs = yaml.safe_load((REPO / ".github/workflows/self-test.yml").read_text())["jobs"]
    uses = {
        job: [s.get("uses", "").split(" ")[0] for s in spec["steps"]] for job, spec in jobs.items()
    }
    assert "./" in uses["docker"] and "./adk" in uses["adk"] and "./setup" in uses["composite"]
    assert jobs["composite"]["strategy"]["matrix"]["os"] == [
        "ubuntu-latest",
        "macos-latest",
        "windows-latest",
    ]
    docker_build = " ".join(s.get("run", "") for s in jobs["docker"]["steps"])
    assert "image: Dockerfile|' action.yml" in docker_build
    adk_build = " ".join(s.get("run", "") for s in jobs["adk"]["steps"])
    assert "--build-arg EXTRAS=adk" in adk_build and "adk/action.yml" in adk_build
    assert any(u.startswith("actions/upload-artifact@") for u in uses["docker"])
    assert any(u.startswith("mikepenz/action-junit-report@") for u in uses["docker"])


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
        proc = run_process("action", env=env)
        posted = [body for method, _, body in hub.requests if method == "POST"]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # berlin fails; no baseline
    junit = (workspace / "ci-eval-junit.xml").read_text()
    assert 'tests="3"' in junit and 'failures="1"' in junit
    assert 'file="evals/weather_basic.evalset.json"' in junit  # repo-relative
    results = json.loads((workspace / "ci-eval-results.json").read_text())
    assert results["totals"]["passed"] == 2
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("## ❌ ci-eval: gate failed: 1 failed case")
    outputs = dict(
        line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines()
    )
    for name in OUTPUTS:
        assert name in outputs
    assert (outputs["total"], outputs["failed"], outputs["regressions"]) == ("3", "1", "0")
    assert outputs["gate"] == "failed"
    assert (
        outputs["verdict"] == "gate failed: 1 failed case (weather_basic:berlin_expected_to_fail); "
        "gate on thresholds only: no baseline at .ci-eval/baseline.json"
    )
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
    proc = run_cli("action", env=env)
    assert proc.returncode == 2
    assert "::error title=ci-eval::input num-runs: 'many' is not an integer" in proc.stdout
    env = _job(workspace, "http://127.0.0.1:9")  # no agent input and no ci-eval.toml
    proc = run_cli("action", env=env)
    assert proc.returncode == 2 and "no agent: give input agent (adk-http" in proc.stdout


def test_an_input_is_read_one_way_for_each_kind_of_action(tmp_path: Path) -> None:
    from ci_eval.cli.action_entry import get_input

    assert get_input({"INPUT_NUM_RUNS": "3"}, "num-runs") is None  # not the Docker action's
    assert get_input({"INPUT_NUM-RUNS": "2", "INPUT_NUM_RUNS": "3"}, "num-runs") == "2"
    assert get_input({"INPUT_NUM-RUNS": "  ", "INPUT_NUM_RUNS": "3"}, "num-runs") is None
    composite = {"CI_EVAL_ACTION": "setup"}
    assert get_input({**composite, "INPUT_NUM_RUNS": "3"}, "num-runs") == "3"
    assert get_input({**composite, "INPUT_NUM-RUNS": "2"}, "num-runs") is None
    assert get_input({**composite, "INPUT_NUM_RUNS": "", "INPUT_NUM-RUNS": "2"}, "num-runs") is None


def _sample_action(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`ci-eval action` on the samples (berlin fails) with the command agent."""
    workspace = _workspace(tmp_path)
    base = {
        "PATH": os.environ["PATH"],
        "GITHUB_WORKSPACE": str(workspace),
        "INPUT_COMMENT": "false",
        "INPUT_RESULTS": "r.json",
        "INPUT_PATHS": "evals/weather_basic.evalset.json",
    }
    return run_cli("action", env=base | env, cwd=workspace)


@pytest.mark.parametrize(
    ("kind", "honest", "forged"),
    [
        ({}, "INPUT_AGENT-COMMAND", "INPUT_FAIL_ON"),  # the Docker action: hyphens
        ({"CI_EVAL_ACTION": "setup"}, "INPUT_AGENT_COMMAND", "INPUT_FAIL-ON"),  # composite
    ],
)
def test_an_input_in_the_other_spelling_left_by_an_earlier_step_decides_nothing(
    tmp_path: Path, kind: dict[str, str], honest: str, forged: str
) -> None:
    inputs = {"INPUT_AGENT": "command", honest: WEATHER_AGENT}
    proc = _sample_action(tmp_path / "forged", **kind, **inputs, **{forged: "error"})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # berlin's failure still blocks
    name = forged.removeprefix("INPUT_")
    spelled = "INPUT_" + (name.replace("-", "_") if kind else name.replace("_", "-"))
    proc = _sample_action(tmp_path / "honest", **kind, **inputs, **{spelled: "error"})
    assert proc.returncode == 0, proc.stdout + proc.stderr  # as the input itself would


def test_an_empty_input_is_unset_with_no_fallback_to_the_other_spelling(tmp_path: Path) -> None:
    proc = _sample_action(
        tmp_path,
        CI_EVAL_ACTION="setup",
        INPUT_AGENT="command",
        INPUT_AGENT_COMMAND=WEATHER_AGENT,
        INPUT_FAIL_ON="",  # the composite passes every input, empty when not given
        **{"INPUT_FAIL-ON": "error"},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr


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
        return run_cli(
            "run",
            "samples/evals",
            "samples/orchestrate/weather_paris.json",
            "--agent",
            "command",
            "--agent-command",
            command,
            *extra,
            cwd=REPO,
        )

    whole = run("--results", str(tmp_path / "whole.json"))
    shards = [tmp_path / f"shard{i}.json" for i in (1, 2, 3)]
    for i, path in enumerate(shards, 1):
        run("--shard", f"{i}/3", "--results", str(path))
    merged = tmp_path / "merged.json"
    proc = run_cli("merge", *map(str, shards), "-o", str(merged))
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
    again = run_cli("report", str(merged))
    assert again.returncode == whole.returncode == 1
    dup = run_cli("merge", str(shards[0]), str(shards[0]), "-o", str(tmp_path / "x.json"))
    assert dup.returncode == 2 and "were the shards run with different" in dup.stderr


def test_agent_adk_in_the_slim_image_stops_at_once_naming_the_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The slim image has no google-adk: one line, exit 2, before any case (hidden here by
    blocking the import, as the image lacks the package)."""
    from ci_eval import IMAGE, __version__

    workspace = _workspace(tmp_path)
    env = _job(workspace, "http://127.0.0.1:9", agent="adk", agent_module="agents/x")
    env["CI_EVAL_IMAGE"] = "slim"
    monkeypatch.setitem(sys.modules, "google.adk", None)
    proc = run_cli("action", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("::error")]
    assert f"{IMAGE}:v{__version__}-adk" in line and "adk/action" not in line.split("uses: ")[0]
    assert not (workspace / "ci-eval-results.json").exists()  # no case ran


def test_agent_adk_without_google_adk_outside_the_image_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ci_eval.connectors import adk_missing_message

    assert adk_missing_message({}) is None  # the tests have google-adk
    # restored afterwards as it was: a google-adk this process imported stays imported
    monkeypatch.setitem(sys.modules, "google.adk", None)
    assert adk_missing_message({}) == "agent adk needs google-adk: pip install 'ci-eval[adk]'"
    composite = adk_missing_message({"CI_EVAL_ACTION": "setup"})
    assert composite is not None and "set the action's input `agent: adk`" in composite
