"""``.ci-eval/accept.toml`` read as a typed record: every entry checked, a bad one refused in
one line naming its table, never a traceback."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.gate.accept import entries_of, read_entries

VALUES = st.recursive(
    st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["case", "reason", "metrics", "x"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["accept", "other"]), VALUES, max_size=2))
def test_any_toml_is_read_or_refused_in_one_line(data: dict[str, Any]) -> None:
    try:
        found = entries_of(data, "accept.toml")  # what the TOML parser gives
    except InputError as refused:
        assert "\n" not in str(refused) and str(refused).startswith("accept.toml")
        return
    for entry in found.accept:
        assert entry.case.strip() and entry.reason.strip()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[accept]]\ncase = "s:c"\n', "accept[0]: reason is required"),
        ('[[accept]]\nreason = "r"\n', 'accept[0]: case is required: "SET_ID:CASE_ID"'),
        ('[[accept]]\ncase = "s:c"\nreason = " "\n', "accept[0]: reason is required"),
        ('[[accept]]\ncase = "s:c"\nreason = "r"\nmetrics = "m"\n', "metrics must be a list"),
        (
            '[[accept]]\ncase = "s:c"\nreason = "r"\nzz = 1\nyy = 2\n',
            "accept[0]: unknown key(s) yy, zz; known: case, metrics, reason",
        ),
        ("other = 1\n", "unknown key(s) other; the file holds [[accept]] entries"),
        ("accept = 1\n", "accept must be an array of tables ([[accept]])"),
        ("accept = [1]\n", "accept[0]: expected a table"),
    ],
)
def test_a_bad_entry_is_refused_with_its_table(text: str, said: str) -> None:
    with pytest.raises(InputError) as refused:
        read_entries(text, "accept.toml")
    assert said in str(refused.value)
