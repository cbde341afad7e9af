"""A metric to compute and a set's metrics: what a sidecar (or ADK's defaults) names, what a
results file records of each set."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from ci_eval.model.values import RECORD, Data, Items, Number, Text

ADK_DEFAULT_CRITERIA: dict[str, float] = {
    "tool_trajectory_avg_score": 1.0,
    "response_match_score": 0.8,
}


@dataclass(slots=True)
class MetricSpec:
    """One metric to compute: its threshold and the criterion options (snake_case keys)."""

    __pydantic_config__ = RECORD  # a results file holds each set's metrics

    name: Text
    threshold: Number | None = None
    criterion: Data = field(default_factory=dict)
    evaluator: Text | None = None  # trpc's evaluatorName, when it differs from the metric name
    # where the sidecar names it (path, line, col, json path), for "unknown metric" errors;
    # not in a results file
    origin: Annotated[
        tuple[str, int | None, int | None, str] | None, Field(exclude=True, init=False)
    ] = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        return self.name if self.threshold is None else f"{self.name}={self.threshold:g}"


@dataclass
class MetricConfig:
    __pydantic_config__ = RECORD

    metrics: Items[MetricSpec]
    source: Text = "default"  # the sidecar's path, or "default"
    dialect: Text = "default"  # "adk", "trpc" or "default"
    # custom_metrics, user_simulator_config; not in a results file
    extras: Annotated[dict[str, Any], Field(exclude=True)] = field(default_factory=dict)

    def describe(self) -> str:
        return ", ".join(m.describe() for m in self.metrics) or "none"

    def judge_models(self) -> list[str]:
        """The judge models an ADK config's criteria name (``judge_model_options.judge_model``,
        as the file writes it: ADK's default is not counted), each once, in order."""
        if self.dialect != "adk":
            return []
        named: list[str] = []
        for spec in self.metrics:
            options = spec.criterion.get("judge_model_options")
            model = options.get("judge_model") if isinstance(options, dict) else None
            if isinstance(model, str) and model.strip() and model.strip() not in named:
                named.append(model.strip())
        return named


def default_config(dialect: str = "adk") -> MetricConfig:
    """What applies without a sidecar: ADK's defaults, in the dialect's own terms where its tool
    has other defaults (adk-rs scores its own way; Orchestrate reports its journey metrics)."""
    if dialect == "adk-rs":
        # adk-rs's TrajectoryMatch::default / ResponseMatch::default (src/eval/metrics.rs);
        # scored by adk-rs's own metrics of these names (metrics/adk_rs.py)
        metrics = [
            MetricSpec("tool_trajectory_avg_score", 1.0),
            MetricSpec("final_response_match_v1", 0.8),
        ]
    elif dialect == "watsonx":
        metrics = [
            MetricSpec("journey_success", 1.0),
            MetricSpec("tool_call_precision"),
            MetricSpec("tool_call_recall"),
            MetricSpec("journey_completion"),
        ]
    elif dialect == "watsonx-quick":  # Orchestrate datasets without goals: IBM's quick eval
        metrics = [MetricSpec("quick_eval_successful_tool_calls", 1.0)]
    else:
        metrics = [MetricSpec(name, threshold) for name, threshold in ADK_DEFAULT_CRITERIA.items()]
    return MetricConfig(metrics=metrics, source="default", dialect="default")


def defaults_dialect(dialect: str, eval_set: Any) -> str:
    """Whose defaults a set takes without a sidecar: IBM's quick eval ("watsonx-quick") for a
    watsonx Orchestrate set of datasets without goals (``goals`` {}, ``goal_details`` []), which
    ``orchestrate evaluations quick-eval`` scores; else its dialect's."""
    if dialect != "watsonx" or not eval_set.eval_cases:
        return dialect
    for case in eval_set.eval_cases:
        data = case.extensions.get("watsonx")
        if not isinstance(data, dict) or data.get("goals") or data.get("goal_details"):
            return dialect
    return "watsonx-quick"


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_keys(value: Any) -> Any:
    """camelCase keys to snake_case, recursively (ADK accepts either in criteria)."""
    if isinstance(value, dict):
        return {
            _CAMEL.sub(r"_\1", k).lower() if isinstance(k, str) else k: snake_keys(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value
