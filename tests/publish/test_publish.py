"""Publishing a run's results: which files and GitHub channels get written for which settings
and environment, the step outputs' values, and where the token comes from."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ci_eval.publish import ReportSettings, outputs, publish
from ci_eval.publish.github import Workflow
from ci_eval.settings import RunSettings, github_token
from ci_eval.text import redact
from tests.factories import results


@pytest.fixture(autouse=True)
def _own_redactor() -> object:
    previous = redact.install(redact.Redactor())
    yield
    redact.install(previous)


@pytest.mark.parametrize(
    ("env", "token"),
    [
        ({"INPUT_GITHUB-TOKEN": "a", "INPUT_GITHUB_TOKEN": "b", "GITHUB_TOKEN": "c"}, "a"),
        ({"INPUT_GITHUB_TOKEN": "b", "GITHUB_TOKEN": "c"}, "c"),  # not the Docker action's
        ({"CI_EVAL_ACTION": "setup", "INPUT_GITHUB_TOKEN": "b", "GITHUB_TOKEN": "c"}, "b"),
        ({"CI_EVAL_ACTION": "setup", "INPUT_GITHUB-TOKEN": "a", "GITHUB_TOKEN": "c"}, "c"),
        ({"INPUT_GITHUB-TOKEN": "", "GITHUB_TOKEN": "c"}, "c"),
        ({}, None),
    ],
)
def test_the_token_is_the_actions_input_first_then_the_jobs(
    env: dict[str, str], token: str | None
) -> None:
    assert github_token(env) == token


def test_step_outputs_count_the_cases_and_carry_the_verdict() -> None:
    run = results({"a": "PASSED", "b": "FAILED", "c": "ERROR", "d": "SKIPPED"})
    out = outputs(run, ReportSettings(junit="j.xml", results="r.json"))
    assert out == {
        "verdict": "gate failed: 1 failed case (s:b); 1 error (s:c); 1 skipped did not block",
        "gate": "failed",
        "blocking": 2,
        "not-blocking": 1,
        "improved": 0,
        "new": 0,
        "removed": 0,
        "passed": 1,
        "failed": 1,
        "errors": 1,
        "regressions": 0,
        "known-failures": 0,
        "not-evaluated": 0,
        "total": 4,
        "score": round(1 / 3, 4),  # of the cases not skipped
        "junit-path": "j.xml",
        "results-path": "r.json",
        "summary-path": "",
        "tokens": "",  # the agent reported none
        "cost": "",
        "p95-latency-s": "",
    }


def test_outside_github_only_the_asked_files_are_written(tmp_path: Path) -> None:
    settings = ReportSettings(
        junit=str(tmp_path / "junit.xml"),
        summary=str(tmp_path / "summary.md"),
        adk_results=str(tmp_path / "adk"),
    )
    log = io.StringIO()
    warnings = publish(results({"a": "PASSED"}), settings, env={}, workflow=Workflow(log))
    assert warnings == []
    assert (tmp_path / "junit.xml").read_text().startswith("<?xml")
    assert "ci-eval" in (tmp_path / "summary.md").read_text()
    assert [p.name for p in (tmp_path / "adk").iterdir()]
    assert log.getvalue() == ""  # no workflow commands outside GitHub Actions


def test_on_github_the_job_summary_outputs_and_annotations_are_written(tmp_path: Path) -> None:
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
    }
    log = io.StringIO()
    publish(results({"a": "PASSED", "b": "FAILED"}), ReportSettings(), env, Workflow(log))
    assert summary.read_text().startswith("## ❌ ci-eval: gate failed")
    assert "gate=failed\n" in output.read_text() and "failed=1\n" in output.read_text()
    assert "::error file=s.json,line=1," in log.getvalue()


def test_a_comment_without_a_pull_request_or_token_is_skipped_with_a_warning(
    tmp_path: Path,
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "push"}))
    settings = ReportSettings(comment=True)
    run = results({"a": "PASSED"})
    assert publish(run, settings, {"GITHUB_EVENT_PATH": str(event)}, Workflow(io.StringIO())) == [
        "no pull request in this event: the PR comment is skipped"
    ]
    env = {"GITHUB_REF": "refs/pull/7/merge", "GITHUB_REPOSITORY": "o/r"}
    assert publish(run, settings, env, Workflow(io.StringIO())) == [
        "no GitHub token or repository in the environment: the PR comment is skipped"
    ]


def test_the_token_is_masked_in_everything_published(tmp_path: Path) -> None:
    run = results({"a": "FAILED"}, reasons={"a": "agent said ghp_notInAnyKnownShape42"})
    env = {"GITHUB_TOKEN": "ghp_notInAnyKnownShape42"}
    settings = RunSettings(junit=str(tmp_path / "j.xml")).report(env)  # the token read once
    publish(run, settings, env, Workflow(io.StringIO()))
    junit = (tmp_path / "j.xml").read_text()
    assert "ghp_notInAnyKnownShape42" not in junit and "agent said" in junit


def test_an_annotation_title_is_capped_whatever_the_case_id() -> None:
    import io

    from ci_eval.publish import github

    huge = "x" * 400_000
    out = io.StringIO()
    github.annotate(results({huge: "FAILED"}), github.Workflow(out=out))
    [line] = [x for x in out.getvalue().splitlines() if x.startswith("::error")]
    title = line.split("title=", 1)[1].split("::", 1)[0]
    assert len(title) < 200 and "…" in title
    assert len(line) < 4500
