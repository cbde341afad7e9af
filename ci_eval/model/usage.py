"""What an agent's own model calls spent in one turn, as the agent reported it: a record of the
results model (each actual invocation has one, or None when the agent said nothing), read by
ADK's efficiency metrics (``token_usage_v1``, ``inference_call_count_v1``) and, later, by cost
reports. Never a judge's or a simulated user's calls: those are counted where they happen.

Every count is None when it was not reported, which is not zero: ADK reports such a value as
"n/a", and so does every reader of this record. Pure data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.model.values import RECORD, Count


@dataclass(frozen=True, slots=True)
class Usage:
    """One turn's usage. The counts mean what google-adk 2.13's token breakdown means by them
    (``google.adk.telemetry._token_usage``): ``input_tokens`` are the prompt's (tool-use prompt
    tokens included) and contain ``cached_tokens``, those served from a cache;
    ``output_tokens`` are the candidates' and the reasoning's; ``model_calls`` is how many
    calls to a model the turn made."""

    __pydantic_config__ = RECORD

    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cached_tokens: Count | None = None
    model_calls: Count | None = None

    @property
    def total_tokens(self) -> int | None:
        """Input plus output, as ADK derives it (never a total the model reported): None when
        neither was reported."""
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def known(self) -> bool:
        """Whether any count was reported."""
        return any(
            v is not None
            for v in (self.input_tokens, self.output_tokens, self.cached_tokens, self.model_calls)
        )
