"""bench_capacity's load through nginx: deploy/cluster.py starts 1 or 2 replicas behind nginx,
each session is a page over the wire (capacity_wire.WireSession), and the replicas' CPU seconds
per rerun are read from /proc beside the latency.
"""

from __future__ import annotations

import os
import random
import sys
import time
import urllib.parse
from pathlib import Path

from benchmarks.capacity_common import (
    ROOT,
    TARGET_S,
    VIEWS,
    Step,
    Worker,
    crossing,
    run_step,
    student_sentences,
)
from benchmarks.capacity_wire import WireSession


class WireDriver(Worker):
    """One page (a WireSession) and the thread that sends its requests in order."""

    def __init__(self, base: str, text: str) -> None:
        from ui.views import VIEWS as ALL

        super().__init__()
        self.s = WireSession(base, charts=False)
        self.s.open(urllib.parse.urlencode({"text": text}))
        self.labels = {name: ALL[name].label for name in VIEWS}  # English: the default UI
        self.thread.start()

    def do(self, action) -> list[str]:
        what, value = action
        res = self.s.set("view" if what == "view" else "text",
                         self.labels[value] if what == "view" else value, timeout=300)
        return res.exceptions + res.errors

    def stop(self) -> None:
        super().stop()
        self.s.close()


def wire_actions(seed: int, sentences: list[str]):
    """actions() as (what, value) pairs for a WireDriver: 4 in 5 a view, 1 in 5 a sentence."""
    rng = random.Random(seed)
    fresh = iter(sentences)
    while True:
        yield ("text", next(fresh)) if rng.random() < 0.2 else ("view", rng.choice(VIEWS))


def run_capacity_http(base: str, n_sessions: int = 12,
                      rates: tuple[float, ...] = (0.5, 1, 1.5, 2, 3, 4, 6),
                      seconds: float = 20.0, seed: int = 0, log=print,
                      server_cpu=lambda: 0.0) -> dict:
    """run_capacity's load, sent through nginx at `base` by pages over the wire.

    `server_cpu()` is the CPU seconds the replicas and nginx have used so far; the step's
    Step.cpu_s (this process: the pages' client side) is recorded beside it."""
    sentences = student_sentences(n_sessions + int(max(rates) * seconds * len(rates)), seed)
    drivers = [WireDriver(base, sentences.pop()) for _ in range(n_sessions)]
    gen = wire_actions(seed, sentences)
    warm = run_step(drivers, 1.0, max(n_sessions, 10), gen)
    log(f"  warm-up: {len(warm.latencies)} reruns, p95 {warm.p(95):.2f} s")
    steps: list[Step] = []
    server: list[float] = []
    try:
        for rate in rates:
            cpu0 = server_cpu()
            step = run_step(drivers, rate, seconds, gen)
            steps.append(step)
            server.append((server_cpu() - cpu0) / max(1, len(step.latencies)))
            log(f"  {rate:4.1f} reruns/s offered: p50 {step.p(50):.2f} s, p95 {step.p(95):.2f} s"
                f", {len(step.latencies)} reruns in {step.wall_s:.0f} s, server CPU "
                f"{server[-1]:.2f} s and client CPU "
                f"{step.cpu_s / max(1, len(step.latencies)):.2f} s per rerun, load average "
                f"{step.load:.1f}" + (f", {len(step.problems)} problems" if step.problems
                                      else ""))
            # past the knee at two rates in a row (one slow new sentence among the few
            # requests of a low rate does not stop the run)
            if len(steps) >= 2 and all(s.p(95) > 3 * TARGET_S for s in steps[-2:]):
                break
    finally:
        for d in drivers:
            d.stop()
    return {"sessions": n_sessions, "seconds": seconds, "cores": os.cpu_count(),
            "steps": [{"rate": s.rate, "p50_s": round(s.p(50), 3), "p95_s": round(s.p(95), 3),
                       "reruns": len(s.latencies), "problems": len(s.problems),
                       "server_cpu_s_per_rerun": round(cpu, 3),
                       "client_cpu_s_per_rerun": round(s.cpu_s / max(1, len(s.latencies)), 3),
                       "load_1min": round(s.load, 1)} for s, cpu in zip(steps, server)],
            "rate_at_p95_1s": crossing(steps)}


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of these processes and their reaped children so far."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / tick  # utime stime cutime cstime
    return total


def _sessions_per_replica(run_dir: Path) -> list[int]:
    """How many pages nginx's cookie put on each replica: distinct sticky keys whose websocket
    each replica served, from the access log (most first)."""
    import re

    pairs = set()
    for line in (run_dir / "nginx-access.log").read_text().splitlines():
        m = re.search(r"/_stcore/stream .* upstream=(\S+) .*key=(\S+)", line)
        if m:
            pairs.add(m.groups())
    counts: dict[str, int] = {}
    for upstream, _ in pairs:
        counts[upstream] = counts.get(upstream, 0) + 1
    return sorted(counts.values(), reverse=True)


def run_cluster_capacity(replicas: int, log=print, **kw) -> dict:
    """Start `replicas` replicas behind nginx (deploy/cluster.py), run the load, stop them."""
    import subprocess
    import tempfile

    sys.path.insert(0, str(ROOT / "deploy"))
    from cluster import _die_with_parent, healthy

    run_dir = Path(tempfile.mkdtemp(prefix="capacity-cluster-"))
    port = 28500 + replicas * 10
    out = open(run_dir / "supervisor.out", "wb")
    proc = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "cluster.py"), "--replicas",
                             str(replicas), "--port", str(port), "--dir", str(run_dir)],
                            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)  # no cluster outlives the benchmark
    out.close()
    try:
        deadline = time.monotonic() + 300
        while not (run_dir / "supervisor.out").read_text().count("up; Ctrl-C"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((run_dir / "supervisor.out").read_text()[-2000:])
            time.sleep(0.5)
        assert healthy(f"http://127.0.0.1:{port}/healthz")
        load0 = os.getloadavg()[0]
        pids = [int(ln.split()[0]) for ln in (run_dir / "children.pids").read_text().split("\n")
                if ln.strip()]
        res = run_capacity_http(f"http://127.0.0.1:{port}", log=log,
                                server_cpu=lambda: _cpu_seconds(pids), **kw)
        time.sleep(1.0)  # nginx logs a websocket once it is closed
        res.update({"replicas": replicas, "load_1min_before": round(load0, 1),
                    "sessions_per_replica": _sessions_per_replica(run_dir),
                    "through": "nginx (deploy/cluster.py), pages over the websocket"})
        return res
    finally:
        proc.terminate()
        proc.wait(timeout=60)


CLUSTER_PARTS = {"nginx_1_replica": 1, "nginx_2_replicas": 2}

