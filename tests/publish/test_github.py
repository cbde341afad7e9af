"""GitHub, against a loopback server that plays its REST API and a job's environment: the job
summary, outputs, annotations and the sticky PR comment (created once, then edited, never
duplicated), a read-only token, secondary rate limits; the token never leaks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_eval.publish import github
from tests.conftest import REPO
from tests.github_server import GitHubServer
from tests.helpers import run_cli, run_sample_agent

TOKEN = "ghs_s3cretT0kenValue"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gh")
    out = {"failing": folder / "failing.json", "passing": folder / "passing.json"}
    for name, extra in (("failing", []), ("passing", ["--metric", "response_match_score=0.2"])):
        run_sample_agent(
            "samples/evals/weather_basic.evalset.json",
            "--results",
            str(out[name]),
            *extra,
            cwd=REPO,
        )
    return out


def _job(tmp_path: Path, api: str, event: dict[str, Any] | None = None) -> dict[str, str]:
    event_path = tmp_path / "event.json"
    event_path.write_text(
        json.dumps(
            event if event is not None else {"action": "synchronize", "pull_request": {"number": 7}}
        )
    )
    for name in ("summary.md", "output.txt"):
        (tmp_path / name).touch()
    return {
        "PATH": os.environ["PATH"],
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_WORKFLOW": "evals",
        "GITHUB_JOB": "agent",
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_TOKEN": TOKEN,
    }


def _report(
    results_file: Path,
    env: dict[str, str],
    *extra: str,
) -> subprocess.CompletedProcess[str]:
    return run_cli("report", str(results_file), "--comment", *extra, env=env)


def _no_leak(proc: subprocess.CompletedProcess[str], *files: Path) -> None:
    lines = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if not line.startswith("::add-mask::")
    ]  # the runner swallows that command
    assert not any(TOKEN in line for line in lines)
    for file in files:
        assert TOKEN not in file.read_text()


def test_first_run_posts_then_edits_never_duplicates(
    results: dict[str, Path], tmp_path: Path
) -> None:
    with GitHubServer(others=150) as hub:
        env = _job(tmp_path, hub.url)
        first = _report(results["failing"], env)
        assert first.returncode == 1, first.stdout + first.stderr  # the gate, not the comment
        assert hub.writes() == ["POST"]
        assert hub.authorization == f"Bearer {TOKEN}"
        pages = [q for m, p, q in hub.requests if m == "GET" and p.endswith("/comments")]
        assert len(pages) == 2  # 150 comments by others: a second page was read
        second = _report(results["failing"], env)
        assert hub.writes() == ["POST"]  # unchanged body: nothing sent
        third = _report(results["passing"], env)
        assert third.returncode == 0
        assert hub.writes() == ["POST", "PATCH"]
        ours = [c for c in hub.comments if c["user"]["type"] == "Bot"]
        assert len(ours) == 1
        assert ours[0]["body"].startswith("<!-- ci-eval report (id: evals/agent) -->")
        assert "✅ ci-eval: gate passed: 3 of 3 cases passed" in ours[0]["body"]
    for proc in (first, second, third):
        _no_leak(proc, tmp_path / "summary.md", tmp_path / "output.txt")


def test_job_summary_outputs_and_annotations(results: dict[str, Path], tmp_path: Path) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        proc = _report(results["failing"], env, "--junit", str(tmp_path / "junit.xml"))
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("## ❌ ci-eval: gate failed: 1 failed case")
    outputs = dict(
        line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines()
    )
    assert outputs["passed"] == "2" and outputs["failed"] == "1" and outputs["total"] == "3"
    assert outputs["errors"] == "0" and outputs["junit-path"] == str(tmp_path / "junit.xml")
    assert outputs["score"] == "0.6667"
    assert (
        "::error file=samples/evals/weather_basic.evalset.json,line=49,"
        "title=FAILED%3A weather_basic%3Aberlin_expected_to_fail::"
        "tool_trajectory_avg_score 0 < 1; response_match_score 0.25 < 0.8 — "
        'turn 1: expected get_weather(city="Berlin", units="metric"), '
        'got get_weather(city="Berlin")'
    ) in proc.stdout
    assert f"::add-mask::{TOKEN}" in proc.stdout
    # agent-derived text is echoed between stop-commands markers
    start = proc.stdout.index("::stop-commands::")
    token = proc.stdout[start:].split("\n", 1)[0].split("::")[2]
    assert f"::{token}::" in proc.stdout
    assert proc.stdout.index("FAILED berlin") > start


def test_a_read_only_token_warns_and_the_summary_still_has_everything(
    results: dict[str, Path], tmp_path: Path
) -> None:
    with GitHubServer(forbidden=True) as hub:
        proc = _report(results["failing"], _job(tmp_path, hub.url))
    assert proc.returncode == 1
    assert "::warning::ci-eval could not comment on the pull request (403" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "berlin" in (tmp_path / "summary.md").read_text()
    _no_leak(proc)


def test_secondary_rate_limit_is_waited_out(results: dict[str, Path], tmp_path: Path) -> None:
    with GitHubServer(rate_limited_once=True) as hub:
        proc = _report(results["failing"], _job(tmp_path, hub.url))
        assert hub.writes() == ["POST", "POST"]
        assert len([c for c in hub.comments if c["user"]["type"] == "Bot"]) == 1
    assert proc.returncode == 1


def test_no_pull_request_no_comment(results: dict[str, Path], tmp_path: Path) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url, event={"ref": "refs/heads/main"})
        env["GITHUB_REF"] = "refs/heads/main"
        proc = _report(results["failing"], env)
        assert hub.writes() == []
    assert "no pull request in this event" in proc.stderr


@pytest.mark.parametrize(
    ("event", "ref", "number"),
    [
        ({"pull_request": {"number": 3}}, "", 3),
        ({"issue": {"number": 4, "pull_request": {"url": "x"}}}, "", 4),
        ({"issue": {"number": 5}}, "", None),  # a comment on an issue, not a PR
        ({}, "refs/pull/6/merge", 6),
        ({}, "refs/heads/main", None),
    ],
)
def test_pr_number(tmp_path: Path, event: dict, ref: str, number: int | None) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps(event))
    assert github.pr_number({"GITHUB_EVENT_PATH": str(path), "GITHUB_REF": ref}) == number


def test_absolute_paths_under_the_workspace_become_relative() -> None:
    assert github.repo_relative("/w/s/evals/a.json", "/w/s") == "evals/a.json"
    assert github.repo_relative("/elsewhere/a.json", "/w/s") == "/elsewhere/a.json"


def test_workflow_command_escaping() -> None:
    assert github.escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert github.escape_property("x:y,z") == "x%3Ay%2Cz"
    assert github.repo_relative("/github/workspace/evals/a.json") == "evals/a.json"


def test_outputs_file_handles_multiline_values(tmp_path: Path) -> None:
    out = tmp_path / "o"
    github.write_outputs(str(out), {"a": "1", "b": "two\nlines"})
    text = out.read_text()
    assert text.startswith("a=1\nb<<ci_eval_") and "\ntwo\nlines\nci_eval_" in text
