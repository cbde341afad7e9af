"""How a metric says it gave no score: not applicable to the case, or failed computing it. A
module of their own so that the judge (which raises them) and :mod:`.base` (which names the
judge) do not import each other."""


class NotApplicable(Exception):
    """The metric cannot apply to this case (no expected response, no judge, …): NOT_EVALUATED."""


class MetricFailure(Exception):
    """Computing the metric failed (the judge errored, a custom metric raised): ERROR."""
