"""The admission gate: lets model runs in while the sum of their estimated peak bytes
(model/budget.py) fits a budget, first come first served. Plain threading (no streamlit), one
per server process, shared by every session.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from .settings import Settings

MB = 2**20

BUSY = "The server is busy, try again in a moment."
# The two ways a wait ends in Busy, told apart so the page and the logs say which happened.
QUEUE_FULL = ("The server is busy: every place in the queue for the model is taken. Try again "
              "in a moment.")
QUEUE_TIMEOUT = ("The server is still busy after {seconds} seconds of waiting for the model. "
                 "Try again in a moment.")


class Busy(RuntimeError):
    """The queue is full (QueueFull), or a run waited too long (QueueTimeout); the text should
    be kept for a retry. Catch Busy for both."""

    def __init__(self, message: str = BUSY) -> None:
        super().__init__(message)


class QueueFull(Busy):
    """Refused at once, without waiting: `queue` pages already wait (ATTN_QUEUE)."""

    def __init__(self, queue: int) -> None:
        super().__init__(QUEUE_FULL)
        self.queue = queue


class QueueTimeout(Busy):
    """Gave up after waiting `seconds` in the queue (ATTN_QUEUE_TIMEOUT_S)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = f"{seconds:g}"
        super().__init__(QUEUE_TIMEOUT.format(seconds=self.seconds))


class TooLarge(ValueError):
    """One run needs more than the whole budget; waiting never helps (est: for a page's text)."""

    # est is a model.budget.Estimate, typed loosely: the gate counts bytes and never imports
    # the estimator (budget imports the gate, and imports run one way)
    def __init__(self, message: str, est: object | None = None, budget: int = 0) -> None:
        super().__init__(message)
        self.est, self.budget = est, budget


@dataclass
class _Ticket:
    need: int
    seq: int
    owner: object | None
    admitted: bool = False


class Gate:
    """Admits runs, first come first served, while the admitted estimates sum to at most
    `budget` bytes and at most `runs` run at once; at most `queue` wait (one more is refused at
    once with QueueFull); a wait longer than `timeout_s` gives up with QueueTimeout.
    Thread-safe; one per server process."""

    def __init__(self, budget: int, queue: int = 16, timeout_s: float = 90.0, runs: int = 1,
                 poll_s: float = 0.2) -> None:
        if budget <= 0 or queue < 0 or runs < 1:
            raise ValueError("budget and runs must be positive, queue non-negative")
        self.budget, self.queue_limit, self.timeout_s = budget, queue, timeout_s
        self.runs, self.poll_s = runs, poll_s
        self._cond = threading.Condition()
        self._waiting: list[_Ticket] = []  # ordered by seq
        self._running: list[_Ticket] = []
        self._seq = itertools.count()
        self._recent: dict[object, tuple[int, float]] = {}  # owner -> (seq, when it left)
        self.peak_in_use = 0  # largest sum of admitted estimates so far (for tests, benches)
        self._held: dict[int, int] = {}  # token -> bytes a finished run left held (hold())
        self._tokens = itertools.count()

    @property
    def in_use(self) -> int:
        return sum(t.need for t in self._running)

    @property
    def held(self) -> int:
        """Bytes that finished runs keep (a session's LongTrace), counted against the budget."""
        return sum(self._held.values())

    def hold(self, nbytes: int) -> int:
        """Count nbytes kept after a run (until release(token)) against the budget."""
        with self._cond:
            token = next(self._tokens)
            self._held[token] = int(nbytes)
            return token

    def release(self, token: int) -> None:
        """Stop counting a hold (safe to call twice); a waiting run may now fit."""
        with self._cond:
            if self._held.pop(token, None) is not None:
                self._admit_head()

    def snapshot(self) -> dict[str, int]:
        """Running and waiting runs, bytes in use and bytes held, read under the lock."""
        with self._cond:
            return {"running": len(self._running), "waiting": len(self._waiting),
                    "in_use": self.in_use, "held": self.held}

    def _ahead(self, ticket: _Ticket) -> int:
        """Runs before this one: those running and those waiting in front of it."""
        return len(self._running) + sum(t.seq < ticket.seq for t in self._waiting)

    def _fits(self, ticket: _Ticket) -> bool:
        head = self._waiting and self._waiting[0] is ticket
        return bool(head and len(self._running) < self.runs
                    and self.in_use + self.held + ticket.need <= self.budget)

    def _enter(self, need: int, owner: object | None) -> _Ticket:
        with self._cond:
            if need > self.budget:
                raise TooLarge(f"needs {need} bytes, budget {self.budget}")
            if len(self._waiting) >= self.queue_limit and (
                    self._waiting or len(self._running) >= self.runs
                    or self.in_use + self.held + need > self.budget):
                raise QueueFull(len(self._waiting))
            now = time.monotonic()
            # a session that just left the queue to rerun with new input keeps its place
            old = self._recent.pop(owner, None) if owner is not None else None
            seq = old[0] if old and now - old[1] < 30 else next(self._seq)
            ticket = _Ticket(need, seq, owner)
            self._waiting.append(ticket)
            self._waiting.sort(key=lambda t: t.seq)
            self._admit_head()
            return ticket

    def _admit_head(self) -> None:
        """Move waiting tickets to running from the front while they fit (lock held)."""
        while self._waiting and self._fits(self._waiting[0]):
            ticket = self._waiting.pop(0)
            ticket.admitted = True
            self._running.append(ticket)
            self.peak_in_use = max(self.peak_in_use, self.in_use)
        self._cond.notify_all()

    def _leave(self, ticket: _Ticket) -> None:
        with self._cond:
            if ticket in self._running:
                self._running.remove(ticket)
            elif ticket in self._waiting:
                self._waiting.remove(ticket)
                if ticket.owner is not None:
                    self._recent[ticket.owner] = (ticket.seq, time.monotonic())
                    if len(self._recent) > 1024:  # forget the oldest
                        self._recent.pop(next(iter(self._recent)))
            self._admit_head()

    @contextmanager
    def admit(self, need: int, owner: object | None = None,
              on_wait: Callable[[int], bool | None] | None = None) -> Iterator[None]:
        """Hold `need` bytes of the budget for the block. While waiting, on_wait(k ahead) is
        called every poll_s: it may raise (the session went away, or has newer input) and the
        ticket leaves the queue; returning True gives up the wait quietly (e.g. another session
        cached this input meanwhile) and the block is skipped by raising Withdrawn."""
        ticket = self._enter(need, owner)
        try:
            deadline = time.monotonic() + self.timeout_s
            while True:
                with self._cond:
                    if ticket.admitted:
                        break
                    ahead = self._ahead(ticket)
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise QueueTimeout(self.timeout_s)
                if on_wait is not None and on_wait(ahead):
                    raise Withdrawn()
                with self._cond:
                    if not ticket.admitted:
                        self._cond.wait(min(self.poll_s, max(left, 0.0)))
            yield
        finally:
            self._leave(ticket)


class Withdrawn(Exception):
    """A waiting run was no longer needed (on_wait said so)."""


def gate_from_env(env: Mapping[str, str] | None = None) -> Gate:
    """The server's gate from ATTN_INFLIGHT_MB, ATTN_QUEUE, ATTN_QUEUE_TIMEOUT_S and ATTN_RUNS
    (model/settings.py: defaults, units and validation; docs/limits.md "Admission control")."""
    s = Settings.from_env(env)
    return Gate(budget=int(s.inflight_mb * MB), queue=s.queue, timeout_s=s.queue_timeout_s,
                runs=s.runs)


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def threads_per_run(runs: int) -> int:
    """torch intra-op threads per run so that `runs` runs at once fill the cores, no more."""
    return max(1, cores() // max(1, runs))
