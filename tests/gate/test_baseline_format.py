"""Baseline format 3: a job's runs recorded as one push, errored runs marked in line with the
rest, when each case last changed state on main, a fingerprint of each case's content that keeps
a renamed case's history; format 2 read, judged the same and upgraded; a newer format refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ci_eval.errors import InputError
from ci_eval.gate import baseline as baseline_store
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status
from ci_eval.results.file import CaseMetric, CaseRecord, RunRecord, RunResults, SetRecord
from tests.conftest import REPO, SAMPLES
from tests.helpers import run_cli

DATA = REPO / "tests" / "data"
SPEC = MetricSpec("m", 1.0)


def _case(case_id: str, runs: list[float | None]) -> CaseRecord:
    """Runs scoring ``runs`` in order; None is a run the agent did not finish."""
    records = [
        RunRecord(i + 1, error="agent timed out" if v is None else None, duration_s=0.5)
        for i, v in enumerate(runs)
    ]
    scored = [v for v in runs if v is not None]
    status = Status.PASSED if scored and min(scored) >= 1 else Status.FAILED
    metric = CaseMetric("m", status, None, 1.0, runs=scored)
    return CaseRecord(case_id, "s.json", 1, runs=records, metrics=[metric], scored_status=status)


def _results(cases: dict[str, list[float | None]], started: str) -> RunResults:
    records = [_case(c, runs) for c, runs in cases.items()]
    config = MetricConfig([SPEC], "x", "adk")
    out = RunResults([SetRecord("s", "s.json", "adk", config, records, [SPEC])], "a", started, 1)
    out.settings = RunFacts(num_runs=3)
    return out


def test_each_job_is_one_push_and_its_runs_name_it() -> None:
    data, _ = baseline_store.update(None, _results({"c": [1, 1, 1]}, "t1"), commit="aaa")
    data, _ = baseline_store.update(data, _results({"c": [1, 0, 1]}, "t2"), commit="bbb")
    case = data.sets["s"].cases["c"]
    assert case.push == [1, 1, 1, 2, 2, 2]
    assert case.metrics["m"].scores == [1, 1, 1, 1, 0, 1]
    assert [(p.seq, p.commit, p.runs) for p in data.pushes] == [
        (1, "aaa", 3),
        (2, "bbb", 3),
    ]


def test_an_errored_run_is_marked_in_line_with_the_other_cases_runs() -> None:
    data, report = baseline_store.update(
        None, _results({"ok": [1, 1, 1], "flaky": [1, None, 0]}, "t1"), commit="aaa"
    )
    flaky = data.sets["s"].cases["flaky"]
    assert flaky.error == [None, "agent timed out", None]
    assert flaky.metrics["m"].scores == [1, None, 0]
    assert flaky.latency_s == [0.5, 0.5, 0.5]
    ok = data.sets["s"].cases["ok"]
    assert len(ok.push) == len(flaky.push) == 3 and report.recorded == 2


def test_when_a_case_last_changed_state_on_main_is_kept_both_ways() -> None:
    data, _ = baseline_store.update(None, _results({"c": [1]}, "t1"), commit="aaa111")
    assert data.sets["s"].cases["c"].passing_since == "aaa111"
    data, _ = baseline_store.update(data, _results({"c": [1]}, "t2"), commit="bbb222")
    assert data.sets["s"].cases["c"].passing_since == "aaa111"  # unchanged
    data, _ = baseline_store.update(data, _results({"c": [0]}, "t3"), commit="ccc333")
    case = data.sets["s"].cases["c"]
    assert (case.failing_since, case.passing_since) == ("ccc333", None)
    data, _ = baseline_store.update(data, _results({"c": [None]}, "t4"), commit="ddd444")
    assert data.sets["s"].cases["c"].failing_since == "ccc333"  # an error says nothing
    data, _ = baseline_store.update(data, _results({"c": [1]}, "t5"), commit="eee555")
    case = data.sets["s"].cases["c"]
    assert (case.failing_since, case.passing_since) == (None, "eee555")


def _sample_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLES, repo / "samples")
    (repo / "ci-eval.toml").write_text((REPO / "ci-eval.toml").read_text())
    return repo


def _record(repo: Path, name: str) -> Any:
    run_cli("run", "--results", f"{name}.json", cwd=repo)
    done = run_cli("baseline", "update", f"{name}.json", "--baseline", "b.json", cwd=repo)
    assert done.returncode == 0, done.stderr
    return done


def test_a_renamed_case_keeps_its_history_by_its_content(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path)
    _record(repo, "one")
    before = json.loads((repo / "b.json").read_text())["sets"]["weather_basic"]["cases"]
    evalset = repo / "samples" / "evals" / "weather_basic.evalset.json"
    evalset.write_text(evalset.read_text().replace('"berlin_expected_to_fail"', '"berlin_v2"'))
    done = _record(repo, "two")
    assert "weather_basic:berlin_expected_to_fail -> weather_basic:berlin_v2" in done.stdout
    after = json.loads((repo / "b.json").read_text())["sets"]["weather_basic"]["cases"]
    assert "berlin_expected_to_fail" not in after
    moved = after["berlin_v2"]
    assert moved["push"] == [1, 2]
    assert moved["fingerprint"] == before["berlin_expected_to_fail"]["fingerprint"]


def _prints(repo: Path) -> dict[str, str]:
    cases = json.loads((repo / "b.json").read_text())["sets"]["weather_basic"]["cases"]
    return {case_id: case["fingerprint"] for case_id, case in cases.items()}


def test_a_case_whose_expectations_change_has_another_fingerprint(tmp_path: Path) -> None:
    repo = _sample_repo(tmp_path)
    _record(repo, "one")
    before = _prints(repo)
    evalset = repo / "samples" / "evals" / "weather_basic.evalset.json"
    evalset.write_text(
        evalset.read_text().replace("snowing in Berlin, -2", "snowing in Berlin, -3")
    )
    _record(repo, "two")
    after = _prints(repo)
    assert after["berlin_expected_to_fail"] != before["berlin_expected_to_fail"]
    assert {k: v for k, v in after.items() if k != "berlin_expected_to_fail"} == {
        k: v for k, v in before.items() if k != "berlin_expected_to_fail"
    }
    assert all(len(v) == 16 for v in after.values())


def test_a_format_2_baseline_is_judged_the_same_and_upgraded(tmp_path: Path) -> None:
    shutil.copy(DATA / "baseline-format-2.json", tmp_path / "b.json")
    shutil.copy(DATA / "results-schema-1.json", tmp_path / "r.json")
    done = run_cli("compare", "r.json", "--baseline", "b.json", "--fail-on", "error", cwd=tmp_path)
    then = (DATA / "baseline-format-2.compare.txt").read_text().splitlines()
    assert done.returncode == 0
    # the case count and the verdict line, in today's words for a short history
    wording = [
        ("judged by the simple rule", "with a short history"),
        ("1 known failure did not block", "1 known failure, 1 skipped did not block"),
    ]
    expected = then[-2:]
    for old, new in wording:
        expected = [line.replace(old, new) for line in expected]
    assert done.stdout.splitlines()[-2:] == expected
    upgraded = baseline_store.read(tmp_path / "b.json")
    assert upgraded is not None and upgraded.format == 3
    (push,) = upgraded.pushes
    assert (push.seq, push.id, push.upgraded) == (0, "format 2 history", True)
    run_cli("baseline", "update", "r.json", "--baseline", "b.json", cwd=tmp_path)
    written = json.loads((tmp_path / "b.json").read_text())
    assert written["format"] == 3
    case = written["sets"]["weather_basic"]["cases"]["paris_weather"]
    assert case["push"] == [0, 1] and case["passing_since"] == "unknown"
    again = run_cli("compare", "r.json", "--baseline", "b.json", "--fail-on", "error", cwd=tmp_path)
    assert again.returncode == 0 and "gate passed" in again.stdout.splitlines()[-1]


def test_a_baseline_from_a_newer_ci_eval_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(
        json.dumps({"format": 4, "provenance": {"ci_eval_version": "0.9.0"}, "sets": {}})
    )
    with pytest.raises(InputError) as refused:
        baseline_store.read(path)
    assert "written by ci-eval 0.9.0 (baseline format 4)" in str(refused.value)
    assert "upgrade ci-eval" in str(refused.value) and "\n" not in str(refused.value)


def test_the_file_has_one_push_and_one_case_per_line() -> None:
    data, _ = baseline_store.update(None, _results({"a": [1], "b": [0]}, "t1"), commit="aaa")
    data, _ = baseline_store.update(data, _results({"a": [1], "b": [1]}, "t2"), commit="bbb")
    lines = baseline_store.dumps(data).splitlines()
    assert sum('"seq":' in line for line in lines) == 2
    assert sum(line.lstrip().startswith(('"a":', '"b":')) for line in lines) == 2


def test_lists_out_of_line_with_each_other_are_refused_with_their_place(tmp_path: Path) -> None:
    data, _ = baseline_store.update(None, _results({"c": [1, 1]}, "t1"), commit="aaa")
    data.sets["s"].cases["c"].error = [None]
    path = tmp_path / "b.json"
    path.write_text(baseline_store.dumps(data))
    with pytest.raises(InputError, match=r"\$\.sets\.s\.cases\.c"):
        baseline_store.read(path)


# --- files the dict-based baseline wrote (3b79897) read as the model and written back unchanged -


@pytest.mark.parametrize(
    "name",
    [
        "baseline-format-3-sample.json",  # the bundled sample, two pushes (1 run, then 2)
        "baseline-format-3-kinds.json",  # tokens, a metric's own verdicts, a case's rubrics
    ],
)
def test_a_format_3_file_an_earlier_ci_eval_wrote_reads_and_writes_back_the_same(
    tmp_path: Path, name: str
) -> None:
    text = (DATA / name).read_text()
    baseline = baseline_store.parse(text, name)
    assert baseline_store.dumps(baseline) == text
    assert baseline_store.to_data(baseline) == json.loads(text)


def test_an_earlier_format_3_files_kinds_of_history_are_read_as_their_fields() -> None:
    baseline = baseline_store.parse((DATA / "baseline-format-3-kinds.json").read_text(), "b")
    assert baseline.sets["usage"].cases["c"].usage == [1000, None, 1200, None]
    assert baseline.sets["verdicts"].cases["c"].metrics["m"].fails == [True, False, False, True]
    assert baseline.sets["rubrics"].rubrics == {"b": "344fca8764aa9082"}
    assert [p.seq for p in baseline.pushes] == [1, 2] and baseline.sets["usage"].criteria == {
        "m": {}
    }
