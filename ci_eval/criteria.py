"""Metric configuration from the sidecars that travel with eval sets.

ADK's ``test_config.json`` / ``eval_config.json`` (``criteria``: metric → threshold or criterion
object, camel or snake case) and trpc-agent-go's ``<evalSetId>.metrics.json`` (a list of
``{metricName, threshold, criterion}``) both become one :class:`MetricConfig`. Without either,
ADK's defaults apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ci_eval.dialects._common import validation_failed
from ci_eval.jsonpos import JsonDocument, json_path

ADK_DEFAULT_CRITERIA: dict[str, float] = {
    "tool_trajectory_avg_score": 1.0,
    "response_match_score": 0.8,
}
ADK_CONFIG_NAMES = ("test_config.json", "eval_config.json")
TRPC_METRICS_SUFFIX = ".metrics.json"


@dataclass
class MetricSpec:
    """One metric to compute: its threshold and the criterion options (snake_case keys)."""

    name: str
    threshold: float | None = None
    criterion: dict[str, Any] = field(default_factory=dict)
    evaluator: str | None = None  # trpc's evaluatorName, when it differs from the metric name
    # where the sidecar names it (path, line, col, json path), for "unknown metric" errors
    origin: tuple[str, int | None, int | None, str] | None = field(
        default=None, compare=False, repr=False
    )

    def describe(self) -> str:
        return self.name if self.threshold is None else f"{self.name}={self.threshold:g}"


@dataclass
class MetricConfig:
    metrics: list[MetricSpec]
    source: str  # the sidecar's path, or "default"
    dialect: str  # "adk", "trpc" or "default"
    extras: dict[str, Any] = field(default_factory=dict)  # custom_metrics, user_simulator_config

    def describe(self) -> str:
        return ", ".join(m.describe() for m in self.metrics) or "none"


def default_config(dialect: str = "adk") -> MetricConfig:
    """What applies without a sidecar: ADK's defaults, in the dialect's own terms where its tool
    has other defaults (adk-rs scores its own way; Orchestrate reports its journey metrics)."""
    if dialect == "adk-rs":
        metrics = [
            MetricSpec("tool_trajectory_avg_score", 1.0, {"match_type": "ADK_RS"}),
            MetricSpec("final_response_match_v1", 0.8),
        ]
    elif dialect == "watsonx":
        metrics = [
            MetricSpec("journey_success", 1.0),
            MetricSpec("tool_call_precision"),
            MetricSpec("tool_call_recall"),
            MetricSpec("journey_completion"),
        ]
    else:
        metrics = [MetricSpec(name, threshold) for name, threshold in ADK_DEFAULT_CRITERIA.items()]
    return MetricConfig(metrics=metrics, source="default", dialect="default")


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


class _AdkConfig(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    criteria: dict[str, float | dict[str, Any]] = Field(default_factory=dict)
    custom_metrics: dict[str, Any] | None = Field(default=None, alias="customMetrics")
    user_simulator_config: dict[str, Any] | None = Field(default=None, alias="userSimulatorConfig")


class _TrpcMetric(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str | None = Field(default=None, alias="metricName")
    metric_name: str | None = None  # generation 1
    evaluator_name: str | None = Field(default=None, alias="evaluatorName")
    threshold: float | None = None
    criterion: dict[str, Any] | None = None
    extension: dict[str, Any] | None = None


def is_adk_config(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and bool(
            set(data)
            & {
                "criteria",
                "custom_metrics",
                "customMetrics",
                "user_simulator_config",
                "userSimulatorConfig",
            }
        )
        and not set(data) & {"eval_cases", "evalCases"}
    )


def is_trpc_metrics(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(m, dict) and ("metricName" in m or "metric_name" in m) for m in data)
    )


def _origin(
    doc: JsonDocument, rel_path: str, loc: list[Any]
) -> tuple[str, int | None, int | None, str]:
    where = doc.locate(loc)
    line, col = where if where else (None, None)
    return (rel_path, line, col, json_path(loc))


def load_adk_config(doc: JsonDocument, rel_path: str) -> MetricConfig:
    try:
        raw = _AdkConfig.model_validate(doc.data)
    except ValidationError as exc:
        raise validation_failed(exc, doc) from None
    metrics = []
    for name, value in raw.criteria.items():
        if isinstance(value, dict):
            criterion = snake_keys(value)
            threshold = criterion.pop("threshold", None)
            if threshold is not None and not isinstance(threshold, int | float):
                raise doc.error("threshold must be a number", ["criteria", name, "threshold"])
            metrics.append(
                MetricSpec(
                    name, threshold, criterion, origin=_origin(doc, rel_path, ["criteria", name])
                )
            )
        else:
            metrics.append(
                MetricSpec(name, float(value), origin=_origin(doc, rel_path, ["criteria", name]))
            )
    extras = {
        k: v
        for k, v in (
            ("custom_metrics", raw.custom_metrics),
            ("user_simulator_config", raw.user_simulator_config),
        )
        if v
    }
    return MetricConfig(metrics, rel_path, "adk", snake_keys(extras))


def load_trpc_metrics(doc: JsonDocument, rel_path: str) -> MetricConfig:
    metrics = []
    for i, item in enumerate(doc.data):
        try:
            raw = _TrpcMetric.model_validate(item)
        except ValidationError as exc:
            raise validation_failed(exc, doc, base=item, base_loc=[i]) from None
        name = raw.name or raw.metric_name or ""
        criterion = dict(raw.criterion or {})
        if raw.extension:
            criterion["extension"] = raw.extension
        # trpc criteria stay camelCase: its evaluators are reproduced key for key
        metrics.append(
            MetricSpec(
                name,
                raw.threshold,
                criterion,
                raw.evaluator_name if raw.evaluator_name != name else None,
                origin=_origin(
                    doc,
                    rel_path,
                    [i, "evaluatorName" if raw.evaluator_name else "metricName"],
                ),
            )
        )
    return MetricConfig(metrics, rel_path, "trpc")
