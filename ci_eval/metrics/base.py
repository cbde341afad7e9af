"""The shapes every metric shares: its registration and what it is given (its results are
in the results model, ``ci_eval.model.results``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# re-exported: every metric raises them; the judge too, which this module names
from ci_eval.metrics.failures import MetricFailure as MetricFailure
from ci_eval.metrics.failures import NotApplicable as NotApplicable
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.results import CaseMetric as CaseMetric  # re-exported: the results model
from ci_eval.model.results import MetricResult as MetricResult
from ci_eval.model.usage import Usage

if TYPE_CHECKING:
    from ci_eval.metrics.judge import Judge


@dataclass
class ScoreContext:
    """What a metric may look at besides the invocations."""

    extensions: dict[str, Any] = field(default_factory=dict)  # the case's dialect data
    rubrics: list[dict[str, Any]] | None = None  # the case's rubrics (ADK shape)
    set_dialect: str = "adk"
    judge: Judge | None = None  # when one is configured
    scenario: dict[str, Any] | None = None  # a simulated case's brief (starting prompt, plan)
    # the run's usage per actual invocation, as the agent reported it (None: it did not say)
    usage: list[Usage | None] = field(default_factory=list)


# expected invocations, actual invocations, the spec (threshold + criterion), context →
# (score, per-invocation scores, details)
Scorer = Callable[
    [list[Invocation], list[Invocation], MetricSpec, ScoreContext],
    tuple[float, list[float | None], dict[str, Any]],
]


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    scorer: Scorer = field(repr=False)
    value_range: str = "[0, 1]"
    needs_llm: bool = False
    informational: bool = False  # reported, never failing (ADK's efficiency metrics)
    default_threshold: float | None = None
    origin: str = "ADK"  # whose numbers it reproduces
    # compares with the expected conversation: does not apply where the user was simulated
    needs_expected: bool = True
    # False where the metric's score is not the mean of its per-invocation scores (ADK's rubric
    # metrics average every rubric verdict; its user-simulator metric counts a turn without a
    # verdict as failed): a case then takes the mean of its runs' scores, so one run's case
    # score is the metric's own, as `adk eval` reports it
    score_is_invocation_mean: bool = True
    # (invocation score, threshold) -> does that invocation pass. Set where the source tool
    # fails a metric when any one invocation fails rather than when the mean falls short
    # (adk-rs ANDs its per-invocation statuses); the score stays the mean either way
    invocation_passes: Callable[[float, float], bool] | None = field(default=None, repr=False)
