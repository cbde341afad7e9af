"""Confirmation reruns through ``ci-eval run`` with the replay agent (run N replays the N-th
recording): a case that fails where main passes runs again until it passes or has failed five
runs; a confirmed break blocks, named; a flaky case passes on a rerun and does not block;
no reruns when a large share of the suite fails every run at once, or when turned off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli

ANSWER = "It is sunny and twenty two degrees."


def _invocation(case_id: str, tool: str) -> dict:
    return {
        "invocation_id": "i1",
        "user_content": {"role": "user", "parts": [{"text": f"weather for {case_id}?"}]},
        "final_response": {"role": "model", "parts": [{"text": ANSWER}]},
        "intermediate_data": {"tool_uses": [{"name": tool, "args": {"city": case_id}}]},
    }


def _suite(folder: Path, runs: dict[str, str], exact: bool = False) -> Path:
    """An eval set of these cases and a recording of each one's runs in order: "P" a run
    that calls the expected tool, "F" one that calls another; each case's last run repeated
    up to the longest's, unless ``exact``."""
    folder.mkdir(parents=True, exist_ok=True)
    evalset = folder / "suite.evalset.json"
    cases = [{"eval_id": c, "conversation": [_invocation(c, "get_weather")]} for c in runs]
    evalset.write_text(json.dumps({"eval_set_id": "suite", "eval_cases": cases}))
    (folder / "test_config.json").write_text('{"criteria": {"tool_trajectory_avg_score": 1.0}}')
    results = [
        {
            "eval_set_id": "suite",
            "eval_id": c,
            "final_eval_status": 1,
            "overall_eval_metric_results": [],
            "eval_metric_result_per_invocation": [
                {
                    "actual_invocation": _invocation(c, "get_weather" if o == "P" else "other"),
                    "expected_invocation": _invocation(c, "get_weather"),
                }
            ],
            "session_id": "s",
        }
        for i in range(max(map(len, runs.values())))
        for c, outcomes in runs.items()
        if not exact or i < len(outcomes)
        for o in [outcomes[min(i, len(outcomes) - 1)]]
    ]
    (folder / "rec").mkdir(exist_ok=True)
    (folder / "rec" / "r.json").write_text(
        json.dumps({"eval_set_id": "suite", "eval_case_results": results})
    )
    return evalset


def _main_history(tmp_path: Path, cases: list[str], pushes: int = 1) -> Path:
    main = tmp_path / "main"
    evalset = _suite(main, {c: "P" for c in cases})
    for n in range(pushes):
        done = run_cli("run", str(evalset), "--agent", "replay", "--replay", "rec",
                       "--results", f"m{n}.json", cwd=main)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        done = run_cli("baseline", "update", f"m{n}.json", "--baseline", "b.json", cwd=main)
        assert done.returncode == 0, done.stderr
    return main / "b.json"


def _pr(
    tmp_path: Path, baseline: Path, runs: dict[str, str], *flags: str, exact: bool = False
) -> tuple[int, str, dict]:
    pr = tmp_path / "pr"
    evalset = _suite(pr, runs, exact)
    done = run_cli("run", str(evalset), "--agent", "replay", "--replay", "rec",
                   "--baseline", str(baseline), "--results", "pr.json", *flags, cwd=pr)  # fmt: skip
    data = json.loads((pr / "pr.json").read_text())
    return done.returncode, done.stdout + done.stderr, data


def _runs(data: dict, case_id: str) -> list[dict]:
    return next(c for s in data["sets"] for c in s["cases"] if c["eval_id"] == case_id)["runs"]


def test_a_break_is_rerun_until_confirmed_and_blocks_named(tmp_path: Path) -> None:
    baseline = _main_history(tmp_path, ["a", "b", "c"])
    code, out, data = _pr(tmp_path, baseline, {"a": "P", "b": "FFFFF", "c": "P"})
    assert code == 1
    assert "gate failed: 1 regression (suite:b)" in out
    runs = _runs(data, "b")
    assert [r["confirmation"] for r in runs] == [False, True, True, True, True]
    assert [r["run"] for r in runs] == [1, 2, 3, 4, 5]
    assert len(_runs(data, "a")) == 1  # a passing case is never rerun
    assert data["settings"]["confirmation_reruns"] == 4
    assert "confirmation reruns: 4 agent runs of 1 failing case (suite:b)" in out


def test_a_flaky_case_passes_on_a_rerun_and_does_not_block(tmp_path: Path) -> None:
    baseline = _main_history(tmp_path, ["a", "b"])
    code, out, data = _pr(tmp_path, baseline, {"a": "P", "b": "FP"})
    assert code == 0, out
    assert len(_runs(data, "b")) == 2  # no rerun once it passed
    assert "flaky: it failed, then passed when run again" in out
    assert "usual noise" not in out


def test_with_reruns_off_one_failed_run_does_not_block_and_says_why(tmp_path: Path) -> None:
    baseline = _main_history(tmp_path, ["a", "b"])
    code, out, data = _pr(tmp_path, baseline, {"a": "P", "b": "F"}, "--confirm-runs", "0")
    assert code == 0 and len(_runs(data, "b")) == 1
    assert "1 unconfirmed failure did not block" in out


def test_no_reruns_when_a_large_share_fails_every_run_at_once(tmp_path: Path) -> None:
    cases = [f"c{i}" for i in range(20)]
    baseline = _main_history(tmp_path, cases)
    runs = {c: ("F" if i < 12 else "P") for i, c in enumerate(cases)}
    code, out, data = _pr(tmp_path, baseline, runs)
    assert (
        "12 of 20 cases failed every run at once where main rarely fails them: no "
        "confirmation reruns" in out
    )
    assert all(len(_runs(data, c)) == 1 for c in cases)
    # what it could not confirm it does not pass: an outage or a break of them all
    assert code == 1
    assert "gate failed: 12 cases failing every run could not be confirmed" in out


def test_compare_says_it_cannot_rerun(tmp_path: Path) -> None:
    baseline = _main_history(tmp_path, ["a", "b"])
    _pr(tmp_path, baseline, {"a": "P", "b": "F"}, "--confirm-runs", "0")
    done = run_cli("compare", str(tmp_path / "pr" / "pr.json"), "--baseline", str(baseline))
    assert "compare calls no agent: no confirmation reruns here" in done.stdout + done.stderr


def test_a_renamed_case_is_judged_on_its_old_history(tmp_path: Path) -> None:
    baseline = _main_history(tmp_path, ["a", "b"], pushes=5)
    pr = tmp_path / "pr"
    evalset = _suite(pr, {"a": "P", "b": "FFFFF"})
    text = evalset.read_text().replace('"eval_id": "b"', '"eval_id": "b_renamed"')
    evalset.write_text(text)
    rec = pr / "rec" / "r.json"
    rec.write_text(rec.read_text().replace('"eval_id": "b"', '"eval_id": "b_renamed"'))
    done = run_cli("run", str(evalset), "--agent", "replay", "--replay", "rec",
                   "--baseline", str(baseline), cwd=pr)  # fmt: skip
    assert done.returncode == 1
    assert "gate failed: 1 regression (suite:b_renamed)" in done.stdout
    assert "renamed from b: its history" in done.stdout


def test_a_recorded_run_is_evidence_once_no_rerun_replays_it_again(tmp_path: Path) -> None:
    # the recording holds one run of b: a rerun would replay that failure again and count it
    # twice; the gate judges the one run there is, and says why it made no rerun
    baseline = _main_history(tmp_path, ["a", "b", "c"], pushes=6)
    code, out, data = _pr(tmp_path, baseline, {"a": "PP", "b": "F", "c": "P"}, exact=True)
    assert len(_runs(data, "b")) == 1
    assert data["settings"]["confirmation_reruns"] == 0
    assert data["settings"]["no_run_left"] == ["suite:b"]
    assert "no recorded run left to confirm 1 failing case (suite:b)" in out
    verdict = next(line for line in out.splitlines() if line.startswith("gate "))
    assert "no recorded run left to confirm 1 case" in verdict, verdict
    assert code == 0  # one failure, unconfirmed: it does not block


def test_reruns_replay_the_recorded_runs_there_are_and_stop_at_the_last(tmp_path: Path) -> None:
    baseline = _main_history(tmp_path, ["a", "b"], pushes=4)
    code, out, data = _pr(tmp_path, baseline, {"a": "P", "b": "FFF"}, exact=True)
    assert [r["run"] for r in _runs(data, "b")] == [1, 2, 3]  # its three recordings, once each
    assert data["settings"]["confirmation_reruns"] == 2
    assert data["settings"]["no_run_left"] == ["suite:b"]
    assert code == 1 and "suite:b" in out  # three of three failing: confirmed


def test_an_agent_that_is_no_recording_always_has_a_run_left(tmp_path: Path) -> None:
    from ci_eval.connectors.base import with_features

    class Live:
        kind = "http"

        def describe(self) -> str:
            return "live"

    assert with_features(Live()).runs_recorded("suite", None) is None  # type: ignore[arg-type]


def test_a_case_out_of_recordings_is_confirmed_by_the_runs_recorded_but_never_by_one() -> None:
    from ci_eval.gate.case_judgement import Rules

    rules = Rules(0.0, 5, 5, 1, [], True, 0.01, no_run_left=frozenset({"s:a"}))
    assert [rules.confirm_of("s:a", n) for n in (1, 2, 3, 5, 8)] == [2, 2, 3, 5, 5]
    assert rules.confirm_of("s:b", 3) == 5  # an agent's case: the whole target


@pytest.mark.parametrize(("pushes", "blocks"), [(2, False), (3, False), (4, True)])
def test_fewer_recorded_runs_than_the_target_confirm_only_as_surprising_as_one_in_100(
    tmp_path: Path, pushes: int, blocks: bool
) -> None:
    """Three recorded runs, all failing, of a case main passed on every push: after 4 passing
    runs that is news (0.9 %), after 2 or 3 a case failing a third of its runs would do it
    (3.1 %, 1.6 %): out of recordings, the gate judges the runs there are by their chance."""
    baseline = _main_history(tmp_path, ["a", "b"], pushes=pushes)
    code, out, _ = _pr(tmp_path, baseline, {"a": "P", "b": "FFF"}, exact=True)
    assert (code == 1) is blocks, out
    assert "no recorded run left to confirm" in out


def test_each_run_writes_an_id_of_its_own(tmp_path: Path) -> None:
    main = tmp_path / "main"
    evalset = _suite(main, {"a": "P"})
    ids = []
    for n in range(2):
        run_cli("run", str(evalset), "--agent", "replay", "--replay", "rec",
                "--results", f"m{n}.json", cwd=main)  # fmt: skip
        ids.append(json.loads((main / f"m{n}.json").read_text())["run_id"])
    assert all(len(i) == 32 for i in ids) and ids[0] != ids[1]
