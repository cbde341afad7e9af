"""The results model is the results file's schema: every record's fields are written under
their JSON names and read back as they were; a value the model does not allow is refused with
its JSON path, never an internal error; a file that is accepted renders; the previous schema
is read and renders as it did."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.model import Content, IntermediateData, Invocation
from ci_eval.model.comparison import (
    CaseJudgement,
    Comparison,
    Judgement,
    MetricChange,
    SuiteDrop,
)
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.results import Trajectory, TrajectorySource
from ci_eval.model.results_file import SCHEMA_VERSION, adapter, case_line, record_json
from ci_eval.model.status import CASE_STATUSES, METRIC_STATUSES, Status
from ci_eval.model.usage import Usage
from ci_eval.results.file import (
    CaseMetric,
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
    read_results,
    to_json,
    write_results,
)
from tests.conftest import REPO
from tests.helpers import run_cli
from tests.mutation import replace_one_value

DATA = REPO / "tests" / "data"
RECORDS = (
    MetricResult,
    CaseMetric,
    Usage,
    Trajectory,
    InvocationRecord,
    RunRecord,
    CaseRecord,
    SetRecord,
    RunResults,
    MetricChange,
    CaseJudgement,
    SuiteDrop,
    Comparison,
)

# --- arbitrary valid results --------------------------------------------------------------------

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
number = st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)
count = st.integers(0, 10**6)
seconds = st.integers(0, 10**7).map(lambda n: n / 10_000)  # as written: 4 decimals
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | number | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
data = st.dictionaries(text, json_value, max_size=3)
maybe = st.none().__or__


def _invocation(question: str, answer: str | None) -> Invocation:
    return Invocation(
        invocation_id="i",
        user_content=Content.from_text(question, "user"),
        final_response=None if answer is None else Content.from_text(answer, "model"),
        intermediate_data=IntermediateData(),
    )


usages = st.builds(Usage, maybe(count), maybe(count), maybe(count), maybe(count))
invocations = st.builds(
    InvocationRecord,
    st.builds(_invocation, text, maybe(text)),
    maybe(st.builds(_invocation, text, maybe(text))),
    maybe(seconds),
    count,
    maybe(text),
    maybe(usages),
)
metric_results = st.builds(
    MetricResult,
    text,
    st.sampled_from(METRIC_STATUSES),
    maybe(number),
    maybe(number),
    st.lists(maybe(number), max_size=3),
    maybe(text),
    data,
)
case_metrics = st.builds(
    CaseMetric,
    text,
    st.sampled_from(METRIC_STATUSES),
    maybe(number),
    maybe(number),
    st.booleans(),
    st.lists(maybe(number), max_size=3),
    maybe(number),
    maybe(number),
    maybe(number),
    st.booleans(),
    maybe(text),
    st.lists(maybe(st.booleans()), max_size=3),
)
runs = st.builds(
    RunRecord,
    count,
    st.lists(invocations, max_size=2),
    maybe(text),
    seconds,
    st.lists(metric_results, max_size=2),
    maybe(data),
    maybe(seconds),
    st.booleans(),
)
cases = st.builds(
    CaseRecord,
    text,
    text,
    maybe(count),
    st.lists(runs, max_size=2),
    maybe(text),
    data,
    maybe(st.lists(data, max_size=2)),
    st.lists(case_metrics, max_size=2),
    # a scored case: COMPLETED is what an unscored one is written as, with no verdict
    st.sampled_from([s for s in CASE_STATUSES if s is not Status.COMPLETED]),
    st.booleans(),
    maybe(data),
)
specs = st.builds(MetricSpec, text, maybe(number), data, maybe(text))
sets = st.builds(
    SetRecord,
    text,
    text,
    text,
    st.builds(MetricConfig, st.lists(specs, max_size=2), text, text),
    st.lists(cases, max_size=3),
    st.lists(specs, max_size=2),
)
keys = st.tuples(text, text)
comparisons = st.builds(
    Comparison,
    maybe(text),
    maybe(st.from_regex(r"[0-9T:+\-.]{0,25}", fullmatch=True)),
    st.lists(
        st.builds(
            MetricChange,
            text,
            text,
            text,
            maybe(number),
            maybe(number),
            st.booleans(),
            st.booleans(),
            maybe(text),
            maybe(number),
            maybe(count),
            maybe(count),
            maybe(count),
            maybe(count),
        ),
        max_size=2,
    ),
    st.lists(keys, max_size=2),
    st.lists(keys, max_size=2),
    st.lists(text, max_size=2),
    st.lists(
        st.builds(
            CaseJudgement,
            text,
            text,
            st.sampled_from(list(Judgement)),
            count,
            count,
            count,
            count,
            text,
            maybe(number),
            maybe(number),
            st.lists(text, max_size=2),
            maybe(text),
            maybe(text),
        ),
        max_size=2,
    ),
    maybe(st.builds(SuiteDrop, count, count, count, number, number, st.booleans(), maybe(text))),
    number,
    count,
    maybe(text),
)
results = st.builds(
    RunResults,
    st.lists(sets, max_size=2),
    text,
    st.from_regex(r"[0-9T:+\-. ]{0,25}", fullmatch=True),
    st.integers(0, 10**7).map(lambda n: n / 1000),  # a run's wall time: to the millisecond
    st.builds(RunFacts, concurrency=maybe(count), shard=maybe(text), stopped=maybe(text)),
    st.booleans(),
    maybe(comparisons),
    st.lists(st.sampled_from(["failure", "regression", "error", "not-evaluated"])).map(tuple),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(results)
def test_any_valid_results_read_back_as_they_were_written(original: RunResults) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.json"
        write_results(path, original)
        back = read_results(path)
    assert back == original
    assert to_json(back) == to_json(original)


# --- one description: every field is in the file ------------------------------------------------


def _fields(kind: type) -> tuple[set[str], set[str]]:
    """A record's fields as the file names them: those pydantic writes, those written apart."""
    schema = adapter(kind).core_schema
    while schema["type"] != "dataclass-args":
        schema = schema["schema"]
    named = {f["name"]: f.get("validation_alias") or f["name"] for f in schema["fields"]}
    apart = {f["name"] for f in schema["fields"] if f.get("serialization_exclude")}
    return {named[n] for n in named if n not in apart}, apart


# what each record writes by hand, and nothing else
SPLICED = {
    InvocationRecord: {"stored_expected", "stored_actual"},
    RunRecord: {"invocations"},
    CaseRecord: {"runs", "scored_status"},
    SetRecord: {"cases"},
    RunResults: {"sets", "comparison"},
}


@pytest.mark.parametrize("kind", RECORDS, ids=lambda k: k.__name__)
def test_every_field_of_every_record_is_written_and_named_as_it_is_read(kind: type) -> None:
    names, apart = _fields(kind)
    assert len(names) + len(apart) == len(dataclasses.fields(kind))
    assert apart == SPLICED.get(kind, set())
    written = json.loads(record_json(_sample(kind)))
    assert set(written) == names | set(getattr(kind, "DERIVED", {}))


def _sample(kind: type) -> Any:
    return {
        MetricResult: MetricResult("m", Status.PASSED),
        CaseMetric: CaseMetric("m", Status.PASSED, 1, 1),
        Usage: Usage(1200, 85, 1024, 2),
        Trajectory: Trajectory(TrajectorySource.SPANS, 3, disagreement="d", unread="u"),
        # a trajectory is written where a run with --otlp recorded one
        InvocationRecord: InvocationRecord(
            _invocation("q", "a"), trajectory=Trajectory(TrajectorySource.SPANS, 3)
        ),
        RunRecord: RunRecord(1),
        # ADK's own status is written where it is not the case's
        CaseRecord: CaseRecord("c", "f.json", 1, adk_status=Status.PASSED),
        SetRecord: SetRecord("s", "f.json", "adk", MetricConfig([], "default", "adk")),
        RunResults: RunResults([], "agent", "2026-11-26T00:00:00+00:00", 1.0),
        MetricChange: MetricChange("s", "c", "m", 1, 0),
        CaseJudgement: CaseJudgement("s", "c", Judgement.REGRESSION, 1, 0, 1, 1, "history"),
        SuiteDrop: SuiteDrop(1, 1, 1, 0.1, 0.01),
        Comparison: Comparison("abc", None),
    }[kind]


def test_a_case_is_one_line_with_its_derived_status_and_error() -> None:
    case = CaseRecord("c", "f.json", 1, runs=[RunRecord(1, error="agent down")])
    line = case_line(case)
    assert "\n" not in line
    written = json.loads(line)
    assert written["status"] == "ERROR" and written["error"] == "agent down"
    assert written["runs"][0]["retries"] == 0 and "scored_status" not in written


# --- refused with its place, never an internal error ------------------------------------------


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real results file with a comparison (the sample agent, then again against the
    baseline its first run made), as data."""
    work = tmp_path_factory.mktemp("compared")
    shutil.copytree(REPO / "samples", work / "samples")
    (work / "ci-eval.toml").write_text((REPO / "ci-eval.toml").read_text())
    run_cli("run", "--results", "first.json", cwd=work)
    run_cli("baseline", "update", "first.json", "--baseline", "b.json", cwd=work)
    run_cli("run", "--results", "second.json", "--baseline", "b.json", cwd=work)
    data = json.loads((work / "second.json").read_text())
    assert data["comparison"]["cases"]
    data["comparison"]["suite"] = {
        "cases": 5, "runs": 5, "failed": 1, "expected": 0.5, "p_value": 0.3, "regressed": False,
    }  # fmt: skip
    return data


def _report(tmp_path: Path, data: dict[str, Any]) -> Any:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    return run_cli(
        "report", str(path), "--junit", str(tmp_path / "j.xml"), "--summary", str(tmp_path / "s.md")
    )


def test_the_crafted_suite_is_refused_with_its_json_path(
    tmp_path: Path, compared: dict[str, Any]
) -> None:
    crafted = json.loads(json.dumps(compared))
    crafted["comparison"]["suite"] |= {"p_value": "<img src=x>", "regressed": True}
    done = _report(tmp_path, crafted)
    assert done.returncode == 2, done.stderr
    assert "$.comparison.suite.p_value: Input should be a valid number (found '<img src=x>')" in (
        done.stderr
    )
    assert "internal error" not in done.stderr


def test_a_negative_usage_count_is_refused_with_its_json_path(
    tmp_path: Path, compared: dict[str, Any]
) -> None:
    crafted = json.loads(json.dumps(compared))
    crafted["sets"][0]["cases"][0]["runs"][0]["invocations"][0]["usage"] = {"input_tokens": -1}
    done = _report(tmp_path, crafted)
    assert done.returncode == 2
    assert "$.sets[0].cases[0].runs[0].invocations[0].usage.input_tokens: must not be negative" in (
        done.stderr
    )


def test_a_suite_missing_fields_names_the_first_one(
    tmp_path: Path, compared: dict[str, Any]
) -> None:
    crafted = json.loads(json.dumps(compared))
    crafted["comparison"]["suite"] = {"cases": 3}
    done = _report(tmp_path, crafted)
    assert done.returncode == 2
    assert "$.comparison.suite.runs: is missing" in done.stderr
    assert "TypeError" not in done.stderr and "internal error" not in done.stderr


def test_a_file_from_a_newer_ci_eval_is_refused_in_one_line(
    tmp_path: Path, compared: dict[str, Any]
) -> None:
    newer = json.loads(json.dumps(compared))
    newer["schema_version"] = SCHEMA_VERSION + 1
    newer["tool"]["version"] = "9.9.9"
    done = _report(tmp_path, newer)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "written by ci-eval 9.9.9" in line and "upgrade ci-eval" in line


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damage=st.data())
def test_a_damaged_results_file_is_refused_or_rendered_never_an_internal_error(
    compared: dict[str, Any], damage: st.DataObject
) -> None:
    import tempfile

    doc = json.loads(json.dumps(compared))
    replace_one_value(doc, damage)
    with tempfile.TemporaryDirectory() as folder:
        done = _report(Path(folder), doc)
    # 3: the damage said the run was interrupted or a case errored, which the gate reports
    assert done.returncode in (0, 1, 2, 3), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# --- the previous schema ------------------------------------------------------------------------


def test_a_schema_1_file_renders_as_the_ci_eval_that_wrote_it_rendered_it(tmp_path: Path) -> None:
    """Its verdict and every number as then; only the wording of short history and of its
    counts is today's."""
    done = run_cli(
        "report", str(DATA / "results-schema-1.json"), "--summary", str(tmp_path / "s.md")
    )
    assert done.returncode == 0
    assert done.stdout == (DATA / "results-schema-1.report.txt").read_text()
    assert (tmp_path / "s.md").read_text() == (DATA / "results-schema-1.summary.md").read_text()


def test_a_schema_1_file_is_written_back_as_the_current_schema(tmp_path: Path) -> None:
    old = read_results(DATA / "results-schema-1.json")
    assert all(s.applied_metrics for s in old.sets)  # from the old "metrics.metrics"
    write_results(tmp_path / "r.json", old)
    again = json.loads((tmp_path / "r.json").read_text())
    assert again["schema_version"] == SCHEMA_VERSION
    assert read_results(tmp_path / "r.json") == old


def test_a_schema_2_file_reads_its_settings_as_the_typed_record(tmp_path: Path) -> None:
    """Written by ci-eval before the run's settings were typed (the bundled sample, 2 runs):
    the same keys, read as fields; written back as the current schema, the same values."""
    old = read_results(DATA / "results-schema-2.json")
    facts = old.settings
    assert (facts.agent, facts.num_runs, facts.no_baseline) == (
        "command",
        2,
        ".ci-eval/baseline.json",
    )
    assert facts.usage_totals is not None and facts.usage_totals["agent"]["runs"] == 10
    assert facts.llm_usage == {} and facts.budget_reached is None
    write_results(tmp_path / "r.json", old)
    again = json.loads((tmp_path / "r.json").read_text())
    was = json.loads((DATA / "results-schema-2.json").read_text())["settings"]
    assert again["schema_version"] == SCHEMA_VERSION == 3
    assert again["settings"] == {k: v for k, v in was.items() if v is not None or k != "llm_cache"}
    assert read_results(tmp_path / "r.json") == old
