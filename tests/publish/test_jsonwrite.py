"""The fast indented JSON writer writes exactly what ``json.dump(indent=2, ensure_ascii=False)``
writes, for any JSON value (and the non-string keys json accepts)."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.io import jsonwrite

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
keys = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=40,
)


def _ours(data: Any, **options: Any) -> str:
    out = io.StringIO()
    jsonwrite.dump(data, out, **options)
    return out.getvalue()


@given(values, st.booleans())
def test_same_text_as_json_dump(data: Any, sort_keys: bool) -> None:
    expected = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=sort_keys)
    assert _ours(data, sort_keys=sort_keys) == expected


@given(st.dictionaries(keys, scalars, max_size=6))
def test_non_string_keys_as_json_converts_them(data: dict[Any, Any]) -> None:
    assert _ours(data) == json.dumps(data, indent=2, ensure_ascii=False)


def test_special_values_and_lone_surrogates() -> None:
    data = {"nan": math.nan, "inf": [math.inf, -math.inf], "s": "\ud800 \u2028 \x00 é\n", "e": {}}
    assert _ours(data) == json.dumps(data, indent=2, ensure_ascii=False)


def test_what_json_cannot_write_is_refused_the_same_way() -> None:
    with pytest.raises(TypeError):
        json.dumps({"x": {1, 2}}, indent=2)
    with pytest.raises(TypeError):
        _ours({"x": {1, 2}})


def test_large_documents_are_written_in_pieces() -> None:
    data = {
        "cases": [{"id": i, "text": "x" * (i % 7), "scores": [i / 3, None]} for i in range(9000)]
    }
    assert _ours(data) == json.dumps(data, indent=2, ensure_ascii=False)


json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=40,
)
small_floats = st.floats(min_value=-1e-4, max_value=1e-4) | st.floats(min_value=1e15)


@given(st.lists(json_values | st.lists(small_floats, max_size=4), max_size=6), st.booleans())
def test_lazy_arrays_are_written_as_json_writes_lists(items: list[Any], strict: bool) -> None:
    # a Lazy's items go through the fast encoder: floats under 1e-4 included, same text
    ours = _ours({"items": jsonwrite.Lazy(iter(items)), "after": 1}, strict=strict)
    expected = json.dumps({"items": items, "after": 1}, indent=2, ensure_ascii=False)
    if strict:
        expected = json.dumps(
            json.loads(expected, parse_constant=lambda _: None), indent=2, ensure_ascii=False
        )
    assert ours == expected
