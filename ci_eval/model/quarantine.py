"""A quarantined case as the gate applied it (``quarantine.toml`` as the base branch has it,
resolved against the day of the gate): recorded in the results file's ``settings``, so every
report of the file says the quarantine the gate decided by. Pure data: no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.model.values import RECORD, Flag, Text


@dataclass(frozen=True, slots=True)
class Quarantine:
    """One ``[[quarantine]]`` entry: the case (``SET_ID:CASE_ID``), why, whose, until when
    (an ISO date, the last day it holds) and whether that day had passed when the gate ran."""

    __pydantic_config__ = RECORD

    case: Text
    reason: Text
    owner: Text
    until: Text  # "2027-01-31": held through that day
    expired: Flag = False

    def terms(self) -> str:
        """``until 2027-01-31, team-agents`` (``expired on …`` once past)."""
        when = f"expired on {self.until}" if self.expired else f"until {self.until}"
        return f"{when}, {self.owner}"
