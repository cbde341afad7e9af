"""What a run records of its settings and what its stages found, as one typed record: the
results file's ``settings``, read by the later stages (the gate, the reports) instead of keys of
a dict. Pure data: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from ci_eval.model.quarantine import Quarantine
from ci_eval.model.values import RECORD, Count, Data, Items, Seconds, Text


@dataclass(slots=True)
class BudgetReached:
    """A binding ``[budget]`` limit stopped calls: which, what the job spent, what it kept
    from running (:class:`ci_eval.run.ceiling.Ceiling`)."""

    __pydantic_config__ = RECORD

    limit: Text  # "[budget] max_agent_calls = 3"
    spent: Text  # "3 agent calls, 0 judge calls, 360 tokens"
    stopped: Text  # "2 runs not started"


@dataclass(slots=True)
class LlmUse:
    """One LLM client's use in a run: the judge's or the user simulator's."""

    __pydantic_config__ = RECORD

    calls: Count = 0
    cache_hits: Count = 0
    input_tokens: Count = 0
    output_tokens: Count = 0


def _omitted_none() -> Any:
    return Field(exclude_if=lambda value: value is None)


def _omitted_empty() -> Any:
    return Field(exclude_if=lambda value: not value)


@dataclass(slots=True)
class RunFacts:
    """What a run records of its settings, and what its stages found that a later stage or a
    report reads (``RunResults.settings``, the file's ``settings``): the one record they pass,
    typed. A fact a stage adds is written only once it is known."""

    __pydantic_config__ = RECORD

    agent: Text | None = None
    concurrency: Count | None = None
    timeout: Seconds | None = None
    retries: Count | None = None
    num_runs: Count | None = None  # None: not recorded (every run counts as a first run)
    min_pass: Count | None = None
    shard: Text | None = None
    simulator: Data | None = None  # its model and max_turns, when conversations were simulated
    adk_prompts: Text | None = None  # whose code and prompts scored ADK's judged metrics
    cases: Items[Text] | None = None  # the --case selection
    confirm_runs: Count = 0  # the confirmation reruns' target (0: none asked)
    confirmation_reruns: Count = 0  # the reruns made
    bar_changes: Items[Text] = field(default_factory=list)  # the PR's, not applied
    max_removed: Count | None = None
    prices: Data = field(default_factory=dict)  # [prices]: the usage report's
    budget: Data = field(default_factory=dict)  # [budget]: the gate's limits
    models: Data = field(default_factory=dict)  # the judge's and the simulator's
    # --- what the stages found ---
    merged_from: Annotated[Count | None, _omitted_none()] = None  # shards merged
    outage: Annotated[Text | None, _omitted_none()] = None  # why no case was rerun
    stopped: Annotated[Text | None, _omitted_none()] = None  # why no more cases started
    selection: Annotated[Text | None, _omitted_none()] = None  # --select changed: what ran
    no_baseline: Annotated[Text | None, _omitted_none()] = None  # where none was found
    # --control auto ran the merge base's agent and it showed no drop: the drop is the PR's
    day_ruled_out: Annotated[Text | None, _omitted_none()] = None
    # ... and it showed the drop too: the PR was judged against it (said in the verdict)
    day_shared: Annotated[Text | None, _omitted_none()] = None
    # failing cases a replay had no recorded run left to rerun: judged on the runs that exist
    no_run_left: Annotated[Items[Text], _omitted_empty()] = field(default_factory=list)
    # the judge's and the simulator's calls and tokens, by role (``judge``, ``simulator``)
    llm_usage: Annotated[dict[str, LlmUse] | None, _omitted_none()] = None
    llm_cache: Annotated[Data | None, _omitted_none()] = None  # the cache read, when one was
    budget_reached: Annotated[BudgetReached | None, _omitted_none()] = None
    usage_totals: Annotated[Data | None, _omitted_none()] = None  # the usage report's sums
    # --otlp: the turns by where their tool calls came from (spans, reply, none)
    trajectories: Annotated[dict[str, Count] | None, _omitted_none()] = None
    # quarantine.toml as the gate applied it (the base branch's, in a pull request): an older
    # file has none
    quarantine: Annotated[Items[Quarantine], _omitted_empty()] = field(default_factory=list)

    @property
    def selected(self) -> bool:
        """A case selection ran (--case or --shard): the cases left out are not removed."""
        return bool(self.cases or self.shard)
