"""Found by its content, JSON none of whose keys some dialect (or a sidecar) recognises is
skipped, never an error, whatever it holds and whether or not it parses as one document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.load.discover import discover_all
from ci_eval.load.evalsets import SIGNATURE_KEYS, Skipped, load_all

# arbitrary JSON none of whose keys (nor strings) is a key some dialect or sidecar recognises
_words = st.text(max_size=12).filter(lambda s: s not in SIGNATURE_KEYS)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _words,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_words, inner, max_size=4),
    max_leaves=20,
)


@given(data=_json, lines=st.booleans())
def test_json_with_no_dialects_keys_is_skipped_never_an_error(
    tmp_path_factory: pytest.TempPathFactory, data: Any, lines: bool
) -> None:
    root = tmp_path_factory.mktemp("any")
    text = json.dumps(data) + ("\n" + json.dumps(data) if lines else "")
    (root / "evals").mkdir()
    (root / "evals/data.json").write_text(text)
    [outcome] = load_all(discover_all([root]).candidates)
    assert isinstance(outcome, Skipped), outcome
