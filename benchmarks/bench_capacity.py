"""Capacity of one replica: concurrent sessions rerunning views at a fixed total rate; the rate
at which the p95 rerun latency crosses 1 s.

    python -m benchmarks bench_capacity                       # all three parts below
    python -m benchmarks bench_capacity:capacity              # one replica's work, in process
    python -m benchmarks bench_capacity:nginx_1_replica,nginx_2_replicas   # through nginx
    python -m benchmarks.bench_capacity --sessions 12 --rates 0.5,1,2,3,4 --seconds 20

Through nginx (the nginx_* parts): deploy/cluster.py starts 1 or 2 replicas behind nginx, and
each session is a WireSession: a page that loads the index and the health check (taking nginx's
sticky cookie and Streamlit's XSRF cookie) and then speaks the app's websocket protocol itself,
sending the rerun messages a browser page sends with the widget values it changed. Same load,
same latency definition; the replicas' CPU seconds per rerun are recorded beside it.

How: this process plays the server. Each session is a Streamlit AppTest of app.py driven by its
own thread, the way a server runs each session's script in its own ScriptRunner thread: one
process, one GIL, the same st.cache_* stores, Trace cache, models, torch thread pool and
admission gate. So the figure is the server's own work per rerun (script, views, figures,
protobuf messages) under contention, without browsers competing for the same cores (20
Chromiums on 2 cores measure Chromium). Not included: tornado writing the messages to the
websocket (a memcpy-sized cost next to building the figures).

Load is open-loop: requests arrive at fixed intervals (1 / rate), round-robin over the sessions;
a session that is still busy queues its next request, and latency = finished - scheduled, so
queueing counts. A request is what a student does: mostly another view, layer or head of the
input already on screen (the Trace cached), and one in five a new sentence (a model run).
AppTest is not made for concurrent runs: each run sets and clears Streamlit's global Runtime
instance, so now and then a run finds none ("Runtime hasn't been created"); such a run is
counted as a problem, not hidden.

The parts live by idea: what both loads share in capacity_common.py, the page over the wire in
capacity_wire.py, the nginx load in capacity_nginx.py, the words and README block in
capacity_report.py; this module keeps the in-process load and the entry points.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from benchmarks.capacity_common import (
    APP,
    ROOT,
    TARGET_S,
    VIEWS,
    Step,
    Worker,
    crossing,
    run_step,
    student_sentences,
)
from benchmarks.capacity_nginx import CLUSTER_PARTS, run_cluster_capacity

# Reached here by their older callers (benchmarks/readme_prose.py, tests/cluster/test_fault.py);
# the redundant aliases mark them as re-exported, not unused.
from benchmarks.capacity_report import readme_cluster as readme_cluster
from benchmarks.capacity_report import summary
from benchmarks.capacity_wire import WireSession as WireSession


class Driver(Worker):
    """One session (an AppTest) and the thread that runs its requests in order."""

    def __init__(self, text: str) -> None:
        from streamlit.testing.v1 import AppTest

        super().__init__()
        self.at = AppTest.from_file(str(APP), default_timeout=300)
        self.at.query_params["text"] = text
        self.at.run()
        self.thread.start()

    def do(self, action) -> list[str]:
        action(self.at)
        self.at.run()
        return [str(self.at.exception[0].value)[:200]] if self.at.exception else []


def actions(seed: int, sentences: list[str]):
    """An endless mix of student requests: 4 in 5 on the cached input, 1 in 5 a new one."""
    rng = random.Random(seed)
    fresh = iter(sentences)

    def view(name: str):
        return lambda at: at.radio(key="view").set_value(name)

    def typed(text: str):
        return lambda at: at.text_area(key="text").input(text)

    while True:
        if rng.random() < 0.2:
            yield typed(next(fresh))
        else:
            yield view(rng.choice(VIEWS))


def run_capacity(n_sessions: int = 12, rates: tuple[float, ...] = (0.5, 1, 1.5, 2, 3, 4, 6),
                 seconds: float = 20.0, seed: int = 0, log=print) -> dict:
    os.environ.setdefault("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
    from benchmarks.common import share_script_cache

    share_script_cache()
    sentences = student_sentences(n_sessions + int(max(rates) * seconds * len(rates)), seed)
    drivers = [Driver(sentences.pop()) for _ in range(n_sessions)]
    gen = actions(seed, sentences)
    warm = run_step(drivers, 1.0, max(n_sessions, 10), gen)  # every view once: caches warm
    log(f"  warm-up: {len(warm.latencies)} reruns, p95 {warm.p(95):.2f} s")
    steps: list[Step] = []
    try:
        for rate in rates:
            step = run_step(drivers, rate, seconds, gen)
            steps.append(step)
            log(f"  {rate:4.1f} reruns/s offered: p50 {step.p(50):.2f} s, p95 {step.p(95):.2f} s"
                f", {len(step.latencies)} reruns in {step.wall_s:.0f} s, "
                f"{step.cpu_s / max(1, len(step.latencies)):.2f} CPU s each"
                + (f", {len(step.problems)} problems" if step.problems else ""))
            if step.p(95) > 3 * TARGET_S:  # well past the knee: the rest only queues
                break
    finally:
        for d in drivers:
            d.stop()
    return {"sessions": n_sessions, "seconds": seconds, "cores": os.cpu_count(),
            "steps": [{"rate": s.rate, "p50_s": round(s.p(50), 3), "p95_s": round(s.p(95), 3),
                       "reruns": len(s.latencies), "problems": len(s.problems),
                       "cpu_s_per_rerun": round(s.cpu_s / max(1, len(s.latencies)), 3),
                       "load_1min": round(s.load, 1)} for s in steps],
            "rate_at_p95_1s": crossing(steps)}


def main(parts: list[str] | None = None):
    """Parts: "capacity" (one replica's server work, in process) and "nginx_1_replica",
    "nginx_2_replicas" (the same load through nginx and deploy/cluster.py); default all."""
    from benchmarks.common import Report, save_results

    lines: list[str] = []
    for name in parts or ["capacity", *CLUSTER_PARTS]:
        log = lambda line: print(line, flush=True)  # noqa: E731
        if name == "capacity":
            res = run_capacity(log=log)
        elif name in CLUSTER_PARTS:
            res = run_cluster_capacity(CLUSTER_PARTS[name], log=log)
        else:
            raise SystemExit(f"bench_capacity has no part {name!r}")
        save_results("bench_capacity", {name: res})  # at once: the next part takes minutes
        lines += [f"-- {name}", *summary(res)]
    # saved part by part above, each with its own time and load: nothing left for __main__
    return Report(lines, {})


def _cli(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=12)
    p.add_argument("--rates", default="0.5,1,1.5,2,3,4,6")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    res = run_capacity(a.sessions, tuple(float(r) for r in a.rates.split(",")), a.seconds,
                       a.seed, log=lambda line: print(line, flush=True))
    print("\n".join(summary(res)))
    return 0


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
