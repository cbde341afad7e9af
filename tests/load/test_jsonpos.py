"""The fast parser (C scanner below the top two levels) and the position-tracking one agree:
the same data, the same position for every container, the same error for bad text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.io import jsonpos
from ci_eval.io.jsonfast import NotStreamable, parse_streaming
from ci_eval.io.jsonpos import JsonDocument, parse_json

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=30,
)


def _containers(node: Any, out: list[Any]) -> list[Any]:
    if isinstance(node, dict | list):
        out.append(node)
        for child in node.values() if isinstance(node, dict) else node:
            _containers(child, out)
    return out


def _slow(text: str) -> JsonDocument:
    return jsonpos._parse(text, "f.json")


def _error(text: str, parse: Any) -> str | None:
    try:
        parse(text)
    except InputError as exc:
        return f"{exc} {exc.json_path}"
    return None


@SETTINGS
@given(data=values, indent=st.sampled_from([None, 1, 2]))
def test_both_parsers_give_the_same_data_and_positions(data: Any, indent: int | None) -> None:
    text = json.dumps(data, indent=indent)
    fast, slow = parse_json(text, "f.json"), _slow(text)
    assert fast.data == slow.data
    ours, theirs = _containers(fast.data, []), _containers(slow.data, [])
    assert [fast.offset_of(n) for n in ours] == [slow.positions[id(n)] for n in theirs]


@SETTINGS
@given(data=values, cut=st.integers(min_value=0, max_value=400), junk=st.sampled_from(']}{[,:"x'))
def test_bad_text_gets_the_slow_parsers_error(data: Any, cut: int, junk: str) -> None:
    text = json.dumps({"eval_cases": [data, {"a": [data]}]})
    cut %= len(text)
    broken = text[:cut] + junk + text[cut:]
    assert _error(broken, lambda t: parse_json(t, "f.json")) == _error(broken, _slow)


def test_the_shallow_positions_are_recorded_while_parsing() -> None:
    text = '{"eval_cases": [\n {"eval_id": "a", "deep": {"x": [1]}},\n {"eval_id": "b"}]}'
    doc = parse_json(text, "f.json")
    cases = doc.data["eval_cases"]
    assert doc.shallow  # the deep ones are not known yet
    assert [doc.line_of(c) for c in cases] == [2, 3]
    assert doc.shallow
    assert doc.locate(["eval_cases", 0, "deep", "x"]) == (2, 33)  # found by parsing again
    assert not doc.shallow


def test_nesting_past_the_ceiling_is_refused_where_it_is_as_the_slow_parser_says() -> None:
    within = "[" * 97 + "]" * 97  # within the ceiling of 100 levels: read
    assert parse_json('{"eval_cases": [' + within + "]}", "f.json").data["eval_cases"]
    past = '{"eval_cases": [' + "[" * 150 + "]" * 150 + "]}"  # past MAX_NESTING: refused
    assert "JSON nested 152 levels deep here" in (
        _error(past, lambda t: parse_json(t, "f.json")) or ""
    )
    too_deep = '{"eval_cases": [' + "[" * 5000 + "]" * 5000 + "]}"
    assert _error(too_deep, lambda t: parse_json(t, "f.json")) == _error(too_deep, _slow)


def test_non_finite_numbers_are_placed_as_before() -> None:
    text = '{"eval_cases": [{"conversation": [{"x": {"y": [1, NaN]}}]}]}'
    message = _error(text, lambda t: parse_json(t, "f.json"))
    assert message == _error(text, _slow)
    assert message is not None and "NaN is not a number JSON allows" in message


@SETTINGS
@given(data=st.dictionaries(st.text(max_size=4), values), items=st.lists(values, max_size=4))
def test_streaming_gives_what_the_whole_parse_gives(data: dict[str, Any], items: list[Any]) -> None:
    text = json.dumps({**data, "items": items}, ensure_ascii=False)  # (\ud83d: the slow way)
    seen: list[Any] = []

    def keep(item: Any, offset: int) -> Any:
        seen.append(item)
        return item

    assert parse_streaming(text, {"items": keep}) == json.loads(text)
    assert seen == json.loads(text)["items"]


@SETTINGS
@given(data=values, cut=st.integers(min_value=0, max_value=400), junk=st.sampled_from(']}{[,:"x'))
def test_streaming_never_takes_what_the_parser_refuses(data: Any, cut: int, junk: str) -> None:
    text = json.dumps({"items": [data, {"a": [data]}], "b": data})
    cut %= len(text)
    broken = text[:cut] + junk + text[cut:]
    try:
        streamed = parse_streaming(broken, {"items": lambda item, offset: item})
    except NotStreamable:
        return
    assert streamed == parse_json(broken, "f.json", positions_wanted=False).data
