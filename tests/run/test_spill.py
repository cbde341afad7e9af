"""A run of many cases keeps its scored cases' runs in a temporary file (ci_eval.results.spill):
the results file and every report are the same as when they stay in memory, nothing secret is
read back, and a file that cannot be written to loses nothing."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status
from ci_eval.report.junit import to_junit
from ci_eval.report.markdown import render_summary
from ci_eval.report.terminal import summary_lines
from ci_eval.results import spill
from ci_eval.results.file import (
    CaseMetric,
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
    read_results,
    write_results,
)
from ci_eval.score.scorer import case_status
from ci_eval.text import redact


def _invocation(answer: str, call: str = "get_weather") -> Invocation:
    return Invocation(
        invocation_id="inv-1",
        user_content=Content.from_text("weather in Paris?", "user"),
        final_response=Content.from_text(answer, "model"),
        intermediate_data=IntermediateData(tool_uses=[FunctionCall(name=call, args={"d": 2})]),
    )


def _run(n: int, answer: str, score: float, error: str | None = None) -> RunRecord:
    status = Status.PASSED if score >= 0.5 else Status.FAILED
    return RunRecord(
        n,
        [InvocationRecord(_invocation("sunny"), _invocation(answer), 0.123456789, 0, error)],
        error=error,
        duration_s=0.2 + n / 7,  # more digits than the results file keeps
        started_s=n / 3,
        metrics=[MetricResult("m", status, score, 0.5, [score], "why", {"k": [1, 2]})],
    )


def _case(eval_id: str, *runs: RunRecord) -> CaseRecord:
    scores = [r.metrics[0].score for r in runs]
    mean = sum(s or 0.0 for s in scores) / len(scores)
    metric = CaseMetric(
        "m", Status.PASSED if mean >= 0.5 else Status.FAILED, mean, 0.5, runs=scores
    )
    metric.flaky = len({r.metrics[0].status for r in runs}) > 1
    case = CaseRecord(eval_id, "s.json", 3, runs=list(runs), metrics=[metric])
    case.scored_status = case_status(case.metrics, case)
    case.flaky = metric.flaky
    return case


def _results() -> RunResults:
    cases = [
        _case("passes", _run(1, "sunny", 1.0)),
        _case("fails", _run(1, "rain", 0.0)),
        _case("flaky", _run(1, "sunny", 1.0), _run(2, "hail", 0.0), _run(3, "sunny", 1.0)),
        _case("errs", _run(1, "", 0.0, error="turn 1: the agent answered 500")),
    ]
    spec = MetricSpec("m", 0.5)
    record = SetRecord("s", "s.json", "adk", MetricConfig([spec], "x", "adk"), cases, [spec])
    return RunResults([record], "agent", "2026-11-23T00:00:00+00:00", 1.5)


@pytest.fixture
def redactor() -> Iterator[redact.Redactor]:
    """The process's redactor for the test, put back afterwards."""
    installed = redact.Redactor()
    previous = redact.install(installed)
    yield installed
    redact.install(previous)


def _spill() -> spill.RunSpill:
    made = spill.for_run(spill.LIMIT + 1, {})
    assert made is not None
    return made


def _spilled(results: RunResults) -> RunResults:
    """A copy of ``results`` with every case's runs spilled."""
    copied = copy.deepcopy(results)
    into = _spill()
    for _, case in copied.cases():
        into.hold(case)
        assert isinstance(case.runs, spill.SpilledRuns)
    return copied


def test_a_run_of_up_to_the_limit_keeps_its_runs_in_memory() -> None:
    assert spill.for_run(spill.LIMIT, {}) is None
    assert isinstance(spill.for_run(spill.LIMIT + 1, {}), spill.RunSpill)


@pytest.mark.parametrize(("value", "limit"), [("0", 0), ("7", 7), ("many", spill.LIMIT)])
def test_the_limit_can_be_set_in_the_environment(value: str, limit: int) -> None:
    assert spill.limit_from({"CI_EVAL_RUNS_IN_MEMORY": value}) == limit


def test_a_spilled_case_reads_back_as_its_results_file_gives_it(
    tmp_path: Path, redactor: redact.Redactor
) -> None:
    write_results(tmp_path / "r.json", _results())
    from_file = read_results(tmp_path / "r.json")
    spilled = _spilled(_results())
    for (_, want), (_, got) in zip(from_file.cases(), spilled.cases(), strict=True):
        assert len(got.runs) == len(want.runs)
        assert list(got.runs) == want.runs
        assert got.error == want.error
        assert got.status == want.status


def test_the_results_file_is_the_same_spilled_or_not(
    tmp_path: Path, redactor: redact.Redactor
) -> None:
    write_results(tmp_path / "memory.json", _results())
    write_results(tmp_path / "spilled.json", _spilled(_results()))
    assert (tmp_path / "spilled.json").read_bytes() == (tmp_path / "memory.json").read_bytes()


def test_every_report_is_the_same_spilled_or_not(tmp_path: Path, redactor: redact.Redactor) -> None:
    # in memory as `ci-eval report` has them (the results file keeps durations to 0.1 ms)
    write_results(tmp_path / "r.json", _results())
    memory = read_results(tmp_path / "r.json")
    spilled = _spilled(_results())
    assert to_junit(spilled) == to_junit(memory)
    assert render_summary(spilled) == render_summary(memory)
    assert summary_lines(spilled) == summary_lines(memory)


def test_a_known_secret_is_not_written_to_the_file(redactor: redact.Redactor) -> None:
    secret = "tok-3nb9-s3cret-value"
    redactor.add(secret)
    results = _results()
    case = results.sets[0].cases[1]
    case.runs[0].invocations[0].actual = _invocation(f"the key is {secret}")
    into = _spill()
    into.hold(case)
    assert secret.encode() not in into.read(0, 1 << 20)
    assert case.runs[0].invocations[0].actual.final_response.text() == "the key is ***"


def test_a_secret_learnt_after_spilling_is_redacted_when_read_back(
    tmp_path: Path, redactor: redact.Redactor
) -> None:
    secret = "late-s3cret-token-value"
    case = _case("late", _run(1, f"say {secret}", 0.0, error=f"turn 1: {secret} refused"))
    _spill().hold(case)
    assert secret in case.runs[0].invocations[0].actual.final_response.text()  # read once
    redactor.add(secret)
    assert case.runs[0].invocations[0].actual.final_response.text() == "say ***"
    assert case.runs[0].error == case.error == "turn 1: *** refused"
    assert secret not in case.runs.text()  # type: ignore[attr-defined]


def test_the_scrub_before_reports_leaves_spilled_runs_to_their_own_redaction(
    redactor: redact.Redactor,
) -> None:
    secret = "scrub-s3cret-token-value"
    results = _spilled(_results())
    results.sets[0].cases[0].eval_id = f"case {secret}"
    redactor.add(secret)
    redactor.scrub(results, units=(CaseRecord,))
    case = results.sets[0].cases[0]
    assert case.eval_id == "case ***"
    assert isinstance(case.runs, spill.SpilledRuns)
    assert list(case.runs) == list(_spilled(_results()).sets[0].cases[0].runs)


def test_runs_read_back_whether_written_out_or_still_gathered(
    monkeypatch: pytest.MonkeyPatch, redactor: redact.Redactor
) -> None:
    monkeypatch.setattr(spill, "_CHUNK", 3000)  # a write every few cases
    into = _spill()
    cases = [_case(f"c{i}", _run(1, f"answer {i}", 1.0)) for i in range(20)]
    originals = copy.deepcopy(cases)
    held = iter(cases)
    while not into._written:  # until a write
        into.hold(next(held))
    into.hold(next(held))  # and one more, gathered
    assert into._pending
    for case, original in zip(cases, originals, strict=True):  # those held, and not
        assert [i.actual_json() for r in case.runs for i in r.invocations] == [
            i.actual_json() for r in original.runs for i in r.invocations
        ]


def test_a_file_that_cannot_be_written_to_keeps_the_runs_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redactor: redact.Redactor
) -> None:
    monkeypatch.setattr(spill, "_CHUNK", 3000)
    (tmp_path / "ro").write_bytes(b"")
    into = spill.RunSpill((tmp_path / "ro").open("rb", buffering=0))  # os.write fails
    cases = [_case(f"c{i}", _run(1, f"answer {i}", 1.0)) for i in range(10)]
    for case in cases:
        into.hold(case)
    kept = [c for c in cases if isinstance(c.runs, list)]
    assert kept and cases[-1] in kept  # from the failed write on
    for case in cases:  # whether gathered before the failure or kept after it
        assert [i.actual.final_response.text() for r in case.runs for i in r.invocations] == [
            f"answer {case.eval_id[1:]}"
        ]
