"""ADK eval sets validated one case at a time, as the file is parsed (``adk.streamed``) or after
(each case's JSON let go once its model is built), load exactly as validating the whole set
does: the same models and lines, the same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from ci_eval.dialects import adk
from ci_eval.load.evalsets import Failed, LoadedEvalSet
from ci_eval.model import EvalSet, canonical_form
from tests.helpers import load
from tests.load.test_properties import SETTINGS, eval_sets


def _outcome(path: Path) -> Any:
    outcome = load(path)
    if isinstance(outcome, Failed):
        problems = getattr(outcome.error, "problems", None) or [outcome.error]
        return [f"{p} {p.json_path}" for p in problems]
    assert isinstance(outcome, LoadedEvalSet), outcome
    sources = [c.source for c in outcome.eval_set.eval_cases]
    return canonical_form(outcome.eval_set), sources, outcome.warnings, outcome.dialect


def _not_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adk, "streamed", lambda text, rel_path: None)


def _whole_set_way(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> Any:
        raise adk._Unusual

    _not_streamed(monkeypatch)
    monkeypatch.setattr(adk, "_case_by_case", refuse)


def _both_ways(path: Path) -> tuple[Any, Any]:
    """As loaded, and validating the whole set; a case-by-case load after parsing in between
    must agree with both."""
    streamed = _outcome(path)
    with pytest.MonkeyPatch.context() as patch:
        _not_streamed(patch)
        by_case = _outcome(path)
        _whole_set_way(patch)
        whole = _outcome(path)
    assert by_case == whole
    return streamed, whole


@SETTINGS
@given(eval_set=eval_sets())
def test_valid_sets_load_the_same_either_way(eval_set: EvalSet, tmp_path: Path) -> None:
    path = tmp_path / "g.evalset.json"
    path.write_text(json.dumps(adk.dump_adk(eval_set), indent=1, ensure_ascii=False), "utf-8")
    streamed, whole = _both_ways(path)
    assert streamed == whole
    assert isinstance(streamed, tuple)
    assert adk.streamed(path.read_text("utf-8"), "g.evalset.json") is not None  # it did stream


def _case(i: int) -> dict[str, Any]:
    return {
        "eval_id": f"c{i}",
        "conversation": [{"user_content": {"role": "user", "parts": [{"text": f"q{i}"}]}}],
    }


def _bad_role(case: dict[str, Any]) -> None:
    case["conversation"][0]["user_content"]["role"] = 5


def _no_conversation(case: dict[str, Any]) -> None:
    del case["conversation"]


def _same_id(case: dict[str, Any]) -> None:
    case["eval_id"] = "c0"


def _trace(case: dict[str, Any]) -> None:
    case["eval_mode"] = "trace"


def _not_a_case(case: dict[str, Any]) -> None:
    case.clear()


@pytest.mark.parametrize("spoil", [_bad_role, _no_conversation, _same_id, _trace, _not_a_case])
@pytest.mark.parametrize("camel", [False, True])
def test_a_problem_after_valid_cases_is_reported_as_before(
    spoil: Any, camel: bool, tmp_path: Path
) -> None:
    cases = [_case(i) for i in range(6)]
    spoil(cases[4])
    top = (
        {"evalSetId": "s", "evalCases": cases}
        if camel
        else {"eval_set_id": "s", "eval_cases": cases}
    )
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps(top, indent=2), "utf-8")
    by_case, whole = _both_ways(path)
    assert by_case == whole
