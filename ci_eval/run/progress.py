"""The progress line a long run writes on stderr."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from ci_eval.model.status import Status


class Progress:
    """A progress line on stderr for long runs: rewritten in place on a terminal, a line every
    few seconds in CI logs. It counts cases, as the final line does — done, and of those how
    many failed and how many errored once scored — and runs beside them."""

    def __init__(
        self,
        cases: int,
        runs: int | None = None,
        stream: TextIO | None = None,
        quiet_for: float = 2.0,
        what: str = "cases",
        ceiling: Any = None,
    ) -> None:
        # sys.stderr now, not at import: a run in-process writes where stderr points then
        stream = sys.stderr if stream is None else stream
        self.cases, self.runs = cases, cases if runs is None else runs
        self.stream, self.quiet_for, self.what = stream, quiet_for, what
        self.ceiling = ceiling  # [budget]'s binding limits: said once reached
        self.cases_done = self.runs_done = self.failed = self.errors = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.tty = stream.isatty()
        self.shown = False
        self.lock = threading.Lock()

    def advance(self) -> None:
        """A run ended."""
        with self.lock:
            self.runs_done += 1
            self._show()

    def case(self, status: Status | None) -> None:
        """A case's runs ended (and, given its status, it was scored)."""
        with self.lock:
            self.cases_done += 1
            self.failed += status == Status.FAILED
            self.errors += status == Status.ERROR
            self._show()

    def _show(self) -> None:
        now = time.monotonic()
        elapsed = now - self.start
        gap = 0.2 if self.tty else 5.0
        done = self.cases_done >= self.cases and self.runs_done >= self.runs
        if elapsed < self.quiet_for or (now - self.last < gap and not done):
            return
        self.last = now
        line = (
            f"ci-eval: {self.cases_done}/{self.cases} {self.what} done, {self.failed} failed, "
            f"{self.errors} error{'' if self.errors == 1 else 's'} "
            f"({self.runs_done}/{self.runs} runs), {elapsed:.1f} s"
        )
        reached = getattr(self.ceiling, "reached", None)
        if reached:
            line += f" — budget reached: {reached}, no more calls"
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()
