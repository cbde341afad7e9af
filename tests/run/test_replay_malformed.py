"""A malformed replayed file never loses the run: a recorded run whose field has the wrong type
(an adk-rs report's ``details.per_invocation`` holding ``"0.9"``, ``{}`` or ``[]``; an ADK
result's or a ci-eval results file's invocation that is not one) errors its own case with one
line naming the file and the JSON path; every other case is replayed, scored and in every
report; the run exits 2 (bad input)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from ci_eval.errors import EXIT_INPUT
from tests.helpers import run_replay
from tests.score.test_adk_rs_end_to_end import _files


def _score(per_invocation: list[Any]) -> dict[str, Any]:
    return {"score": 1.0, "status": "PASSED", "details": {"per_invocation": per_invocation}}


def _report(bad: Any) -> dict[str, Any]:
    def result(case: str, per: list[Any]) -> dict[str, Any]:
        scores = {
            "tool_trajectory_avg_score": _score(per),
            "final_response_match_v1": _score([1.0]),
        }
        return {
            "eval_set_id": "rs-set",
            "eval_case_id": case,
            "scores": scores,
            "overall_status": "PASSED",
        }

    return {"results": [result("two_turns", [1.0, 1.0]), result("no_answer_expected", [bad, 1.0])]}


def _statuses(folder: Path) -> dict[str, str]:
    results = json.loads((folder / "results.json").read_text())
    return {c["eval_id"]: c["status"] for s in results["sets"] for c in s["cases"]}


@pytest.mark.parametrize("bad", ["0.9", {}, []])
def test_a_bad_per_invocation_score_errors_its_case_and_the_others_are_reported(
    tmp_path: Path, bad: Any
) -> None:
    _files(tmp_path)
    (tmp_path / "report.json").write_text(json.dumps(_report(bad)))
    done = run_replay(
        "rs.evalset.json", "--results", "results.json", "--junit", "j.xml", "--summary", "s.md",
        replay="report.json", cwd=tmp_path,
    )  # fmt: skip
    out = done.stderr + done.stdout
    assert done.returncode == EXIT_INPUT, out
    assert "internal error" not in out and "Traceback" not in out
    statuses = _statuses(tmp_path)
    assert statuses["two_turns"] == "PASSED" and statuses["no_answer_expected"] == "ERROR"
    assert (
        "unreadable recording: report.json $.results[1].scores.tool_trajectory_avg_score"
        ".details.per_invocation[0]" in out
    )
    cases = list(ElementTree.parse(tmp_path / "j.xml").getroot().iter("testcase"))
    assert {c.get("name") for c in cases} >= {"two_turns", "no_answer_expected"}
    assert "no_answer_expected" in (tmp_path / "s.md").read_text()


def test_a_results_files_bad_invocation_errors_only_its_case(tmp_path: Path) -> None:
    _files(tmp_path)
    good = run_replay("rs.evalset.json", "--results", "first.json", replay="recorded.json",
                      cwd=tmp_path)  # fmt: skip
    assert good.returncode in (0, 1), good.stderr
    data = json.loads((tmp_path / "first.json").read_text())
    [bad_case] = [c for c in data["sets"][0]["cases"] if c["eval_id"] == "no_answer_expected"]
    bad_case["runs"][0]["invocations"][0]["actual"]["user_content"] = {"parts": "nope"}
    (tmp_path / "bad.json").write_text(json.dumps(data))
    done = run_replay("rs.evalset.json", "--results", "results.json", replay="bad.json",
                      cwd=tmp_path)  # fmt: skip
    out = done.stderr + done.stdout
    assert done.returncode == EXIT_INPUT, out
    statuses = _statuses(tmp_path)
    assert statuses["no_answer_expected"] == "ERROR" and statuses["two_turns"] != "ERROR"
    assert "bad.json case 'no_answer_expected': invocations[0].actual.user_content.parts" in out
