"""What bench_capacity's two loads share: a request thread per session (Worker), the open-loop
step that offers a fixed rate to them (run_step), its latencies (Step) and the rate where p95
crosses the target (crossing). The in-process load (bench_capacity) and the load through nginx
(capacity_nginx) differ only in how one request is made.
"""

from __future__ import annotations

import os
import queue
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
VIEWS = ("tokens", "masks", "attention", "embeddings", "translation", "heads", "steps")
TARGET_S = 1.0
THINK_S = 15.0  # a student exploring asks for a new page about every 15 s (README)


@dataclass
class Step:
    rate: float  # requests per second offered, all sessions together
    latencies: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0  # this process's CPU time (all threads) during the step
    load: float = 0.0  # the machine's 1-minute load average at the end of the step

    def p(self, q: float) -> float:
        return float(np.percentile(self.latencies, q)) if self.latencies else float("inf")


def student_sentences(n: int, seed: int) -> list[str]:
    from training import corpus

    pairs = corpus.generate(4 * n + 50, seed=seed)
    out = sorted({p.en for p in pairs} | {p.ko for p in pairs})
    random.Random(seed).shuffle(out)
    return out


class Worker:
    """A session's request thread: runs its jobs in order, timing each and keeping what went
    wrong (a benchmark reports problems, it does not stop on them). Subclasses say how one
    request is made (`do`, returning the page's problems) and start the thread when ready."""

    def __init__(self) -> None:
        self.jobs: queue.Queue = queue.Queue()
        self.done: list[tuple[float, float]] = []  # (scheduled, finished)
        self.problems: list[str] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def do(self, action) -> list[str]:
        raise NotImplementedError

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            scheduled, action = job
            try:
                self.problems += self.do(action)
            except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
                self.problems.append(f"{type(exc).__name__}: {exc}"[:200])
            self.done.append((scheduled, time.perf_counter()))

    def stop(self) -> None:
        self.jobs.put(None)
        self.thread.join(timeout=600)


def run_step(drivers: list[Worker], rate: float, seconds: float, gen) -> Step:
    """Offer `rate` requests per second for `seconds`; wait for all to finish."""
    step = Step(rate)
    for d in drivers:
        d.done.clear()
        d.problems.clear()
    n = max(len(drivers), int(round(rate * seconds)))
    cpu0, start = time.process_time(), time.perf_counter()
    for k in range(n):
        due = start + k / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        drivers[k % len(drivers)].jobs.put((due, next(gen)))
    while sum(len(d.done) for d in drivers) < n:
        time.sleep(0.05)
    step.wall_s = time.perf_counter() - start
    step.cpu_s = time.process_time() - cpu0
    step.load = os.getloadavg()[0]
    step.latencies = [f - s for d in drivers for s, f in d.done]
    step.problems = [p for d in drivers for p in d.problems]
    return step


def crossing(steps: list[Step], target: float = TARGET_S) -> float | None:
    """The offered rate where p95 goes over `target` for good: linear interpolation between
    the last step at or under it and the next one (the lowest rates have few samples, so one
    slow new sentence there does not count as the crossing). None if no step is under it, or
    the last one still is."""
    under = [i for i, s in enumerate(steps) if s.p(95) <= target]
    if not under or under[-1] == len(steps) - 1:
        return None
    lo, hi = steps[under[-1]], steps[under[-1] + 1]
    r0, p0, r1, p1 = lo.rate, lo.p(95), hi.rate, hi.p(95)
    return r0 + (target - p0) * (r1 - r0) / (p1 - p0)
