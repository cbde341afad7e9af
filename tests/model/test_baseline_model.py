"""The baseline model is its file's reader: whatever JSON a file holds is read or refused in
one line with its place, never a traceback; what it reads it writes back as read."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ci_eval.gate import baseline as baseline_store
from ci_eval.model.baseline import BaselineInvalid, dumps, load, to_data
from tests.gate.test_gate import results

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 30)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)
KEYS = st.sampled_from(
    ["format", "sets", "cases", "metrics", "scores", "push", "error", "fails", "usage", "pushes",
     "seq", "threshold", "criteria", "rubrics", "provenance", "window", "c", "m", "s"]
)  # fmt: skip
# JSON shaped like a baseline: its own keys, any values
SHAPED = st.recursive(
    JSON,
    lambda inner: st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=40,
)


@given(st.sampled_from([1, 2, 3]), SHAPED)
def test_any_json_is_read_or_refused_with_its_place(version: int, body: Any) -> None:
    data = (
        {"format": version, "sets": body}
        if not isinstance(body, dict)
        else body | {"format": version}
    )
    try:
        baseline = load(data)
    except BaselineInvalid as refused:
        assert refused.message and "\n" not in refused.message
        assert refused.path().startswith("$")
        return
    assert load(to_data(baseline)) == baseline  # read, written, read again: the same
    assert dumps(load(to_data(baseline))) == dumps(baseline)


RUNS = st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=4)


@given(st.lists(st.dictionaries(st.sampled_from("abc"), RUNS, min_size=1), min_size=1, max_size=4))
def test_a_baseline_updates_write_reads_back_as_it_was(jobs: list[dict[str, list[float]]]) -> None:
    data = None
    for i, cases in enumerate(jobs):
        data, _ = baseline_store.update(data, results(cases, started=f"t{i}"), commit=f"c{i}")
    assert data is not None
    again = baseline_store.parse(dumps(data), "b.json")
    assert again == data and dumps(again) == dumps(data)
