"""The settings' check parses each setting with a grammar once, into a frozen plan the stages
read: no stage gets text to parse again."""

from __future__ import annotations

import dataclasses

import pytest

from ci_eval.errors import InputError
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.settings import RunSettings
from ci_eval.settings.check import check
from ci_eval.settings.parse import CaseFilter


def test_the_plan_holds_every_setting_with_a_grammar_parsed() -> None:
    settings = RunSettings(
        fail_on=["regression,error"],
        shard="2/3",
        cases=["weather:paris", "travel"],
        metric=["response_match_score=0.5"],
        metrics={"tool_trajectory_avg_score": 1.0},
        num_runs=3,
    )
    plan = check(settings)
    assert plan.gate.fail_on == ("regression", "error")
    assert plan.shard == (2, 3)
    assert plan.cases == (
        CaseFilter("weather:paris", "weather", "paris"),
        CaseFilter("travel", "travel", None),
    )
    assert plan.metric_overrides == (MetricSpec("response_match_score", 0.5),)
    assert plan.metric_table == (MetricSpec("tool_trajectory_avg_score", 1.0),)
    assert (plan.num_runs, plan.concurrency, plan.notices) == (3, 4, ())


def test_the_plan_cannot_be_changed() -> None:
    plan = check(RunSettings())
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.num_runs = 5  # type: ignore[misc]


def test_a_concurrency_past_the_ceiling_is_capped_in_the_plan_and_said() -> None:
    settings = RunSettings(concurrency=10_000)
    plan = check(settings)
    assert plan.concurrency == 64 and settings.concurrency == 10_000
    assert plan.notices == ("warning: --concurrency 10000 is capped at 64 cases at once",)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"shard": "3/2"}, "--shard '3/2': expected I/N with 1 <= I <= N"),
        ({"fail_on": ["regresion"]}, "--fail-on: unknown regresion"),
        ({"metric": ["m=high"]}, "--metric 'm=high': the threshold must be a number"),
    ],
)
def test_a_setting_that_does_not_parse_is_refused_by_the_check(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        check(RunSettings(**changes))  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)
