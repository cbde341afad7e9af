"""The results file and the compact form of a scored case's invocations: what a run keeps in
memory after scoring, what the file holds, and that reading it back gives the same results."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.status import Status
from ci_eval.results.file import (
    CaseMetric,
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
    read_carefully,
    read_results,
    to_json,
    write_results,
)
from ci_eval.results.stream import read_cases
from ci_eval.text import redact
from tests.mutation import replace_one_value


def _invocation(text: str, answer: str | None = None, call: str | None = None) -> Invocation:
    return Invocation(
        invocation_id="inv-1",
        user_content=Content.from_text(text, "user"),
        final_response=None if answer is None else Content.from_text(answer, "model"),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=call, args={"city": "Paris", "days": 2})] if call else []
        ),
        duration=0.25,
    )


def _case(eval_id: str = "c1", answer: str = "sunny", actual: bool = True) -> CaseRecord:
    expected = _invocation("weather?", "sunny", "get_weather")
    got = _invocation("weather?", answer, "get_weather") if actual else None
    run = RunRecord(
        1,
        [InvocationRecord(expected, got, 0.5, 1, None if actual else "not run")],
        duration_s=0.5,
        metrics=[MetricResult("m", Status.PASSED, 1.0, 0.5, [1.0], details={"k": [1, 2]})],
    )
    metric = CaseMetric("m", Status.PASSED, 1.0, 0.5, runs=[1.0], std=0.0)
    return CaseRecord(
        eval_id, "s.json", 3, runs=[run], metrics=[metric], scored_status=Status.PASSED
    )


def _results(cases: list[CaseRecord]) -> RunResults:
    spec = MetricSpec("m", 0.5)
    record = SetRecord("s", "s.json", "adk", MetricConfig([spec], "x", "adk"), cases, [spec])
    return RunResults([record], "agent", "2026-11-23T00:00:00+00:00", 1.0)


def test_a_compacted_record_gives_back_the_same_invocations() -> None:
    case = _case()
    before = copy.deepcopy(case)
    assert case.compact() is case
    record = case.runs[0].invocations[0]
    assert record.compacted
    assert record.expected == before.runs[0].invocations[0].expected
    assert record.actual == before.runs[0].invocations[0].actual
    assert record.expected.tool_calls()[0].args == {"city": "Paris", "days": 2}
    assert case == before


def test_a_compacted_record_holds_its_invocations_as_their_json_text() -> None:
    case = _case().compact()
    record = case.runs[0].invocations[0]
    assert isinstance(record.stored_expected, str)
    assert json.loads(record.stored_expected) == record.expected.model_dump(
        mode="json", exclude_none=True
    )


def test_a_missing_actual_stays_missing_once_compacted() -> None:
    record = _case(actual=False).compact().runs[0].invocations[0]
    assert record.actual is None and record.actual_json() is None
    assert record.error == "not run"


def test_compacting_twice_changes_nothing() -> None:
    case = _case().compact()
    text = case.runs[0].invocations[0].stored_expected
    case.compact()
    assert case.runs[0].invocations[0].stored_expected is text


def test_compacted_cases_write_the_same_results_file(tmp_path: Path) -> None:
    write_results(tmp_path / "objects.json", _results([_case("a"), _case("b", "rain")]))
    compact = _results([_case("a").compact(), _case("b", "rain").compact()])
    write_results(tmp_path / "compact.json", compact)
    assert (tmp_path / "objects.json").read_bytes() == (tmp_path / "compact.json").read_bytes()


def test_the_results_file_holds_one_case_per_line(tmp_path: Path) -> None:
    write_results(tmp_path / "r.json", _results([_case("a"), _case("b", "rain\nand wind")]))
    lines = (tmp_path / "r.json").read_text().splitlines()
    cases = [line.strip().rstrip(",") for line in lines if '"eval_id":' in line]
    assert [json.loads(line)["eval_id"] for line in cases] == ["a", "b"]
    back = read_results(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == to_json(back)


def test_the_results_file_reads_back_as_written(tmp_path: Path) -> None:
    results = _results([_case("a"), _case("b", "rain"), _case("c", actual=False)])
    write_results(tmp_path / "r.json", results)
    back = read_results(tmp_path / "r.json")
    assert to_json(back) == to_json(results)
    assert back.sets[0].cases == results.sets[0].cases


def test_not_a_number_is_written_as_null(tmp_path: Path) -> None:
    case = _case()
    case.metrics[0].score = float("nan")
    case.runs[0].metrics[0].per_invocation = [float("inf")]
    write_results(tmp_path / "r.json", _results([case]))
    data = json.loads((tmp_path / "r.json").read_text())
    written = data["sets"][0]["cases"][0]
    assert written["metrics"][0]["score"] is None
    assert written["runs"][0]["metrics"][0]["per_invocation"] == [None]


def test_lone_surrogates_in_a_case_are_replaced_not_fatal(tmp_path: Path) -> None:
    case = _case(answer="half \ud83d emoji")
    case.extensions = {"note": "\udc00"}
    write_results(tmp_path / "r.json", _results([case.compact()]))
    written = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"][0]
    assert written["extensions"]["note"] == "\ufffd"
    answer = written["runs"][0]["invocations"][0]["actual"]["final_response"]
    assert answer["parts"][0]["text"] == "half \ufffd emoji"


@pytest.mark.parametrize("by_units", [False, True])
def test_redaction_reaches_compacted_invocations(by_units: bool) -> None:
    secret = 'tok"en\\-s3cret é'  # its JSON form, and its JSON form's JSON form, differ
    case = _case(answer=f"the key is {secret}!").compact()
    units = (CaseRecord,) if by_units else ()
    redact.Redactor([secret]).scrub(case, units=units)
    shown = case.runs[0].invocations[0].actual.final_response.text()
    assert shown == "the key is ***!"


def test_a_secret_in_a_compacted_invocation_stays_out_of_the_results_file(
    tmp_path: Path,
) -> None:
    secret = "s3cret-value-42"
    previous = redact.install(redact.Redactor([secret]))
    try:
        write_results(tmp_path / "r.json", _results([_case(answer=secret).compact()]))
    finally:
        redact.install(previous)
    assert secret not in (tmp_path / "r.json").read_text()


def _written(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    results = _results([_case("a"), _case("b", "rain"), _case("c", actual=False)])
    results.sets[0].cases[1].extensions = {"trpc": {"n": [1, 2.5, None]}}
    write_results(tmp_path / "r.json", results)
    return tmp_path / "r.json", json.loads((tmp_path / "r.json").read_text())


def test_the_file_ci_eval_writes_is_read_case_by_case(tmp_path: Path) -> None:
    path, _ = _written(tmp_path)
    assert read_cases(path.read_text()) is not None


@pytest.mark.parametrize(
    "layout",
    [
        {"indent": 2},  # as ci-eval wrote results files before
        {"indent": None},  # one line
        {"indent": None, "separators": (",", ":")},
    ],
)
def test_every_layout_of_the_same_data_reads_the_same(
    tmp_path: Path, layout: dict[str, Any]
) -> None:
    path, data = _written(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data, **layout))
    assert to_json(read_results(other)) == to_json(read_results(path)) == data


def test_a_set_whose_cases_come_before_its_file_reads_the_same(tmp_path: Path) -> None:
    path, data = _written(tmp_path)
    data["sets"][0] = {"cases": data["sets"][0].pop("cases"), **data["sets"][0]}
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data, indent=2))
    assert to_json(read_results(other)) == to_json(read_results(path))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1e999", "1e999 is not a number JSON allows"),
        ("-1" + "0" * 400 + ".5", "is not a number JSON allows"),
        ("NaN", "NaN is not a number JSON allows"),
        ("1" * 5000, "an integer literal with more than"),
    ],
)
def test_numbers_no_json_reader_agrees_on_are_refused_wherever_they_are(
    tmp_path: Path, value: str, message: str
) -> None:
    path, _ = _written(tmp_path)
    text = path.read_text().replace('"n":[1,2.5,null]', f'"n":[1,{value},null]')
    assert value in text
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)):
        read_results(path)


def test_escaped_lone_surrogates_in_a_results_file_are_replaced(tmp_path: Path) -> None:
    path, _ = _written(tmp_path)
    path.write_text(path.read_text().replace("rain", "ra\\ud83din"))
    case = read_results(path).sets[0].cases[1]
    assert case.runs[0].invocations[0].actual.final_response.text() == "ra\ufffdin"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), indent=st.sampled_from([None, 2]))
def test_the_fast_reader_reads_what_the_careful_one_reads_or_leaves_it(
    data: st.DataObject, indent: int | None
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        _, doc = _written(Path(folder))
    replace_one_value(doc, data)
    text = json.dumps(doc, indent=indent)
    fast = read_cases(text)
    if fast is None:
        return  # left to the careful reader
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "r.json").write_text(text)
        careful = read_carefully(Path(folder) / "r.json")
    assert to_json(fast) == to_json(careful)


def test_a_negative_duration_is_refused_with_its_place(tmp_path: Path) -> None:
    path, data = _written(tmp_path)
    data["sets"][0]["cases"][1]["runs"][0]["duration_s"] = -1.5
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as refused:
        read_results(path)
    assert str(refused.value) == (
        f"{path}: $.sets[0].cases[1].runs[0].duration_s: must not be negative (found -1.5); "
        "is this a results file ci-eval wrote?"
    )


def test_values_other_than_their_type_says_are_written_as_they_are(tmp_path: Path) -> None:
    case = _case()
    case.metrics[0].threshold = 1  # an integer threshold from a config file
    case.runs[0].metrics[0].details = {"pair": (1, "a"), "score": 0.5}
    case.line = None
    write_results(tmp_path / "r.json", _results([case]))
    written = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"][0]
    assert '"threshold":1.0,' in (tmp_path / "r.json").read_text()  # a number, as a float
    assert written["runs"][0]["metrics"][0]["details"] == {"pair": [1, "a"], "score": 0.5}
    assert written["line"] is None


@pytest.mark.parametrize("repeated", ["file", "cases", "sets"])
def test_a_repeated_key_means_what_it_means_to_json(tmp_path: Path, repeated: str) -> None:
    path, _ = _written(tmp_path)
    text = path.read_text()
    if repeated == "sets":  # a second, empty list of sets: the last one counts
        text = text.rstrip().removesuffix("}") + ', "sets": []}'
    elif repeated == "cases":
        text = text.replace(
            '"file": "s.json",\n      "dialect"', '"cases": [],"file": "s.json",\n      "dialect"'
        )
    else:
        text = text.replace('"dialect": "adk"', '"dialect": "adk", "file": "other.json"', 1)
    assert text != path.read_text()
    path.write_text(text)
    assert to_json(read_results(path)) == to_json(read_carefully(path))
    assert read_cases(text) is None
