"""ADK eval configs are accepted and rejected exactly as google-adk 2.13's EvalConfig does:
a differential test over generated configs, and the thresholds both read agree."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.io.jsonpos import parse_json
from ci_eval.load.sidecars import load_adk_config


def _adk_config() -> Any:
    return pytest.importorskip("google.adk.evaluation.eval_config")


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["0.5", "1", "yes", "", "abc", "true"]),
)
criterion_objects = st.fixed_dictionaries(
    {},
    optional={
        "threshold": scalars,
        "weight": scalars,
        "match_type": st.sampled_from(["EXACT", "IN_ORDER", 3]),
        "include_intermediate_responses_in_final": scalars,
        "includeIntermediateResponsesInFinal": scalars,
        "judge_model_options": st.just({"judge_model": "m", "num_samples": 2}),
    },
)
criteria = st.dictionaries(
    st.sampled_from(["tool_trajectory_avg_score", "response_match_score", "custom_x"]),
    st.one_of(scalars, criterion_objects, st.lists(scalars, max_size=2)),
    max_size=3,
)
custom_metric = st.fixed_dictionaries(
    {},
    optional={
        "code_config": st.one_of(
            st.fixed_dictionaries({}, optional={"name": scalars, "extra": scalars}),
            scalars,
        ),
        "codeConfig": st.just({"name": "pkg.fn"}),
        "description": scalars,
    },
)
configs = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "criteria": st.one_of(criteria, scalars, st.lists(scalars, max_size=1)),
            "custom_metrics": st.one_of(
                st.dictionaries(st.just("custom_x"), custom_metric), scalars
            ),
            "live_model_config": st.one_of(
                st.fixed_dictionaries({}, optional={"timeout_seconds": scalars}), scalars
            ),
            "metrics": st.lists(st.just({"metric_name": "x"}), max_size=1),
            "eval_metrics": scalars,
            "owner": scalars,
        },
    ),
    st.lists(scalars, max_size=2),
    scalars,
)


def _ours(data: Any) -> dict[str, float | None] | None:
    text = json.dumps(data)
    try:
        config = load_adk_config(parse_json(text, "test_config.json"), "test_config.json")
    except InputError:
        return None
    return {m.name: m.threshold for m in config.metrics}


def _adk(data: Any) -> dict[str, float | None] | None:
    try:
        config = _adk_config().EvalConfig.model_validate_json(json.dumps(data))
    except ValueError:  # pydantic's ValidationError
        return None
    return {
        name: (value if isinstance(value, float) else value.threshold)
        for name, value in config.criteria.items()
    }


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_accepts_and_rejects_what_adk_does(data: Any) -> None:
    assert _ours(data) == _adk(data)


@pytest.mark.parametrize(
    "data",
    [
        {"criteria": {"response_match_score": {"weight": 0.3}}},
        {"criteria": {"response_match_score": None}},
        {"criteria": []},
        {"custom_metrics": {"m": {"code_config": {"name": "a.b", "args": []}}}},
        [],
    ],
)
def test_adk_rejects_these_and_so_do_we(data: Any) -> None:
    assert _adk(data) is None and _ours(data) is None


@pytest.mark.parametrize(
    "data",
    [
        {"metrics": [{"metric_name": "x"}]},  # another tool's file: no criteria for ADK
        {"criteria": {"response_match_score": "0.5"}, "owner": "qa"},
        {"criteria": {"x": {"threshold": 1, "matchType": "IN_ORDER", "weight": 2}}},
    ],
)
def test_adk_accepts_these_and_so_do_we(data: Any) -> None:
    assert _adk(data) is not None and _ours(data) == _adk(data)
