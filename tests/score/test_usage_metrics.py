"""ADK's usage metrics, ``token_usage_v1`` and ``inference_call_count_v1``: what they count per
invocation and per run, that they inform and never fail a case, and that they say what to send
when the agent reported nothing. Then parity: google-adk 2.13's own evaluator classes, on the
invocations ADK builds from the same events, give the same numbers as ci-eval's capture and
metrics, for events generated at random and for those events as ``adk eval`` records them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.connectors.base import events_to_turn
from ci_eval.connectors.replay import invocation_to_turn
from ci_eval.metrics.adk_usage import NO_CALLS, NO_TOKENS
from ci_eval.metrics.base import ScoreContext
from ci_eval.model import Content, Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.status import Status
from ci_eval.model.usage import Usage
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord
from ci_eval.score.scorer import ScoreOptions, score_case, score_run

USAGE_METRICS = [MetricSpec("token_usage_v1"), MetricSpec("inference_call_count_v1")]


def _inv(n: int = 0) -> Invocation:
    return Invocation(invocation_id=f"i{n}", user_content=Content.from_text("q", "user"))


def _scored(usage: list[Usage | None], spec: MetricSpec | None = None) -> dict[str, Any]:
    invocations = [_inv(n) for n in range(len(usage))]
    specs = [spec] if spec else USAGE_METRICS
    results = score_run(specs, "adk", invocations, invocations, ScoreContext(usage=usage))
    return {r.name: r for r in results}


# --- what they count ---------------------------------------------------------------------------


def test_token_usage_is_input_plus_output_tokens_per_invocation() -> None:
    token = _scored([Usage(100, 20, 64, 2), Usage(50, None, None, 1)])["token_usage_v1"]
    assert token.per_invocation == [120.0, 50.0] and token.score == 85.0


def test_cached_tokens_are_part_of_the_input_not_added_to_it() -> None:
    token = _scored([Usage(100, 20, 64, 2)])["token_usage_v1"]
    assert token.score == 120.0
    assert token.details == {
        "total_tokens": 120.0,
        "input_tokens": 100.0,
        "cached_tokens": 64.0,
        "output_tokens": 20.0,
    }


def test_a_turn_that_reported_no_tokens_counts_as_none_spent_in_the_runs_value() -> None:
    """ADK's ``_average``: once any turn reported tokens, a turn with none reported spent none
    (a turn answered without a model); its own value stays n/a."""
    token = _scored([Usage(100, 20, None, 2), Usage(None, None, None, 0), None])["token_usage_v1"]
    assert token.per_invocation == [120.0, None, None]
    assert token.score == 40.0
    assert token.details["cached_tokens"] is None  # no turn reported one: n/a, not zero


def test_one_runs_case_score_is_the_runs_value_as_adk_eval_reports_it() -> None:
    invocation = _inv()
    usages = [Usage(100, 20, None, 2), Usage(None, None, None, 0), None]
    run = RunRecord(1, [InvocationRecord(invocation, invocation, usage=u) for u in usages])
    case = CaseRecord("c", "s.json", runs=[run])
    score_case(case, USAGE_METRICS, "adk", "adk", ScoreOptions())
    token = next(m for m in case.metrics if m.name == "token_usage_v1")
    assert token.score == token.runs[0] == 40.0  # not 120, the mean of the known turns


def test_inference_call_count_is_the_mean_of_the_turns_that_reported_one() -> None:
    calls = _scored([Usage(model_calls=2), Usage(model_calls=0), None])["inference_call_count_v1"]
    assert calls.per_invocation == [2.0, 0.0, None] and calls.score == 1.0


def test_zero_model_calls_is_a_value_not_an_unknown() -> None:
    calls = _scored([Usage(model_calls=0)])["inference_call_count_v1"]
    assert (calls.status, calls.score) == (Status.INFO, 0.0)


# --- informational, and what they say when nothing was reported ------------------------------


def test_they_inform_and_never_decide_a_case() -> None:
    invocation = _inv()
    record = InvocationRecord(invocation, invocation, usage=Usage(10**6, 10**6, None, 99))
    case = CaseRecord("c", "s.json", runs=[RunRecord(1, [record])])
    score_case(case, USAGE_METRICS, "adk", "adk", ScoreOptions())
    assert [(m.status, m.informational) for m in case.metrics] == [(Status.INFO, True)] * 2
    assert case.scored_status == Status.NOT_EVALUATED  # nothing gating passed or failed


def test_an_agent_that_reported_no_usage_is_not_evaluated_with_what_to_send() -> None:
    results = _scored([None, None])
    assert results["token_usage_v1"].status == Status.NOT_EVALUATED
    assert results["token_usage_v1"].reason == NO_TOKENS
    assert results["inference_call_count_v1"].reason == NO_CALLS
    assert "usage" in NO_TOKENS and "usage.model_calls" in NO_CALLS


def test_model_calls_without_tokens_give_a_call_count_and_no_token_usage() -> None:
    results = _scored([Usage(model_calls=1)])
    assert results["inference_call_count_v1"].score == 1.0
    assert results["token_usage_v1"].status == Status.NOT_EVALUATED


def test_no_invocations_are_not_evaluated() -> None:
    [result] = score_run([MetricSpec("token_usage_v1")], "adk", [], [], ScoreContext())
    assert (result.status, result.reason) == (Status.NOT_EVALUATED, "no invocations")


def test_a_threshold_is_ignored_and_the_result_says_so() -> None:
    result = _scored([Usage(1, 1, None, 1)], MetricSpec("token_usage_v1", 1.0))["token_usage_v1"]
    assert (result.status, result.score) == (Status.INFO, 2.0)
    assert "threshold is ignored" in (result.reason or "")


def test_a_case_over_runs_reads_the_known_values_of_every_run() -> None:
    """ADK's AgentEvaluator over repeats: the mean of every known per-invocation value."""
    invocation = _inv()
    runs = [
        RunRecord(n, [InvocationRecord(invocation, invocation, usage=Usage(t, 0, None, c))])
        for n, (t, c) in enumerate([(100, 1), (300, 3)], 1)
    ]
    case = CaseRecord("c", "s.json", runs=runs)
    score_case(case, USAGE_METRICS, "adk", "adk", ScoreOptions())
    assert [(m.name, m.score, m.runs) for m in case.metrics] == [
        ("token_usage_v1", 200.0, [100.0, 300.0]),
        ("inference_call_count_v1", 2.0, [1.0, 3.0]),
    ]


# --- parity with google-adk's evaluators -----------------------------------------------------

counts = st.none() | st.integers(0, 5000)
usage_metadata = st.none() | st.fixed_dictionaries(
    {},
    optional={
        key: counts
        for key in (
            "prompt_token_count",
            "tool_use_prompt_token_count",
            "candidates_token_count",
            "thoughts_token_count",
            "cached_content_token_count",
            "total_token_count",
        )
    },
)
# (author, what its content holds, grounded, usage metadata, model version)
events = st.tuples(
    st.sampled_from(["agent_a", "sub", "user", "USER"]),
    st.sampled_from(["call", "response", "text", "empty_text", "inline", "none", "thought"]),
    st.booleans(),
    usage_metadata,
    st.none() | st.sampled_from(["", "gemini-x"]),
)
turns = st.lists(st.lists(events, max_size=6), min_size=1, max_size=4)


def _adk_event(invocation_id: str, spec: tuple[Any, ...]) -> Any:
    from google.adk.events import Event
    from google.genai import types

    author, kind, grounded, metadata, model_version = spec
    part = {
        "call": types.Part(function_call=types.FunctionCall(name="t", args={"a": 1})),
        "response": types.Part(function_response=types.FunctionResponse(name="t", response={})),
        "text": types.Part(text="words"),
        "empty_text": types.Part(text=""),
        "inline": types.Part(inline_data=types.Blob(mime_type="image/png", data=b"x")),
        "thought": types.Part(text="hmm", thought=True),
        "none": None,
    }[kind]
    return Event(
        author=author,
        invocation_id=invocation_id,
        content=types.Content(role="model", parts=[part]) if part is not None else None,
        grounding_metadata=types.GroundingMetadata() if grounded else None,
        usage_metadata=(
            types.GenerateContentResponseUsageMetadata(**metadata) if metadata is not None else None
        ),
        model_version=model_version,
    )


def _adk_turns(spec: list[list[tuple[Any, ...]]]) -> tuple[list[list[Any]], list[Any]]:
    """Each turn's events (the user's message first) and ADK's invocations of them."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator
    from google.adk.events import Event
    from google.genai import types

    per_turn = []
    for n, turn in enumerate(spec):
        user = Event(
            author="user",
            invocation_id=f"e-{n}",
            content=types.Content(role="user", parts=[types.Part(text=f"turn {n}")]),
        )
        per_turn.append([user, *(_adk_event(f"e-{n}", e) for e in turn)])
    flat = [e for turn in per_turn for e in turn]
    return per_turn, EvaluationGenerator.convert_events_to_eval_invocations(flat)


def _adk_scores(invocations: list[Any]) -> dict[str, tuple[Any, list[Any], Any]]:
    from google.adk.evaluation._efficiency_evaluators import (
        _InferenceCallCountV1Evaluator,
        _TokenUsageV1Evaluator,
    )

    token = _TokenUsageV1Evaluator().evaluate_invocations(invocations)
    calls = _InferenceCallCountV1Evaluator().evaluate_invocations(invocations)
    details = token.overall_token_usage_details
    return {
        "token_usage_v1": (
            token.overall_score,
            [r.score for r in token.per_invocation_results],
            None
            if details is None or details.total_tokens is None
            else {
                "total_tokens": details.total_tokens,
                "input_tokens": details.input_tokens,
                "cached_tokens": details.cached_tokens,
                "output_tokens": details.output_tokens,
            },
        ),
        "inference_call_count_v1": (
            calls.overall_score,
            [r.score for r in calls.per_invocation_results],
            None,
        ),
    }


def _ours(usage: list[Usage | None]) -> dict[str, tuple[Any, list[Any], Any]]:
    out = {}
    for name, result in _scored(usage).items():
        if result.status == Status.NOT_EVALUATED:
            out[name] = (None, [None] * len(usage), None)
        else:
            details = result.details or None
            out[name] = (result.score, result.per_invocation, details)
    return out


@pytest.fixture(scope="module")
def _adk() -> None:
    pytest.importorskip("google.adk")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=turns)
def test_live_events_score_as_adks_evaluators_score_them(_adk: None, spec: Any) -> None:
    """The events as api_server and the in-process runner send them (camelCase JSON)."""
    per_turn, invocations = _adk_turns(spec)
    usage = [
        events_to_turn(
            [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in turn]
        ).usage
        for turn in per_turn
    ]
    assert _ours(usage) == _adk_scores(invocations)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=turns)
def test_recorded_invocations_score_as_adks_evaluators_score_them(_adk: None, spec: Any) -> None:
    """The invocations as ``adk eval`` records them (snake_case, every null written)."""
    _, invocations = _adk_turns(spec)
    recorded = [Invocation.model_validate(i.model_dump(mode="json")) for i in invocations]
    usage = [invocation_to_turn(i).usage for i in recorded]
    assert _ours(usage) == _adk_scores(invocations)
