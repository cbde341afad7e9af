"""The history-aware gate, one rule per test: the history window, per-case surprise, the
suite-wide drop, false-alarm control, the simple rule for short histories, acceptance, the
verdict line, known failures in JUnit, compare-before-write, and the pure-Python statistics
checked against scipy."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.gate import baseline as baseline_store
from ci_eval.gate import stats
from ci_eval.gate.compare import Acceptance, Judgement, compare
from ci_eval.gate.decision import verdict
from ci_eval.metrics.base import CaseMetric
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.results.file import CaseRecord, RunResults, SetRecord, to_json
from ci_eval.settings.gate import DEFAULT_GATE
from tests.helpers import git, run_cli

# --- synthetic results: cases with per-run scores of one metric (threshold 1) ---------------


def results(
    cases: dict[str, list[float]],
    started: str = "t",
    interrupted: bool = False,
    errors: tuple[str, ...] = (),
) -> RunResults:
    spec = MetricSpec("m", 1.0)
    records = []
    for case_id, runs in cases.items():
        if case_id in errors:
            records.append(CaseRecord(case_id, "s.json", 1, scored_status="ERROR"))
            continue
        mean = sum(runs) / len(runs)
        status = "PASSED" if mean >= 1.0 else "FAILED"
        metric = CaseMetric("m", status, mean, 1.0, runs=list(runs))
        records.append(CaseRecord(case_id, "s.json", 1, scored_status=status, metrics=[metric]))
    out = RunResults(
        [SetRecord("s", "s.json", "adk", MetricConfig([spec], "x", "adk"), records, [spec])],
        "agent",
        started,
        0.0,
        interrupted=interrupted,
    )
    out.fail_on = ("regression", "error", "not-evaluated")
    return out


def history(cases: dict[str, list[float]], window: int = 20) -> baseline_store.Baseline:
    """A baseline holding exactly these runs per case."""
    data, _ = baseline_store.update(None, results(cases), commit="main1", window=window)
    return data


def judged(comparison: Any, case_id: str) -> Any:
    return next(j for j in comparison.cases if j.case_id == case_id)


# --- the history window ----------------------------------------------------------------------


def test_each_update_appends_runs_and_the_gate_reads_the_last_window() -> None:
    """The file keeps every run of main's last 50 pushes (for `ci-eval history`); the gate
    reads each case's last ``window`` runs of them, as it always did."""
    data = None
    for i in range(8):
        data, report = baseline_store.update(
            data, results({"c": [1.0, 0.0, 1.0]}, started=f"t{i}"), commit=f"c{i}", window=10
        )
        assert report.recorded == 1
    assert data is not None
    assert len(data.sets["s"].cases["c"].metrics["m"].scores) == 24  # 8 pushes of 3 runs
    scores = baseline_store.gate_view(data).sets["s"].cases["c"].metrics["m"].scores
    assert len(scores) == 10 and scores[-3:] == [1.0, 0.0, 1.0]
    assert data.window == 10


def test_the_file_keeps_mains_last_50_pushes_beyond_the_window() -> None:
    data = None
    for i in range(60):
        data, _ = baseline_store.update(
            data, results({"c": [1.0]}, started=f"t{i}"), commit=f"c{i}", window=20
        )
    assert data is not None
    assert [p.seq for p in data.pushes] == list(range(11, 61))
    assert len(data.sets["s"].cases["c"].push) == 50
    view = baseline_store.gate_view(data)
    assert len(view.sets["s"].cases["c"].push) == 20
    assert [p.seq for p in view.pushes] == list(range(41, 61))


def test_a_window_wider_than_50_pushes_keeps_its_runs() -> None:
    data = None
    for i in range(60):
        data, _ = baseline_store.update(
            data, results({"c": [1.0, 1.0]}, started=f"t{i}"), commit=f"c{i}", window=110
        )
    assert data is not None
    assert len(data.sets["s"].cases["c"].push) == 110


def test_the_same_results_are_not_recorded_twice() -> None:
    data, _ = baseline_store.update(None, results({"c": [1.0]}), commit="a")
    again, report = baseline_store.update(data, results({"c": [1.0]}), commit="a")
    assert report.duplicate and again.sets["s"].cases["c"].metrics["m"].scores == [1.0]


def test_two_runs_started_in_one_second_with_one_duration_are_two_pushes_by_their_ids() -> None:
    """``started`` is to the second: two quick runs share it (and, to the millisecond, their
    duration); their own ids tell them apart, and the same id again is the same run."""
    first, second = results({"c": [1.0]}), results({"c": [1.0]})
    first.run_id, second.run_id = "a" * 32, "b" * 32
    data, _ = baseline_store.update(None, first, commit="a")
    data, report = baseline_store.update(data, second, commit="a")
    assert not report.duplicate and len(data.pushes) == 2
    _, again = baseline_store.update(data, second, commit="a")
    assert again.duplicate


def test_an_interrupted_or_partial_update_never_shrinks_the_baseline() -> None:
    data = history({"a": [1.0, 1.0], "b": [1.0, 0.0]})
    # b errored (not started, cancelled…): not measured, so its history stays as it was
    partial = results({"a": [1.0], "b": [1.0]}, started="t2", interrupted=True, errors=("b",))
    after, report = baseline_store.update(data, partial, commit="c2")
    assert after.sets["s"].cases["b"] == data.sets["s"].cases["b"]
    assert report.kept == ["s:b"]
    # a case missing from an interrupted run is kept too
    only_a = results({"a": [1.0]}, started="t3", interrupted=True)
    after2, _ = baseline_store.update(after, only_a, commit="c3")
    assert "b" in after2.sets["s"].cases


def test_a_complete_run_drops_cases_gone_from_the_eval_set() -> None:
    data = history({"a": [1.0], "gone": [1.0]})
    after, report = baseline_store.update(data, results({"a": [1.0]}, started="t2"), commit="x")
    assert report.dropped == ["s:gone"] and "gone" not in after.sets["s"].cases


def test_the_file_has_one_case_per_line_and_volatile_provenance_apart(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    baseline_store.write(path, history({"a": [1.0], "b": [0.0]}))
    text = path.read_text()
    case_lines = [line for line in text.splitlines() if line.startswith('        "')]
    assert [line.split(":")[0].strip() for line in case_lines] == ['"a"', '"b"']
    assert all("commit" not in line and "date" not in line for line in case_lines)
    data = baseline_store.read(path)
    assert data is not None and baseline_store.to_data(data) == json.loads(text)
    # two updates on different cases change different lines below the provenance block
    one, _ = baseline_store.update(data, results({"a": [0.0]}, started="x"), commit="p1")
    two, _ = baseline_store.update(data, results({"b": [1.0]}, started="y"), commit="p2")

    def changed(new: baseline_store.Baseline) -> set[str]:
        lines = baseline_store.dumps(new).splitlines()
        cases = lines[lines.index('  "sets": {') :]
        return set(cases) - set(text.splitlines())

    assert changed(one) and changed(two) and not changed(one) & changed(two)


def test_a_format_1_baseline_is_read_as_the_start_of_the_history(tmp_path: Path) -> None:
    old = {
        "format": 1,
        "provenance": {"commit": "abc123", "date": "2026-01-01T00:00:00+00:00"},
        "sets": {
            "s": {
                "file": "s.json",
                "cases": {
                    "c": {
                        "status": "FAILED",
                        "metrics": {"m": {"mean": 0.0, "runs": [0.0, 0.0], "threshold": 1.0}},
                    }
                },
            }
        },
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    data = baseline_store.read(path)
    assert data is not None and data.format == 3
    case = data.sets["s"].cases["c"]
    assert case.metrics["m"].scores == [0.0, 0.0] and case.failing_since == "abc123"


def test_a_hand_edited_baseline_names_the_place(tmp_path: Path) -> None:
    data = baseline_store.to_data(history({"c": [1.0]}))
    data["sets"]["s"]["cases"]["c"]["metrics"]["m"]["scores"] = ["high"]
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"\$\.sets\.s\.cases\.c\.metrics\.m"):
        baseline_store.read(path)


# --- per-case surprise -----------------------------------------------------------------------


def test_a_case_that_always_passed_and_now_fails_three_times_is_a_regression() -> None:
    comparison = compare(results({"c": [0.0, 0.0, 0.0]}), history({"c": [1.0] * 20}))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.REGRESSION
    assert case.p_value == pytest.approx(1.875 / (21 * 22 * 23))
    assert "passed 20 of 20 runs on main, failed 3 of 3 now" in case.describe()
    [change] = comparison.regressions
    assert "m 1 → 0: passed 20 of 20 runs on main, failed 3 of 3 now (p=0.00018)" in (
        change.describe()
    )


def test_a_flaky_case_failing_now_is_not_news() -> None:
    flaky = ([1.0] * 3 + [0.0] * 2) * 4  # passed 12 of 20, its last run passed
    comparison = compare(results({"c": [0.0, 0.0, 0.0]}), history({"c": flaky}))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.NOT_SIGNIFICANT
    assert case.p_value == pytest.approx(0.0798, abs=1e-3)
    assert verdict(results_with(comparison, {"c": [0.0, 0.0, 0.0]})).passed


def results_with(comparison: Any, cases: dict[str, list[float]]) -> RunResults:
    out = results(cases)
    out.comparison = comparison
    return out


def test_a_case_failing_on_main_too_is_a_known_failure_with_its_commit() -> None:
    comparison = compare(results({"c": [0.0]}), history({"c": [0.0] * 10}))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.KNOWN_FAILURE and case.failing_since == "main1"
    line = verdict(results_with(comparison, {"c": [0.0]})).line
    assert line == (
        "gate passed: 0 regressions against main's history (1 case judged); "
        "1 known failure did not block"
    )


# --- across the suite ------------------------------------------------------------------------


def test_a_broad_drop_no_single_case_shows_is_caught_by_the_suite_test() -> None:
    rng = random.Random(1)
    # 40 cases that pass 90% of the time on main; now each fails one run in three
    main = {f"c{i}": [0.0 if k % 10 == i % 10 else 1.0 for k in range(20)] for i in range(40)}
    now = {f"c{i}": [0.0 if rng.random() < 0.4 else 1.0] for i in range(40)}
    comparison = compare(results(now), history(main))
    assert not comparison.regressed_cases()  # no case alone is news
    assert comparison.suite is not None and comparison.suite.regressed
    decision = verdict(results_with(comparison, now))
    assert decision.line.startswith("gate failed: 1 suite-wide drop; ")
    (drop,) = decision.blocking
    assert "where main's history expects 4.8" in drop.change  # 40 × 2.5/21


def test_two_hundred_noisy_cases_do_not_fail_for_having_two_hundred_chances() -> None:
    # each case passed 18 of 20 on main; now 20 of 200 fail once: what main predicts
    main = {f"c{i}": [0.0, 0.0] + [1.0] * 18 for i in range(200)}
    now = {f"c{i}": [0.0 if i % 10 == 0 else 1.0] for i in range(200)}
    comparison = compare(results(now), history(main))
    assert not comparison.regressed_cases()
    assert comparison.suite is not None and not comparison.suite.regressed
    # yet a case that never failed on main and now fails 5 of 5 is caught: with 200 chances,
    # one case needs stronger evidence than in a small suite (3 of 3 gives p = 1.8e-4)
    main["c1"] = [1.0] * 20
    now["c1"] = [0.0] * 5
    comparison = compare(results(now), history(main))
    assert comparison.regressed_cases() == {("s", "c1")}


def test_false_alarms_stay_under_the_significance_level_when_nothing_changed() -> None:
    rng = random.Random(7)
    rates = [1.0] * 26 + [0.95] * 10 + [0.6] * 4
    alarms = 0
    trials = 200
    for _ in range(trials):
        main = {
            f"c{i}": [1.0 if rng.random() < p else 0.0 for _ in range(20)]
            for i, p in enumerate(rates)
        }
        now = {f"c{i}": [1.0 if rng.random() < p else 0.0] for i, p in enumerate(rates)}
        comparison = compare(results(now), history(main))
        alarms += bool(comparison.regressed_cases() or comparison.suite_regressed)
    assert alarms / trials <= 0.05


# --- too little history ----------------------------------------------------------------------


def test_with_a_short_history_one_failed_run_never_blocks() -> None:
    comparison = compare(results({"c": [0.0]}), history({"c": [1.0, 1.0]}))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.NOT_SIGNIFICANT
    assert "short history: only 2 runs on main (the history test needs 5)" in case.describe()
    assert "not enough history to judge (it never failed on main)" in case.describe()
    line = verdict(results_with(comparison, {"c": [0.0]})).line
    assert "1 case with a short history (fewer than 5 runs on main)" in line
    assert "usual noise" not in line  # it never failed on main


def test_with_a_short_history_a_break_confirmed_by_reruns_blocks() -> None:
    comparison = compare(results({"c": [0.0] * 5}), history({"c": [1.0, 1.0]}))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.REGRESSION and case.p_value is None
    assert "failed all 5 runs, reruns included" in case.describe()
    # as many runs as the run could make confirm it (3 runs, no reruns)
    assert compare(results({"c": [0.0] * 3}), history({"c": [1.0]}), confirm=3).regressed_cases()
    # a case that failed on main too is not news: flaky, not a regression
    comparison = compare(results({"c": [0.0] * 5}), history({"c": [1.0, 0.0]}))
    assert not comparison.regressed_cases()


def test_a_failure_that_passes_on_a_rerun_is_flaky_not_usual_noise() -> None:
    comparison = compare(results({"c": [0.0, 1.0]}), history({"c": [1.0] * 3}))
    case = judged(comparison, "c")
    assert case.judgement is Judgement.NOT_SIGNIFICANT
    assert "flaky: it failed, then passed when run again" in case.describe()


def test_a_new_case_blocks_named_when_it_fails_every_run_reruns_included() -> None:
    comparison = compare(results({"c": [1.0], "fresh": [0.0]}), history({"c": [1.0] * 5}))
    assert comparison.new_cases == [("s", "fresh")]
    assert not comparison.regressed_cases()  # one failed run: not confirmed
    assert (
        "a new case whose failures reruns did not confirm" in judged(comparison, "fresh").describe()
    )
    comparison = compare(results({"c": [1.0], "fresh": [0.0] * 5}), history({"c": [1.0] * 5}))
    assert comparison.regressed_cases() == {("s", "fresh")}
    line = verdict(results_with(comparison, {"c": [1.0], "fresh": [0.0] * 5})).line
    assert line.startswith("gate failed: 1 regression (s:fresh)")


# --- accepting an intended change -------------------------------------------------------------


def test_an_accepted_regression_does_not_block_and_says_why() -> None:
    accepted = [Acceptance("s:c", "new refund wording (#123)")]
    comparison = compare(
        results({"c": [0.0, 0.0, 0.0]}), history({"c": [1.0] * 20}), accepted=accepted
    )
    case = judged(comparison, "c")
    assert case.judgement is Judgement.ACCEPTED and case.reason == "new refund wording (#123)"
    decision = verdict(results_with(comparison, {"c": [0.0, 0.0, 0.0]}))
    assert decision.passed and "1 accepted change did not block" in decision.line
    assert [i.key for i in decision.not_blocking] == ["s:c"]


def test_an_acceptance_that_matches_nothing_is_a_warning() -> None:
    comparison = compare(
        results({"c": [1.0]}), history({"c": [1.0] * 20}), accepted=[Acceptance("s:c", "x")]
    )
    assert any("matched no regression" in w for w in comparison.warnings)


# --- the CLI, in process ---------------------------------------------------------------------


cli = run_cli


def _write(path: Path, res: RunResults) -> Path:
    path.write_text(json.dumps(to_json(res)))
    return path


def test_update_then_compare_through_the_cli(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    for i in range(7):
        run = _write(tmp_path / f"main{i}.json", results({"c": [1.0, 1.0, 1.0]}, started=f"m{i}"))
        proc = cli("baseline", "update", str(run), "--window", "30")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"1 case with {3 * (i + 1)} runs each, keeping each case's last 30" in proc.stdout
    pr = _write(tmp_path / "pr.json", results({"c": [0.0, 0.0, 0.0]}, started="pr"))
    proc = cli("compare", str(pr), "--junit", "junit.xml", "--summary", "summary.md")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "gate failed: 1 regression (s:c)"
    assert "REGRESSION s:c: passed 21 of 21 runs on main → failed 3 of 3 now" in proc.stdout
    assert (
        (tmp_path / "summary.md")
        .read_text()
        .startswith("## ❌ ci-eval: gate failed: 1 regression (s:c)")
    )


def test_the_acceptance_file_end_to_end(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    baseline_store.write(tmp_path / ".ci-eval/baseline.json", history({"c": [1.0] * 20}))
    pr = _write(tmp_path / "pr.json", results({"c": [0.0, 0.0, 0.0]}, started="pr"))
    accept = tmp_path / ".ci-eval/accept.toml"
    accept.write_text('[[accept]]\ncase = "s:c"\n')
    proc = cli("compare", str(pr))
    assert proc.returncode == 2 and "accept[0]: reason is required" in (proc.stdout + proc.stderr)
    accept.write_text('[[accept]]\ncase = "s:c"\nreason = "the new wording is right (#12)"\n')
    proc = cli("compare", str(pr))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ACCEPTED s:c: passed 20 of 20 runs on main → failed 3 of 3 now" in proc.stdout
    assert "accepted: the new wording is right (#12)" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("gate passed: ")


def test_known_failures_are_skipped_in_junit_so_a_junit_only_ci_stays_green(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    baseline_store.write(
        tmp_path / ".ci-eval/baseline.json", history({"ok": [1.0] * 10, "bad": [0.0] * 10})
    )
    pr = _write(tmp_path / "pr.json", results({"ok": [1.0], "bad": [0.0]}, started="pr"))
    proc = cli("compare", str(pr), "--junit", "junit.xml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    junit = (tmp_path / "junit.xml").read_text()
    assert "<failure" not in junit
    assert 'message="known failure, not blocking: passed 0 of 10 runs on main' in junit
    assert "failing on main since main1" in junit
    assert "KNOWN FAILURE s:bad: passed 0 of 10 runs on main" in proc.stdout


def test_update_baseline_compares_first_then_writes(tmp_path: Path, monkeypatch: Any) -> None:
    from ci_eval.gate import main_history
    from ci_eval.settings import RunSettings

    monkeypatch.chdir(tmp_path)
    path = tmp_path / ".ci-eval/baseline.json"
    baseline_store.write(path, history({"c": [1.0] * 20}))
    run = results({"c": [0.0, 0.0, 0.0]}, started="pr")
    settings = RunSettings(update_baseline=True)
    # the order run() uses: compare against the stored baseline, then append
    main_history.apply_baseline(run, settings, {}, DEFAULT_GATE)
    line = main_history.update_baseline(run, settings)
    assert run.comparison.regressed_cases() == {("s", "c")}
    assert "1 case recorded" in line
    stored = baseline_store.read(path)
    assert stored.sets["s"].cases["c"].metrics["m"].scores == [1.0] * 20 + [0.0] * 3
    scores = baseline_store.gate_view(stored).sets["s"].cases["c"].metrics["m"].scores
    assert scores == [1.0] * 17 + [0.0] * 3  # what the gate reads: its window


# --- the statistics, against scipy -------------------------------------------------------------


def _scipy_stats() -> Any:
    """scipy.stats, imported by the tests that compare with it (not at collection)."""
    return pytest.importorskip("scipy.stats")


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(0, 30),
    a=st.floats(0.05, 40),
    b=st.floats(0.05, 40),
    data=st.data(),
)
def test_beta_binomial_matches_scipy(n: int, a: float, b: float, data: Any) -> None:
    k = data.draw(st.integers(0, n))
    assert stats.betabinom_pmf(k, n, a, b) == pytest.approx(
        _scipy_stats().betabinom.pmf(k, n, a, b), rel=1e-9, abs=1e-15
    )
    # summed pmf: scipy's sf (1 - cdf) loses digits in tiny tails; the sum is what we compute
    tail = sum(_scipy_stats().betabinom.pmf(j, n, a, b) for j in range(k, n + 1))
    assert stats.betabinom_tail(k, n, a, b) == pytest.approx(tail, rel=1e-9, abs=1e-15)
    assert stats.betabinom_tail(k, n, a, b) == pytest.approx(
        _scipy_stats().betabinom.sf(k - 1, n, a, b), rel=1e-6, abs=1e-12
    )


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(1, 4)),
        min_size=1,
        max_size=6,
    )
)
def test_the_suite_distribution_is_the_convolution_of_the_cases(cases: list[Any]) -> None:
    import numpy as np

    dists = [stats.predictive_failures(f, p, n) for f, p, n in cases]
    expected = np.array([1.0])
    for f, p, n in cases:
        expected = np.convolve(
            expected, _scipy_stats().betabinom.pmf(np.arange(n + 1), n, f + 0.5, p + 0.5)
        )
    assert stats.convolve(dists) == pytest.approx(list(expected), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_benjamini_hochberg_matches_scipy(pvalues: list[float]) -> None:
    assert stats.benjamini_hochberg(pvalues) == pytest.approx(
        list(_scipy_stats().false_discovery_control(pvalues)), abs=1e-12
    )


# --- never a silent pass -------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
WEATHER = REPO / "samples/evals/weather_basic.evalset.json"
AGENT = f"python {REPO / 'samples/agents/weather_agent/command_agent.py'}"


def _evals(folder: Path, criteria: dict[str, float] | None, set_id: str | None = None) -> Path:
    """The samples' weather set in ``folder`` (under ``set_id`` where given: two folders' sets
    need ids of their own), with a test_config.json of ``criteria``."""
    folder.mkdir(parents=True)
    evalset = json.loads(WEATHER.read_text())
    evalset["eval_set_id"] = set_id or evalset["eval_set_id"]
    (folder / WEATHER.name).write_text(json.dumps(evalset))
    if criteria is not None:
        (folder / "test_config.json").write_text(json.dumps({"criteria": criteria}, indent=2))
    return folder


def test_an_unknown_metric_in_a_sidecar_is_an_input_error(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    _evals(tmp_path / "evals", {"tool_trajectory_avg_score": 1.0, "agent_coordination_score": 0.5})
    for args in (
        ("validate", "evals"),
        ("run", "evals", "--agent", "command", "--agent-command", "no-such-agent-binary"),
    ):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert (
            "evals/test_config.json:2:15: $.criteria.agent_coordination_score: unknown metric "
            "'agent_coordination_score'; known: " in (proc.stdout + proc.stderr)
        )
        assert "tool_trajectory_avg_score" in (proc.stdout + proc.stderr).split("known: ")[1]


def test_a_metric_that_could_not_be_computed_fails_the_gate(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    _evals(tmp_path / "judged", {"tool_trajectory_avg_score": 1.0, "final_response_match_v2": 0.5})
    _evals(tmp_path / "plain", None, set_id="weather_plain")
    run = ("run", "judged", "plain", "--agent", "command", "--agent-command", AGENT)
    proc = cli(*run, "--summary", "summary.md")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "NOT EVALUATED paris_weather" in proc.stdout
    assert "final_response_match_v2 not computed: needs an LLM judge" in proc.stdout
    last = proc.stdout.splitlines()[-1]
    # berlin fails its trajectory in both folders
    assert last.startswith("gate failed: 2 failed cases (")
    assert "; 2 not evaluated (weather_basic:paris_weather" in last
    assert "final_response_match_v2: needs an LLM judge" in proc.stdout
    assert (tmp_path / "summary.md").read_text().startswith("## ❌ ci-eval: gate failed:")
    # opting out, as --fail-on allows: it passes, and still says what was not computed
    proc = cli(*run, "--fail-on", "regression,error")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 failed cases, 2 not evaluated did not block" in proc.stdout.splitlines()[-1]


def test_a_run_where_nothing_was_evaluated_never_passes(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    _evals(tmp_path / "judged", {"final_response_match_v2": 0.5})
    proc = cli(
        "run", "judged", "--agent", "command", "--agent-command", AGENT,
        "--fail-on", "regression", "--summary", "summary.md",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "nothing was evaluated (3 cases)" in proc.stdout.splitlines()[-1]
    headline = (tmp_path / "summary.md").read_text().splitlines()[0]
    assert headline.startswith("## ❌ ci-eval: gate failed: nothing was evaluated")


# --- the pull request cannot lower its bar ---------------------------------------------------


def _pull_request_repo(tmp_path: Path) -> Path:
    """origin: main with a 20-run history where c always passed; a feature branch that rewrites
    the baseline to say c always failed (lowering its own bar); main moves on after it."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    baseline_store.write(origin / ".ci-eval/baseline.json", history({"c": [1.0] * 20}))
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "baseline")
    git(origin, "checkout", "-q", "-b", "feature")
    for i in range(3):
        (origin / f"f{i}.txt").write_text(str(i))
        git(origin, "add", ".")
        git(origin, "commit", "-q", "-m", f"feature {i}")
    baseline_store.write(origin / ".ci-eval/baseline.json", history({"c": [0.0] * 20}))
    git(origin, "commit", "-q", "-am", "lower the bar")
    git(origin, "checkout", "-q", "main")
    (origin / "later.txt").write_text("x")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "main moves on")
    return origin


def test_a_shallow_clone_fetches_the_merge_base_and_never_reads_the_prs_copy(
    tmp_path: Path, monkeypatch: Any
) -> None:
    origin = _pull_request_repo(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", origin.as_uri(), "clone")
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    pr = _write(tmp_path / "pr.json", results({"c": [0.0, 0.0, 0.0]}, started="pr"))
    monkeypatch.chdir(clone)
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    proc = cli("compare", str(pr))
    assert proc.returncode == 1, (
        proc.stdout + proc.stderr
    )  # judged against main's history, not the PR's
    assert "shallow clone: git fetch --depth=50 origin main" in proc.stderr
    assert "REGRESSION s:c: passed 20 of 20 runs on main" in proc.stdout
    assert "at the merge base" in proc.stdout


def test_without_a_way_to_the_merge_base_it_stops_and_says_fetch_depth_0(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import shutil

    origin = _pull_request_repo(tmp_path)
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", origin.as_uri(), "clone")
    shutil.rmtree(origin)  # the remote is gone: nothing can be fetched
    pr = _write(tmp_path / "pr.json", results({"c": [0.0, 0.0, 0.0]}, started="pr"))
    monkeypatch.chdir(tmp_path / "clone")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    proc = cli("compare", str(pr))
    assert proc.returncode == 2
    assert "cannot find the merge base with main" in proc.stderr
    assert "fetch-depth: 0" in proc.stderr


def test_a_pull_request_that_deletes_the_baseline_is_judged_by_the_merge_bases_copy(
    tmp_path: Path, monkeypatch: Any
) -> None:
    origin = _pull_request_repo(tmp_path)
    git(origin, "checkout", "-q", "feature")
    git(origin, "rm", "-q", ".ci-eval/baseline.json")
    git(origin, "commit", "-q", "-m", "the baseline file is not in the PR's tree")
    pr = _write(tmp_path / "pr.json", results({"c": [0.0, 0.0, 0.0]}, started="pr"))
    monkeypatch.chdir(origin)
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    proc = cli("compare", str(pr))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # judged against main's history
    assert "REGRESSION s:c: passed 20 of 20 runs on main" in proc.stdout
    assert "at the merge base" in proc.stdout
