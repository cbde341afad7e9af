"""Recorded results for ``--agent replay``: an ADK result file read as it streams past gives the
same recordings (and the same errors) as the whole file parsed first; a recording is held as
JSON and gives back the invocations it was made from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.connectors import replay
from ci_eval.connectors.replay import Recording, load_recordings
from ci_eval.errors import InputError
from ci_eval.io.jsonfast import NotStreamable
from ci_eval.model import Invocation
from tests.load.test_properties import SETTINGS, invocations


def _state(inv: Invocation) -> Any:
    """Everything a model holds, nested models' set fields and extras included."""
    return (inv.model_dump(), _fields_set(inv))


def _fields_set(model: Any) -> Any:
    if isinstance(model, list | tuple):
        return [_fields_set(m) for m in model]
    if not hasattr(model, "model_fields_set"):
        return None
    return (
        type(model).__name__,
        sorted(model.model_fields_set),
        model.__pydantic_extra__,
        {k: _fields_set(getattr(model, k)) for k in sorted(model.model_fields_set)},
    )


def _usual_way(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> Any:
        raise NotStreamable

    monkeypatch.setattr(replay, "parse_streaming", refuse)


def _outcome(path: Path) -> Any:
    try:
        found = load_recordings([path])
    except InputError as exc:
        return f"error: {exc}"
    return {key: [[_state(inv) for inv in rec] for rec in runs] for key, runs in found.items()}


def _both_ways(path: Path) -> tuple[Any, Any]:
    streamed = _outcome(path)
    with pytest.MonkeyPatch.context() as patch:
        _usual_way(patch)
        usual = _outcome(path)
    return streamed, usual


def _result_file(cases: list[tuple[str, list[Any]]], set_id: Any = "s") -> dict[str, Any]:
    return {
        "eval_set_result_id": "r",
        "eval_set_id": set_id,
        "eval_case_results": [
            {
                "eval_id": eval_id,
                "eval_metric_result_per_invocation": [
                    {"actual_invocation": inv, "expected_invocation": None} for inv in actuals
                ],
            }
            for eval_id, actuals in cases
        ],
    }


@SETTINGS
@given(
    runs=st.lists(st.lists(invocations(), max_size=3), min_size=1, max_size=3),
    camel=st.booleans(),
)
def test_a_streamed_file_gives_what_the_whole_file_gives(
    runs: list[list[Invocation]], camel: bool, tmp_path: Path
) -> None:
    cases = [
        (f"c{i % 2}", [inv.model_dump(mode="json", by_alias=camel) for inv in run])
        for i, run in enumerate(runs)
    ]
    path = tmp_path / "r.evalset_result.json"
    path.write_text(json.dumps(_result_file(cases), ensure_ascii=False), "utf-8")
    streamed, usual = _both_ways(path)
    assert streamed == usual
    assert not isinstance(streamed, str)
    # and it did stream
    replay.parse_streaming(path.read_text("utf-8"), {"eval_case_results": replay._adk_result})


_INV = {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(_result_file([("a", [_INV])])).replace('"r"', "NaN"),
        json.dumps(_result_file([("a", [_INV])])).replace('"r"', "1e999"),
        json.dumps(_result_file([("a", [_INV])])).replace('"r"', "1" * 5000),
        json.dumps(_result_file([("a", [_INV])])).replace('"hi"', '"\\ud83d"'),
        json.dumps(_result_file([("a", [_INV])])).replace('"a"', "7"),
        json.dumps(_result_file([("a", [_INV])])).replace('"eval_id"', '"other"'),
        json.dumps(_result_file([("a", [_INV])])).replace('"user_content"', '"nope"'),
        json.dumps(_result_file([("a", [_INV])])).replace('"user"', "[]"),
        json.dumps(_result_file([("a", [_INV]), ("b", [_INV])], set_id="")),
        json.dumps(_result_file([("a", [_INV])], set_id=3)),
        json.dumps(_result_file([("a", [_INV])])).replace("]}]}", "]}],}"),
        json.dumps(_result_file([("a", [_INV])])) + " x",
        json.dumps(json.dumps(_result_file([("a", [_INV])]))),
        '{"eval_case_results": null}',
        '{"eval_case_results": [1]}',
        '{"eval_case_results": [], "eval_case_results": [{"eval_id": "z"}]}',
        "[]",
    ],
)
def test_unusual_and_broken_files_are_read_as_before(text: str, tmp_path: Path) -> None:
    path = tmp_path / "r.evalset_result.json"
    path.write_text(text, "utf-8")
    streamed, usual = _both_ways(path)
    assert streamed == usual


def test_a_bad_recording_is_named_when_loading_and_only_its_case_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "r.evalset_result.json"
    bad = {"invocation_id": "i", "user_content": {"role": 5}}
    path.write_text(json.dumps(_result_file([("a", [_INV]), ("b", [bad])])), "utf-8")
    loaded = {key[1]: runs for key, runs in load_recordings([path]).items()}
    assert loaded["a"][0].unreadable is None
    assert loaded["b"][0].unreadable == (
        f"{path} case 'b': eval_metric_result_per_invocation[0].actual_invocation"
        ".user_content.role: Input should be a valid string"
    )


@SETTINGS
@given(run=st.lists(invocations(), max_size=4), camel=st.booleans())
def test_a_recording_gives_back_what_its_json_validates_to_fresh_each_time(
    run: list[Invocation], camel: bool
) -> None:
    raw = [inv.model_dump(mode="json", by_alias=camel, exclude_unset=True) for inv in run]
    recording = Recording.from_raw(raw)
    assert len(recording) == len(run)
    assert [_state(i) for i in recording] == [_state(Invocation.model_validate(r)) for r in raw]
    first, second = recording.invocations(), recording.invocations()
    assert all(a is not b for a, b in zip(first, second, strict=True))


def test_invocations_with_dialect_extensions_are_held_as_they_are() -> None:
    inv = Invocation.model_validate(_INV)
    inv.extensions["trpc"] = {"toolMock": [1]}
    assert Recording([inv])[0].extensions == {"trpc": {"toolMock": [1]}}


def test_a_string_wrapped_file_with_a_huge_integer_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.evalset_result.json"
    inner = '{"eval_set_result_id": "x", "eval_case_results": [], "n": ' + "9" * 5000 + "}"
    path.write_text(json.dumps(inner), "utf-8")
    with pytest.raises(InputError, match=r"a JSON string that is not a result file \(an integer"):
        load_recordings([path])
