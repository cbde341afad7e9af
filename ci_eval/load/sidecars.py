"""Metric configuration from the sidecars that travel with eval sets.

ADK's ``test_config.json`` / ``eval_config.json`` (``criteria``: metric → threshold or criterion
object, camel or snake case) and trpc-agent-go's ``<evalSetId>.metrics.json`` (a list of
``{metricName, threshold, criterion}``) both become one :class:`MetricConfig`. Without either,
ADK's defaults apply.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.io.jsonpos import JsonDocument, json_path
from ci_eval.io.validation import validation_failed
from ci_eval.model.metric_spec import (
    MetricConfig,
    MetricSpec,
    snake_keys,
)
from ci_eval.text.plural import listed

ADK_CONFIG_NAMES = ("test_config.json", "eval_config.json")
TRPC_METRICS_SUFFIX = ".metrics.json"
# trpc-agent-go's evaluation guide also names the file ``<evalSetId>.metric.json``
TRPC_METRICS_SUFFIXES = (TRPC_METRICS_SUFFIX, ".metric.json")


class _AdkCriterion(BaseModel):
    """ADK's ``BaseCriterion``: a threshold is required, other options travel as extras (each
    metric reads its own when it runs)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    threshold: float
    include_intermediate_responses_in_final: bool = False


class _CodeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class _CustomMetric(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    code_config: _CodeConfig
    metric_info: dict[str, Any] | None = None
    description: str = ""


class _LiveModelConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    timeout_seconds: int = 0


class _AdkConfig(BaseModel):
    """google-adk 2.13's ``EvalConfig`` as it validates a file: camelCase or snake_case keys,
    unknown top-level keys ignored, each criterion a number or an object with a threshold."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
    criteria: dict[str, float | _AdkCriterion] = Field(default_factory=dict)
    custom_metrics: dict[str, _CustomMetric] | None = None
    user_simulator_config: dict[str, Any] | None = None
    live_model_config: _LiveModelConfig | None = None


class _TrpcMetric(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str | None = Field(default=None, alias="metricName")
    metric_name: str | None = None  # generation 1
    evaluator_name: str | None = Field(default=None, alias="evaluatorName")
    threshold: float | None = None
    criterion: dict[str, Any] | None = None
    extension: dict[str, Any] | None = None


# EvalConfig's fields in both spellings: a JSON object with none of them is another tool's file
ADK_CONFIG_KEYS = frozenset(
    {
        "criteria",
        "custom_metrics",
        "customMetrics",
        "user_simulator_config",
        "userSimulatorConfig",
        "live_model_config",
        "liveModelConfig",
    }
)


def is_adk_config(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and bool(set(data) & ADK_CONFIG_KEYS)
        and not set(data) & {"eval_cases", "evalCases"}
    )


def foreign_config_shape(data: Any) -> str | None:
    """What a file named like an ADK eval config looks like when it is another tool's, or None
    when it is ADK's (valid or not). ADK would read such an object as a config without
    criteria; a list (trpc's metrics) it rejects."""
    if isinstance(data, dict) and not set(data) & ADK_CONFIG_KEYS:
        if "metrics" in data:
            return 'trpc-agent-python\'s {"metrics": [...]}'
        keys = listed(sorted(map(str, data)), 6) or "none"
        return f"an object without criteria (keys: {keys})"
    if is_trpc_metrics(data):
        return "a trpc-agent-go metrics list"
    return None


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
    """Validate as google-adk's ``EvalConfig`` does; errors name the JSON path."""
    if not isinstance(doc.data, dict):
        raise doc.error(
            f"not an ADK eval config (a JSON {type(doc.data).__name__}; ADK expects an object "
            'like {"criteria": {"tool_trajectory_avg_score": 1.0}})'
        )
    try:
        raw = _AdkConfig.model_validate(doc.data)
    except ValidationError as exc:
        raise _config_errors(exc, doc) from None
    metrics = []
    criteria_raw = doc.data.get("criteria") if isinstance(doc.data.get("criteria"), dict) else {}
    custom = raw.custom_metrics or {}
    for name, value in raw.criteria.items():
        # a custom_metrics function (metrics.adk_code) gets its criterion as google-adk gives
        # it, keys as written; ci-eval's own metrics read theirs in snake_case
        evaluator = custom[name].code_config.name if name in custom else None
        if isinstance(value, _AdkCriterion):
            criterion = dict(criteria_raw.get(name, {}))
            criterion = criterion if evaluator else snake_keys(criterion)
            criterion.pop("threshold", None)
            metrics.append(
                MetricSpec(
                    name,
                    value.threshold,
                    criterion,
                    evaluator,
                    origin=_origin(doc, rel_path, ["criteria", name]),
                )
            )
        else:
            metrics.append(
                MetricSpec(
                    name,
                    float(value),
                    evaluator=evaluator,
                    origin=_origin(doc, rel_path, ["criteria", name]),
                )
            )
    extras: dict[str, Any] = {}
    if raw.user_simulator_config:
        extras["user_simulator_config"] = snake_keys(raw.user_simulator_config)
    if custom:
        # each entry as written (google-adk validates it again) and where its function is named
        key = "custom_metrics" if "custom_metrics" in doc.data else "customMetrics"
        entries = doc.data[key]
        extras["custom_metrics"] = {name: entries[name] for name in custom}
        extras["custom_metrics_at"] = {
            name: _origin(
                doc,
                rel_path,
                [
                    key,
                    name,
                    "code_config" if "code_config" in entries[name] else "codeConfig",
                    "name",
                ],
            )
            for name in custom
        }
    return MetricConfig(metrics, rel_path, "adk", extras)


def _config_errors(exc: ValidationError, doc: JsonDocument) -> ValidationFailed:
    """One problem per criterion (pydantic reports each branch of the number-or-object union),
    one per other error; each names the config file and the JSON path."""
    problems: list[InputError] = []
    seen: set[tuple[Any, ...]] = set()
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        if len(loc) >= 2 and loc[0] == "criteria":
            key = ("criteria", loc[1])
            if key in seen:
                continue
            seen.add(key)
            value = doc.data["criteria"][loc[1]]
            what = json.dumps(value)[:80]
            problems.append(
                doc.error(
                    f"criterion {what} is neither a threshold number nor an object with a "
                    "numeric 'threshold' (google-adk's EvalConfig rejects it)",
                    list(key),
                )
            )
            continue
        loc = [k for k in loc if not (isinstance(k, str) and k[:1].isupper())]  # union tags
        message = (
            f"required field '{loc[-1]}' is missing"
            if err["type"] == "missing" and loc
            else str(err["msg"])
        )
        problems.append(doc.error(message + " (google-adk's EvalConfig rejects it)", loc))
    return ValidationFailed(problems or [doc.error(str(exc))])


def load_trpc_metrics(doc: JsonDocument, rel_path: str) -> MetricConfig:
    # a compareName is trpc-agent-go's error before any case is scored (its registry)
    from ci_eval.model.trpc_registry import unresolvable_names, unresolvable_reason

    metrics = []
    unresolvable = []
    for i, item in enumerate(doc.data):
        try:
            raw = _TrpcMetric.model_validate(item)
        except ValidationError as exc:
            raise validation_failed(exc, doc, base=item, base_loc=[i]) from None
        name = raw.name or raw.metric_name or ""
        criterion = dict(raw.criterion or {})
        unresolvable += [
            doc.error(unresolvable_reason(what), [i, "criterion", *loc])
            for loc, what in unresolvable_names(criterion)
        ]
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
    if unresolvable:
        raise ValidationFailed(unresolvable)
    return MetricConfig(metrics, rel_path, "trpc")
