"""ci-eval's own check run (``--check-run``), through ``ci-eval report`` against a loopback
server that plays GitHub's REST API: created on the pull request's head with the verdict as
its title and the job summary as its text, updated by a rerun, its annotations 50 a request,
and, without ``checks: write``, the PR comment and the step's annotations in its place, said
once. A shard posts neither unless told to."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.publish import ReportSettings, publish
from ci_eval.publish import check_run as checks
from ci_eval.publish.github import Workflow, head_sha
from ci_eval.results.file import write_results
from ci_eval.settings.inputs import from_inputs
from ci_eval.text import redact
from tests.factories import results
from tests.github_server import GitHubServer
from tests.helpers import run_cli
from tests.publish.test_github import _job as pr_job

TOKEN = "ghs_checkRunT0kenValue"
HEAD = "1e1dhead000000000000000000000000000000ab"
MERGE = "4d3e0merge00000000000000000000000000000cd"


@pytest.fixture(autouse=True)
def _own_redactor() -> Any:
    previous = redact.install(redact.Redactor())
    yield
    redact.install(previous)


def _job(tmp_path: Path, api: str) -> dict[str, str]:
    """A pull_request job's environment (as the comment's tests have it, their token ours):
    the PR's head is HEAD, GITHUB_SHA the merge commit."""
    event = {"pull_request": {"number": 7, "head": {"sha": HEAD}}}
    return {**pr_job(tmp_path, api, event), "GITHUB_SHA": MERGE, "GITHUB_TOKEN": TOKEN}


def _report(tmp_path: Path, statuses: dict[str, str], env: dict[str, str], *extra: str) -> Any:
    file = tmp_path / "results.json"
    write_results(file, results(statuses))
    return run_cli("report", str(file), "--check-run", *extra, cwd=tmp_path, env=env)


def _outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "output.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and "<<" not in line)


def test_a_check_run_is_created_on_the_prs_head_with_the_verdict_and_the_summary(
    tmp_path: Path,
) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        proc = _report(tmp_path, {"a": "PASSED", "b": "FAILED"}, env)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the gate's, not the check's
    [run] = hub.check_runs
    assert run["head_sha"] == HEAD  # not GITHUB_SHA, the merge commit the PR never shows
    assert run["name"] == "ci-eval (evals/agent)"
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert run["output"]["title"] == _outputs(tmp_path)["verdict"]
    assert run["output"]["title"] == "gate failed: 1 failed case (s:b)"
    summary = (tmp_path / "summary.md").read_text()
    assert run["output"]["summary"].rstrip("\n") == summary.rstrip("\n")
    assert hub.annotations[run["id"]] == [
        {
            "path": "s.json",
            "start_line": 1,
            "end_line": 1,
            "annotation_level": "failure",
            "message": hub.annotations[run["id"]][0]["message"],
            "title": "FAILED: s:b",
        }
    ]
    assert "::error " not in proc.stdout  # the check holds the annotations, not the step
    assert [p for m, p, _ in hub.requests if "comments" in p] == []  # in the comment's place
    assert hub.authorization == f"Bearer {TOKEN}"


def test_a_rerun_updates_its_check_run_rather_than_making_a_second(tmp_path: Path) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        first = _report(tmp_path, {"a": "PASSED"}, env)
        second = _report(tmp_path, {"a": "FAILED"}, env)
    assert (first.returncode, second.returncode) == (0, 1)
    assert [m for m, _ in hub.check_requests()] == ["POST", "PATCH"]
    [run] = hub.check_runs
    assert run["conclusion"] == "failure"
    assert run["output"]["title"] == "gate failed: 1 failed case (s:a)"
    assert run["output"]["annotations_count"] == 1


def test_a_rerun_does_not_pile_its_annotations_onto_the_earlier_ones(tmp_path: Path) -> None:
    """GitHub appends an update's annotations and removes none: a check run that holds some is
    not updated (a case the rerun passed would keep its failure); the new one is the PR's."""
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        _report(tmp_path, {"a": "FAILED", "b": "FAILED"}, env)
        _report(tmp_path, {"a": "FAILED", "b": "PASSED"}, env)
    assert [m for m, _ in hub.check_requests()] == ["POST", "POST"]
    assert [r["output"]["annotations_count"] for r in hub.check_runs] == [2, 1]


def test_120_blocking_cases_are_annotated_in_three_requests(tmp_path: Path) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        proc = _report(tmp_path, {f"c{n:03}": "FAILED" for n in range(120)}, env)
    assert proc.returncode == 1
    sent = hub.check_requests()
    assert [(m, len(b["output"]["annotations"])) for m, b in sent] == [
        ("POST", 50),
        ("PATCH", 50),
        ("PATCH", 20),
    ]
    [run] = hub.check_runs
    held = hub.annotations[run["id"]]
    assert [a["title"] for a in held] == [f"FAILED: s:c{n:03}" for n in range(120)]
    assert {a["annotation_level"] for a in held} == {"failure"}
    # each update carries the output's title and summary, which GitHub requires
    assert all(b["output"]["title"] == run["output"]["title"] for _, b in sent)


def test_without_checks_write_the_steps_annotations_are_used_and_said_once(
    tmp_path: Path,
) -> None:
    with GitHubServer(checks_forbidden=True) as hub:
        env = _job(tmp_path, hub.url)
        proc = _report(tmp_path, {"a": "PASSED", "b": "FAILED"}, env)
    assert proc.returncode == 1
    assert hub.check_runs == []
    assert "::error file=s.json,line=1,title=FAILED%3A s%3Ab::" in proc.stdout
    said = (proc.stdout + proc.stderr).count("could not create its check run")
    assert said == 1
    assert "checks: write" in proc.stdout


def test_without_checks_write_the_actions_comment_takes_the_checks_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action comments by default; with check-run it comments only where the check cannot
    be made (a 403), and once."""
    monkeypatch.chdir(tmp_path)
    with GitHubServer(checks_forbidden=True) as hub:
        env = _job(tmp_path, hub.url)
        _, settings = from_inputs({**env, "INPUT_CHECK-RUN": "true"})
        assert (settings.check_run, settings.comment, settings.comment_fallback) == (
            True,
            False,
            True,
        )
        log = io.StringIO()
        publish(results({"a": "FAILED"}), settings, env, Workflow(log))
        comments = [c for c in hub.comments if c["user"]["type"] == "Bot"]
    assert len(comments) == 1 and "gate failed: 1 failed case" in comments[0]["body"]
    assert log.getvalue().count("could not create its check run") == 1
    assert "::error file=s.json,line=1," in log.getvalue()


def test_with_checks_write_the_actions_default_comment_is_not_posted(tmp_path: Path) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        settings = ReportSettings(
            check_run=True, comment_fallback=True, token=TOKEN, job_summary=False
        )
        publish(results({"a": "FAILED"}), settings, env, Workflow(io.StringIO()))
    assert len(hub.check_runs) == 1
    assert hub.comments == []


@pytest.mark.parametrize(
    ("statuses", "code", "conclusion"),
    [
        ({"a": "PASSED"}, 0, "success"),
        ({"a": "FAILED"}, 1, "failure"),
        # errors kept the case from being scored: a neutral check would pass branch
        # protection on a gate that scored nothing
        ({"a": "ERROR"}, 3, "failure"),
    ],
)
def test_the_conclusion_follows_the_gate(
    tmp_path: Path, statuses: dict[str, str], code: int, conclusion: str
) -> None:
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        proc = _report(tmp_path, statuses, env)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert [r["conclusion"] for r in hub.check_runs] == [conclusion]
    assert checks.conclusion(code) == conclusion


def test_hostile_case_text_is_made_inert_and_redacted(tmp_path: Path) -> None:
    hostile = f"\n::error::pwned \x1b[31m@octocat <img src=x onerror=alert(1)> {TOKEN}"
    file = tmp_path / "results.json"
    write_results(file, results({"a": "FAILED"}, reasons={"a": hostile}))
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        run_cli("report", str(file), "--check-run", cwd=tmp_path, env=env)
    [run] = hub.check_runs
    [note] = hub.annotations[run["id"]]
    sent = json.dumps(hub.check_requests())
    assert TOKEN not in sent
    assert "\x1b" not in note["message"] and "\\u001b" not in sent
    # one line, so no line of it starts a workflow command should anything print it
    assert "\n" not in note["message"]
    assert "pwned" in note["message"]  # the text stays readable
    assert "<img" not in run["output"]["summary"]  # the summary's Markdown escapes it
    assert "@octocat" not in run["output"]["summary"]  # nobody is pinged


def test_a_shard_posts_no_comment_and_no_check_unless_told_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action comments by default, but not in a shard: the job that merges the shards
    comments once."""
    monkeypatch.chdir(tmp_path)
    with GitHubServer() as hub:
        env = {**_job(tmp_path, hub.url), "INPUT_SHARD": "1/2"}
        _, quiet = from_inputs(env)
        assert (quiet.comment, quiet.check_run) == (False, False)
        publish(results({"a": "FAILED"}), quiet, env, Workflow(io.StringIO()))
        assert hub.requests == []
        _, told = from_inputs({**env, "INPUT_COMMENT": "true", "INPUT_CHECK-RUN": "true"})
        assert (told.comment, told.check_run) == (True, True)


def test_a_shard_told_to_names_its_shard_in_its_check() -> None:
    assert checks.check_name("evals/agent", "1/4") == "ci-eval (evals/agent, shard 1/4)"


def test_the_head_sha_is_the_prs_head_in_a_pull_request_else_the_jobs(tmp_path: Path) -> None:
    env = _job(tmp_path, "http://127.0.0.1:9")
    assert head_sha(env) == HEAD
    (tmp_path / "event.json").write_text(json.dumps({"ref": "refs/heads/main"}))  # a push
    assert head_sha(env) == MERGE


def test_no_token_skips_the_check_with_a_warning_and_annotates_the_step(tmp_path: Path) -> None:
    env = {k: v for k, v in _job(tmp_path, "http://127.0.0.1:9").items() if k != "GITHUB_TOKEN"}
    log = io.StringIO()
    warnings = publish(results({"a": "FAILED"}), ReportSettings(check_run=True), env, Workflow(log))
    assert any("the check run is skipped" in w for w in warnings)
    assert "::error file=s.json,line=1," in log.getvalue()


def test_a_long_summary_is_cut_to_a_checks_text_and_the_annotations_capped(
    tmp_path: Path,
) -> None:
    many = {f"case_{n:04}_{'x' * 60}": "FAILED" for n in range(1500)}
    with GitHubServer() as hub:
        env = _job(tmp_path, hub.url)
        _report(tmp_path, many, env)
    [run] = hub.check_runs
    summary = run["output"]["summary"]
    assert len(summary) <= checks.SUMMARY_LIMIT
    assert summary.startswith("## ❌ ci-eval: gate failed: 1500 failed cases")
    # a check run holds 1000 annotations (20 requests); the rest are said at the text's end
    assert len(hub.check_requests()) == 20
    assert summary.endswith(
        "500 more listed cases are not annotated (a check run holds 1000 here); the list "
        "above has them.\n"
    )
