"""Property tests: generated eval sets survive dump → load; no input crashes the loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.dialects import WRITERS
from ci_eval.errors import InputError
from ci_eval.load.discover import Candidate
from ci_eval.load.evalsets import Failed, LoadedEvalSet, SidecarFinder, Skipped, load_candidate
from ci_eval.model import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    Part,
    SessionInput,
    canonical_form,
)
from tests.helpers import run_cli

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

ident = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
text = st.text(max_size=40)
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ident, inner, max_size=3),
    max_leaves=8,
)

args = st.none() | st.dictionaries(ident, json_value, max_size=4)


# strategies built once: built inside a composite, each draw would build and validate them
# anew (most of these tests' time)
_calls = st.lists(
    st.builds(
        lambda i, n, a: FunctionCall.model_validate({"id": i, "name": n, "args": a}),
        st.none() | ident,
        ident,
        args,
    ),
    max_size=3,
    unique_by=lambda c: c.id if c.id is not None else object(),
)
_response = st.dictionaries(ident, json_value, max_size=3)
_final = st.none() | st.builds(lambda t: Content(role="model", parts=[Part(text=t)]), text)
_session = st.none() | st.builds(
    lambda a, u, s: SessionInput.model_validate({"app_name": a, "user_id": u, "state": s}),
    ident,
    ident,
    st.dictionaries(ident, json_value, max_size=2),
)
_ids = st.lists(ident, min_size=1, max_size=4, unique=True)


@st.composite
def invocations(draw: Any) -> Invocation:
    calls = draw(_calls)
    # trpc pairs a response with its call: one response per call at most, same id and name
    responses = [
        FunctionResponse(id=c.id, name=c.name, response=draw(_response))
        for c in calls
        if c.id is not None and draw(st.booleans())
    ]
    with_data = draw(st.booleans())
    data = IntermediateData(tool_uses=calls, tool_responses=responses) if with_data else None
    return Invocation(
        invocation_id=draw(ident),
        user_content=Content(role="user", parts=[Part(text=draw(text))]),
        final_response=draw(_final),
        intermediate_data=data,
    )


_conversation = st.lists(invocations(), min_size=1, max_size=3)


@st.composite
def eval_sets(draw: Any) -> EvalSet:
    cases = [
        EvalCase(eval_id=eval_id, session_input=draw(_session), conversation=draw(_conversation))
        for eval_id in draw(_ids)
    ]
    return EvalSet(
        eval_set_id=draw(ident),
        name=draw(st.none() | ident),
        description=draw(st.none() | text),
        eval_cases=cases,
    )


def _load(path: Path) -> Any:
    return load_candidate(Candidate(path, path.name, True, path.parent), SidecarFinder())


def _round_trip(eval_set: EvalSet, dialect: str, folder: Path) -> EvalSet:
    data, warnings = WRITERS[dialect].dump(eval_set)
    assert warnings == []
    path = folder / "generated.evalset.json"
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    outcome = _load(path)
    assert isinstance(outcome, LoadedEvalSet), outcome
    return outcome.eval_set


@SETTINGS
@given(eval_set=eval_sets())
def test_adk_dump_then_load_is_identity(eval_set: EvalSet, tmp_path: Path) -> None:
    assert canonical_form(_round_trip(eval_set, "adk", tmp_path)) == canonical_form(eval_set)


@SETTINGS
@given(eval_set=eval_sets())
def test_trpc_dump_then_load_is_identity(eval_set: EvalSet, tmp_path: Path) -> None:
    back = _round_trip(eval_set, "trpc", tmp_path)
    assert canonical_form(back) == canonical_form(eval_set)


@SETTINGS
@given(blob=st.binary(max_size=300))
def test_arbitrary_bytes_only_raise_input_errors(blob: bytes, tmp_path: Path) -> None:
    path = tmp_path / "x.evalset.json"
    path.write_bytes(blob)
    outcome = _load(path)
    assert isinstance(outcome, Failed | LoadedEvalSet | Skipped)
    if isinstance(outcome, Failed):
        assert isinstance(outcome.error, InputError)
        assert "\n" not in str(outcome.error)


eval_shaped = st.fixed_dictionaries(
    {},
    optional={
        "eval_set_id": json_value,
        "eval_cases": st.lists(
            st.dictionaries(
                st.sampled_from(
                    ["eval_id", "conversation", "session_input", "conversation_scenario"]
                ),
                json_value,
            ),
            max_size=2,
        ),
        "evalCases": st.lists(json_value, max_size=2),
        "evalSetId": json_value,
        "id": json_value,
        "goal_details": json_value,
        "story": json_value,
        "goals": json_value,
        "criteria": json_value,
    },
)


@SETTINGS
@given(
    data=json_value
    | eval_shaped
    | st.lists(
        st.dictionaries(
            st.sampled_from(
                ["query", "expected_tool_use", "reference", "data", "name", "metricName"]
            ),
            json_value,
        ),
        max_size=3,
    )
)
def test_arbitrary_json_only_raises_input_errors(data: Any, tmp_path: Path) -> None:
    path = tmp_path / "x.evalset.json"
    path.write_text(json.dumps(data), "utf-8")
    outcome = _load(path)
    if isinstance(outcome, Failed):
        assert isinstance(outcome.error, InputError)
        assert str(outcome.error).startswith("x.evalset.json")


def test_the_command_exits_2_with_one_line_for_garbage(tmp_path: Path) -> None:
    path = tmp_path / "broken.evalset.json"
    path.write_bytes(b'{"eval_set_id": "s", "eval_cases": [{"eval_id": 1,')
    result = run_cli("validate", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    [line] = result.stdout.splitlines()
    assert line.startswith(f"{path.as_posix()}:1:") or "broken.evalset.json:1:" in line
    assert "not valid JSON" in line
