"""Stop a run whose first cases all fail the same way: an http or command agent cannot be
probed before the first case, so a wrong URL, command or token shows as the first cases'
identical errors — said once, not as N identical errors after the whole run's timeouts."""

from __future__ import annotations

import re
import threading

FIRST = 3  # cases: all of the first this many failing the same way stops the run
_TURN = re.compile(r"^turn \d+: ")


def _way(error: str | None) -> str | None:
    """How a run failed, without which turn it was (the same failure on any turn)."""
    return None if error is None else _TURN.sub("", error)


class SameFailures:
    """Watches each case's first run as it ends; once the first ``first`` all failed with the
    same error, ``reason`` says so (the runner then starts no new case). A run that did not
    fail that way among them settles it: the run goes on."""

    def __init__(self, first: int = FIRST, applies: bool = True) -> None:
        self.first, self.applies = first, applies
        self.ways: list[str | None] = []
        self.reason: str | None = None  # said once, in the verdict
        self._lock = threading.Lock()

    def saw(self, error: str | None) -> None:
        if not self.applies:
            return
        with self._lock:
            if len(self.ways) >= self.first:
                return
            self.ways.append(_way(error))
            same = len(self.ways) == self.first and len(set(self.ways)) == 1
            if same and self.ways[0] is not None:
                self.reason = (
                    f"{self.first} of {self.first} first cases failed the same way: "
                    f"{self.ways[0]}; stopping"
                )

    @property
    def not_run(self) -> str:
        """What each case not started says (the failure itself is said once)."""
        return f"stopped after the first {self.first} cases failed the same way"
