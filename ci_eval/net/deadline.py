"""Wall-clock deadlines for agent turns and prompt cancellation of the whole run.

A :class:`Deadline` is a turn's budget in seconds of wall clock, retries and back-off included:
an agent that drips a byte a second, or a Retry-After that would sleep past it, fails at the
deadline, not at some per-read timeout. A blocking call inside :meth:`Deadline.guard` is
unblocked from outside when the budget runs out: a watchdog thread runs the guard's abort
callback (shut the socket down, kill the agent's process group, cancel the task).

A :class:`Cancellation` is the run's stop state. The first SIGINT/SIGTERM *requests* it: no new
turn starts and running turns get a grace period; when that is over, or on a second signal, it is
*abandoned*: every guarded turn is aborted at once and ends as ``cancelled``, so the reports can
be written within seconds whatever ``--timeout`` is.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from ci_eval.errors import InputError

GRACE_S = 3.0  # what running turns get after the first signal (GitHub's SIGKILL is ~10 s away)
GRACE_ENV = "CI_EVAL_CANCEL_GRACE"


def grace_from(env: Mapping[str, str]) -> float:
    """The grace period: ``CI_EVAL_CANCEL_GRACE`` seconds, else 3."""
    value = env.get(GRACE_ENV, "").strip()
    if not value:
        return GRACE_S
    try:
        grace = float(value)
    except ValueError:
        grace = -1.0
    if not math.isfinite(grace) or grace < 0:
        raise InputError(f"{GRACE_ENV}={value!r}: expected a number of seconds, 0 or more")
    return grace


class Cancellation(threading.Event):
    """``set()`` (the first signal): stop starting turns; after ``grace`` seconds, or at
    :meth:`abandon` (the second signal), running turns are aborted. Being a ``threading.Event``,
    code that only asks ``is_set()`` keeps working."""

    def __init__(self, grace: float = GRACE_S) -> None:
        super().__init__()
        self.grace = grace
        self.abandoned = threading.Event()
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def set(self) -> None:
        with self._lock:
            if super().is_set():
                return
            super().set()
            self._timer = threading.Timer(self.grace, self.abandon)
            self._timer.daemon = True
            self._timer.start()

    def abandon(self) -> None:
        if self._timer is None:
            with self._lock:
                super().set()
        if self.abandoned.is_set():
            return
        self.abandoned.set()
        _WATCHDOG.abandon(self)


_NEVER = Cancellation()  # for deadlines that no signal shortens
_current: Cancellation = _NEVER


def current() -> Cancellation:
    """The process's cancellation (the one the signal handlers drive), else one never set."""
    return _current


@contextlib.contextmanager
def installed(cancel: Cancellation) -> Iterator[Cancellation]:
    """Make ``cancel`` the process's cancellation for the block: every deadline made meanwhile
    (agent turns, judge calls) ends when it is abandoned."""
    global _current
    previous, _current = _current, cancel
    try:
        yield cancel
    finally:
        _current = previous


@dataclass(eq=False)
class Deadline:
    """``seconds`` of wall clock from now, cut short when ``cancel`` is abandoned (by default
    the process's cancellation; pass ``cancellable=False`` for work that must finish, such as
    the last report)."""

    seconds: float
    cancel: Cancellation = field(default_factory=current)
    at: float = field(init=False)
    fired: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.at = time.monotonic() + self.seconds

    @classmethod
    def uncancellable(cls, seconds: float) -> Deadline:
        return cls(seconds, _NEVER)

    @property
    def cancelled(self) -> bool:
        return self.cancel.abandoned.is_set()

    def remaining(self) -> float:
        if self.cancelled:
            return 0.0
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return self.fired or self.remaining() <= 0

    def message(self) -> str:
        """Why the turn ended: ``cancelled`` or the timeout, as reports show it."""
        return "cancelled" if self.cancelled else f"no reply within {self.seconds:g} s"

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the deadline comes first; True when the full sleep was
        possible (so the caller may go on), False at the deadline or on cancellation."""
        if seconds >= self.remaining():
            self.cancel.abandoned.wait(self.remaining())
            return False
        return not self.cancel.abandoned.wait(seconds)

    @contextlib.contextmanager
    def guard(self, abort: Callable[[], None]) -> Iterator[Deadline]:
        """Run ``abort`` from the watchdog thread if the deadline passes (or the run is
        abandoned) while the block runs; afterwards ``fired`` says whether it did."""
        token = _WATCHDOG.add(self, abort)
        try:
            yield self
        finally:
            _WATCHDOG.remove(token)


class _Watchdog:
    """One daemon thread for every guarded block: a heap of deadlines, woken early when one is
    added or a cancellation is abandoned."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._active: dict[int, tuple[Deadline, Callable[[], None]]] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, deadline: Deadline, abort: Callable[[], None]) -> int:
        with self._cond:
            token = next(self._ids)
            self._active[token] = (deadline, abort)
            # the thread sleeps until the earliest deadline in the heap: it needs waking only
            # when this one comes sooner (not on each of a run's thousands of turns)
            sooner = not self._heap or deadline.at < self._heap[0][0]
            heapq.heappush(self._heap, (deadline.at, token))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="ci-eval-watchdog", daemon=True
                )
                self._thread.start()
            if sooner:
                self._cond.notify()
        if deadline.cancelled:
            self._fire([token])
        return token

    def remove(self, token: int) -> None:
        with self._cond:
            self._active.pop(token, None)

    def abandon(self, cancel: Cancellation) -> None:
        with self._cond:
            tokens = [t for t, (d, _) in self._active.items() if d.cancel is cancel]
        self._fire(tokens)

    def _fire(self, tokens: list[int]) -> None:
        for token in tokens:
            with self._cond:
                entry = self._active.pop(token, None)
            if entry is None:
                continue
            deadline, abort = entry
            deadline.fired = True
            with contextlib.suppress(Exception):  # aborting is best effort
                abort()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][1] not in self._active:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                at, token = self._heap[0]
                delay = at - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
            self._fire([token])


_WATCHDOG = _Watchdog()
