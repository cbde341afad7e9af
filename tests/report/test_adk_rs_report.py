"""`--adk-rs-report DIR` writes one adk-rs EvalReport per eval set, in the shape adk-rs's
``EvalRunner::run_set`` returns: per case ``eval_set_id``, ``eval_case_id``, ``scores`` (score,
status, details per metric) and ``overall_status`` — every case, including those that did not
run."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.model.status import Status
from ci_eval.report.adk_rs_report import to_adk_rs_reports
from tests import factories
from tests.helpers import run_replay
from tests.score.test_adk_rs_end_to_end import _files


def test_a_run_writes_adk_rss_report_with_its_verdicts(tmp_path: Path) -> None:
    _files(tmp_path)

    proc = run_replay(
        "rs.evalset.json", "--adk-rs-report", "out", replay="recorded.json", cwd=tmp_path
    )

    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "out/rs-set.adk_rs_report.json").read_text())
    two_turns, quiet = report["results"]
    assert (two_turns["eval_set_id"], two_turns["eval_case_id"]) == ("rs-set", "two_turns")
    # the metrics adk-rs scores, nothing informational (adk-rs has no such status)
    assert list(two_turns["scores"]) == ["tool_trajectory_avg_score", "final_response_match_v1"]
    response = two_turns["scores"]["final_response_match_v1"]
    assert (response["score"], response["status"]) == ((1 + 5 / 7) / 2, "FAILED")
    assert response["details"]["per_invocation"] == [1.0, 5 / 7]
    assert two_turns["overall_status"] == "FAILED"
    assert quiet["scores"]["tool_trajectory_avg_score"]["status"] == "FAILED"


def test_a_case_that_did_not_run_is_an_error_result_that_says_why() -> None:
    results = factories.results({"ok": "PASSED", "skipped": "SKIPPED", "broke": "ERROR"})
    [report] = to_adk_rs_reports(results).values()
    by_case = {r["eval_case_id"]: r for r in report["results"]}
    assert set(by_case) == {"ok", "skipped", "broke"}
    assert by_case["skipped"]["overall_status"] == "ERROR"
    assert by_case["skipped"]["ci_eval"] == {
        "status": Status.SKIPPED,
        "reason": "needs a simulator",
    }
    assert by_case["broke"]["ci_eval"]["reason"] == "agent: HTTP 500"


def _statuses(folder: Path) -> dict[str, tuple[str, dict[str, tuple[float, str]]]]:
    results = json.loads((folder / "results.json").read_text())
    return {
        c["eval_id"]: (c["status"], {m["name"]: (m["score"], m["status"]) for m in c["metrics"]})
        for s in results["sets"]
        for c in s["cases"]
    }


def test_a_report_replays_to_the_scores_and_verdicts_it_holds(tmp_path: Path) -> None:
    _files(tmp_path)
    args = ("rs.evalset.json", "--results", "results.json")
    run_replay(*args, "--adk-rs-report", "out", replay="recorded.json", cwd=tmp_path)
    scored = _statuses(tmp_path)

    proc = run_replay(*args, replay="out/rs-set.adk_rs_report.json", cwd=tmp_path)

    assert proc.returncode == 1, proc.stderr
    replayed = _statuses(tmp_path)
    for case, (status, metrics) in scored.items():
        assert replayed[case][0] == status
        for name in ("tool_trajectory_avg_score", "final_response_match_v1"):
            assert replayed[case][1][name] == metrics[name]


def test_a_report_as_adk_rs_prints_it_replays(tmp_path: Path) -> None:
    _files(tmp_path)
    report = {
        "results": [
            {
                "eval_set_id": "rs-set",
                "eval_case_id": "two_turns",
                "scores": {
                    "tool_trajectory_avg_score": {"score": 1.0, "status": "PASSED", "details": {}},
                    "final_response_match_v1": {"score": 0.857, "status": "FAILED", "details": {}},
                },
                "overall_status": "FAILED",
            },
            {
                "eval_set_id": "rs-set",
                "eval_case_id": "no_answer_expected",
                "scores": {
                    "tool_trajectory_avg_score": {"score": 1.0, "status": "PASSED", "details": {}},
                    "final_response_match_v1": {"score": 1.0, "status": "PASSED", "details": {}},
                },
                "overall_status": "PASSED",
            },
        ]
    }
    (tmp_path / "report.json").write_text(json.dumps(report, indent=2))

    proc = run_replay(
        "rs.evalset.json", "--results", "results.json", replay="report.json", cwd=tmp_path
    )

    assert proc.returncode == 1, proc.stderr
    assert "final_response_match_v1 0.857 > 0.8 (FAILED in the replayed report)" in proc.stdout
    statuses = {case: status for case, (status, _) in _statuses(tmp_path).items()}
    assert statuses == {"two_turns": "FAILED", "no_answer_expected": "PASSED"}


def test_a_result_that_is_not_adk_rss_names_where(tmp_path: Path) -> None:
    _files(tmp_path)
    bad = {"results": [{"eval_set_id": "rs-set", "eval_case_id": "two_turns", "scores": {}}]}
    (tmp_path / "report.json").write_text(json.dumps(bad))
    proc = run_replay("rs.evalset.json", replay="report.json", cwd=tmp_path)
    assert proc.returncode == 2  # bad input; the other case is still replayed and reported
    assert "report.json $.results[0].overall_status: Field required" in proc.stdout
