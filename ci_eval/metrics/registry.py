"""The metric registry: name → evaluator (``Metric``: its range, whether it needs an LLM, what it
means), and the names the source tools define that ci-eval does not compute. Metric modules
register into it at import; ``ci_eval.metrics`` imports the built-in ones."""

from __future__ import annotations

from ci_eval.metrics.base import Metric

REGISTRY: dict[str, Metric] = {}

# Metrics the source tools define that ci-eval does not compute (yet): naming one is not a typo,
# so it is no input error — the case is NOT_EVALUATED with this reason, and the gate fails on it
# by default. Any other unknown name is an input error (exit 2).
NOT_COMPUTED: dict[str, str] = {
    **dict.fromkeys(
        (
            "response_evaluation_score",
            "safety_v1",
            "multi_turn_task_success_v1",
            "multi_turn_trajectory_quality_v1",
            "multi_turn_tool_use_quality_v1",
        ),
        "google-adk",
    ),
}


# what an uncomputed metric needs that ci-eval does not have, said wherever the metric is named
VERTEX_AI = "Vertex AI's evaluation service, which ci-eval does not call"
NEEDS: dict[str, str] = dict.fromkeys(
    (
        "response_evaluation_score",
        "safety_v1",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    ),
    VERTEX_AI,
)


def not_computed_reason(name: str) -> str | None:
    """Why a metric the source tools define is NOT_EVALUATED here; None for any other name."""
    tool = NOT_COMPUTED.get(name)
    if tool is None:
        return None
    need = NEEDS.get(name)
    return f"ci-eval does not compute {name!r} (a {tool} metric)" + (
        f": it needs {need}" if need else ""
    )


def register(metric: Metric, dialect: str | None = None) -> Metric:
    """Register under its name, or as ``dialect/name`` where a dialect's metric of the same name
    means something else (trpc-agent-go's tool_trajectory_avg_score)."""
    REGISTRY[f"{dialect}/{metric.name}" if dialect else metric.name] = metric
    return metric


def reset() -> None:
    """Forget the custom metrics (``origin="custom"``: ci-eval.toml's and the entry points'):
    they belong to the run that registered them. Metrics registered in code stay."""
    for key in [k for k, m in REGISTRY.items() if m.origin == "custom"]:
        del REGISTRY[key]


def display_name(key: str) -> str:
    """A registry key as `ci-eval metrics` shows it: ``name`` or ``name (dialect criteria)``."""
    dialect, _, name = key.rpartition("/")
    return f"{name} ({dialect} criteria)" if dialect else name


def lookup(name: str, dialect: str | None = None) -> Metric | None:
    """The dialect's own metric of that name, else the shared one, else the one dialect that
    has it (``final_response_avg_score`` is trpc-agent-go's alone)."""
    if dialect and f"{dialect}/{name}" in REGISTRY:
        return REGISTRY[f"{dialect}/{name}"]
    if name in REGISTRY:
        return REGISTRY[name]
    qualified = [m for key, m in REGISTRY.items() if key.endswith(f"/{name}")]
    return qualified[0] if len(qualified) == 1 else None


def did_you_mean(name: str) -> str:
    """`` (did you mean X?)`` for a metric name no registry knows, "" when none is close."""
    from ci_eval.text.suggest import did_you_mean as close

    return close(name, {key.rpartition("/")[2] for key in REGISTRY} | set(NOT_COMPUTED))


# ADK's efficiency metrics, reported for every set as google-adk 2.13 appends them, in its order
INFORMATIONAL_DEFAULTS = (
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
)
