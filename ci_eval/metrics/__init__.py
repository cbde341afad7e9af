"""The metric registry: name → evaluator, with its range, whether it needs an LLM and what it
means. A new metric is one function plus one ``register`` call; teams add their own through
``ci-eval.toml`` (``[custom_metrics] name = "module:function"``) or the ``ci_eval.metrics`` entry
point group."""

from __future__ import annotations

from ci_eval.metrics import (  # noqa: F401  (each registers its metrics; adk's first)
    adk,
    adk_rs,
    adk_usage,
    judge_metrics,
    pass_k,
    simulation,
    trpc,
    trpc_judges,
    watsonx,
    watsonx_messages,
    watsonx_quick,
    watsonx_routing,
)
from ci_eval.metrics.registry import (
    INFORMATIONAL_DEFAULTS,
    NEEDS,
    NOT_COMPUTED,
    REGISTRY,
    lookup,
    not_computed_reason,
    register,
    reset,
)

__all__ = [
    "INFORMATIONAL_DEFAULTS",
    "NEEDS",
    "NOT_COMPUTED",
    "REGISTRY",
    "lookup",
    "not_computed_reason",
    "register",
    "reset",
]
