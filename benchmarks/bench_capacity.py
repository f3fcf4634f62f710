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
"""

from __future__ import annotations

import argparse
import html
import http.cookies
import json
import os
import queue
import random
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
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


def _sentences(n: int, seed: int) -> list[str]:
    from model.training import corpus

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


def run_step(drivers: list[Driver], rate: float, seconds: float, gen) -> Step:
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


# --- a page's session over the wire, through nginx ------------------------------------------


def _cookie_header(jar: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in jar.items())


@dataclass
class RunResult:
    """What one script run sent to the page."""

    seconds: float = 0.0
    charts: list[list[str]] = field(default_factory=list)  # each plotly chart's first x labels
    exceptions: list[str] = field(default_factory=list)  # st.exception boxes
    errors: list[str] = field(default_factory=list)  # st.error boxes
    query: str = ""  # the URL's query string once the run ended (the app keeps text in it)


class WireSession:
    """One browser page's session without the browser: the page's HTTP requests and then its
    websocket, speaking Streamlit's protobuf messages the way the frontend does (rerun with the
    URL's query string and the widget values changed). Cookies are kept as a browser would, so
    a sticky-session cookie set by nginx sends the websocket to the same replica."""

    def __init__(self, base: str, cookies: dict[str, str] | None = None,
                 charts: bool = True) -> None:
        self.base = base.rstrip("/")
        self.parse_charts = charts  # the benchmark skips decoding figures: client CPU
        self.cookies = dict(cookies or {})
        self.ws = None
        self.widgets: dict[str, object] = {}  # user key -> element proto (last seen)
        self.values: dict[str, str] = {}  # widget id -> string value this page has set
        self.page_hash = ""
        self.query = ""

    def _get(self, path: str) -> bytes:
        req = urllib.request.Request(self.base + path,
                                     headers={"Cookie": _cookie_header(self.cookies)})
        with urllib.request.urlopen(req, timeout=30) as resp:
            for header in resp.headers.get_all("Set-Cookie") or []:
                jar = http.cookies.SimpleCookie()
                jar.load(header)
                self.cookies.update({k: m.value for k, m in jar.items()})
            return resp.read()

    def open(self, query: str = "", timeout: float = 120) -> RunResult:
        """Load the page (index, health: Streamlit's XSRF cookie), connect, run the script."""
        from websockets.sync.client import connect

        self.close()
        self._get("/" + (f"?{query}" if query else ""))
        self._get("/_stcore/health")
        ws_url = "ws" + self.base[len("http"):] + "/_stcore/stream"
        kw = {"subprotocols": ["streamlit", self.cookies["_streamlit_xsrf"]],
              "additional_headers": {"Cookie": _cookie_header(self.cookies),
                                     "Origin": self.base},
              "max_size": None, "open_timeout": 30}
        try:  # websockets >= 16 wants legacy=True for a connection kept outside a `with`
            self.ws = connect(ws_url, legacy=True, **kw)
        except TypeError:
            self.ws = connect(ws_url, **kw)
        self.values.clear()
        self.query = query
        return self.rerun(timeout=timeout)

    def set(self, key: str, value: str, timeout: float = 120) -> RunResult:
        """Change the widget with user key `key` (text box, radio label...) and rerun."""
        self.values[self.widgets[key].id] = value
        return self.rerun(timeout=timeout)

    def options(self, key: str) -> list[str]:
        return list(self.widgets[key].options)

    def rerun(self, timeout: float = 120) -> RunResult:
        """Send a rerun and read until the script is idle again."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        for wid, value in self.values.items():
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = wid
            state.string_value = value
        res = RunResult()
        t0 = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        finished = False
        deadline = t0 + timeout
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=max(0.1, deadline - time.perf_counter())))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fwd.new_session.main_script_hash
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._element(fwd.delta.new_element, res)
            elif kind == "script_finished":
                finished = finished or fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
            elif kind == "session_status_changed" and finished and \
                    not fwd.session_status_changed.script_is_running:
                break
        res.seconds = time.perf_counter() - t0
        res.query = self.query
        return res

    def _element(self, el, res: RunResult) -> None:
        kind = el.WhichOneof("type")
        inner = getattr(el, kind) if kind else None
        wid = getattr(inner, "id", "")
        if wid.startswith("$$ID-") and wid.count("-") >= 2:
            self.widgets[wid.split("-", 2)[2]] = inner
        if kind == "plotly_chart" and not self.parse_charts:
            res.charts.append([])
        elif kind == "plotly_chart":
            spec = json.loads(inner.spec)
            data = spec.get("data") or [{}]
            res.charts.append([html.unescape(str(x)) for x in data[0].get("x") or []])
        elif kind == "exception":
            res.exceptions.append(f"{inner.type}: {inner.message}"[:200])
        elif kind == "alert" and inner.format == inner.ERROR:
            res.errors.append(inner.body[:200])

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:  # noqa: BLE001 - closing a socket the server already dropped
                pass
            self.ws = None


def run_capacity(n_sessions: int = 12, rates: tuple[float, ...] = (0.5, 1, 1.5, 2, 3, 4, 6),
                 seconds: float = 20.0, seed: int = 0, log=print) -> dict:
    os.environ.setdefault("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
    from benchmarks.common import share_script_cache

    share_script_cache()
    sentences = _sentences(n_sessions + int(max(rates) * seconds * len(rates)), seed)
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


# --- the same load through nginx, with N replicas ---------------------------------------------


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
    sentences = _sentences(n_sessions + int(max(rates) * seconds * len(rates)), seed)
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


def summary(res: dict) -> list[str]:
    rate = res["rate_at_p95_1s"]
    how = (f"through {res['through']}, {res['replicas']} replica(s)" if "through" in res
           else "in one process (AppTest, one thread each)")
    lines = [f"{res['sessions']} sessions {how}, "
             f"{res['seconds']:g} s per rate, {res['cores']} cores; 4 in 5 requests another "
             "view of the cached input, 1 in 5 a new sentence"]
    lines += [f"{s['rate']:4.1f} reruns/s: p50 {s['p50_s']:.2f} s, p95 {s['p95_s']:.2f} s "
              f"({s['reruns']} reruns, "
              + (f"{s['cpu_s_per_rerun']:.2f} CPU s each, " if "cpu_s_per_rerun" in s else "")
              + f"{s['problems']} problems, load average {s['load_1min']})" for s in res["steps"]]
    if rate is None:
        lines.append("p95 did not cross 1 s between the rates tried" if res["steps"]
                     and res["steps"][-1]["p95_s"] <= TARGET_S else
                     "p95 was over 1 s at every rate tried")
    else:
        lines.append(f"p95 crosses {TARGET_S:g} s at {rate:.2f} reruns/s: about "
                     f"{rate * THINK_S:.0f} students at one request every {THINK_S:g} s each")
    return lines


CLUSTER_PARTS = {"nginx_1_replica": 1, "nginx_2_replicas": 2}


def _verdict(res: dict) -> str:
    rate = res["rate_at_p95_1s"]
    if rate is not None:
        return (f"p95 crosses 1 s for good at {rate:.2f} reruns/s: about {rate * THINK_S:.0f} "
                f"students at one request every {THINK_S:g} s")
    if res["steps"] and all(s["p95_s"] > TARGET_S for s in res["steps"]):
        low = min(s["rate"] for s in res["steps"])
        return (f"p95 was over 1 s at every rate tried, so this run names no knee: under this "
                f"load, fewer than {low:g} reruns/s (fewer than about {low * THINK_S:.0f} "
                f"students at one request every {THINK_S:g} s) keep 95 % within a second")
    return "p95 did not cross 1 s for good between the rates tried"


def readme_cluster(results: dict, part: Callable[[dict, str], dict],
                   provenance: Callable[[dict, str], str]) -> str:
    """The README block on capacity through nginx: 1 and 2 replicas, from results.json.

    benchmarks.readme passes its part() and provenance() in (imports run readme -> benches).
    """
    runs = [(n, k, part(results, f"bench_capacity.{k}")) for k, n in CLUSTER_PARTS.items()]
    by_rate = [{s["rate"]: s for s in r["steps"]} for _, _, r in runs]
    rates = sorted(set().union(*by_rate))
    head = " | ".join(f"{n} replica{'s' if n > 1 else ''}: p50 | p95 | server CPU per rerun"
                      for n, _, _ in runs)
    rows = [f"| reruns/s | {head} |", "|---" * (1 + 3 * len(runs)) + "|"]
    for rate in rates:
        cells = []
        for steps in by_rate:
            st = steps.get(rate)
            cells += ([f"{st['p50_s']:.2f} s", f"{st['p95_s']:.2f} s",
                       f"{st['server_cpu_s_per_rerun']:.2f} s"] if st else ["–"] * 3)
        rows.append(f"| {rate:g} | " + " | ".join(cells) + " |")
    lines = []
    for n, key, r in runs:
        split = r.get("sessions_per_replica", [])
        spread = (f", the {r['sessions']} sessions split {' and '.join(map(str, split))} over "
                  "the replicas by their cookie" if n > 1 and split else "")
        src = provenance(results, f"bench_capacity.{key}")
        lines.append(f"- {n} replica{'s' if n > 1 else ''} ({src}, "
                     f"load average {r.get('load_1min_before', '?')} before the run, the load "
                     f"per rate {', '.join(str(s['load_1min']) for s in r['steps'])}"
                     f"{spread}): {_verdict(r)}.")
    return "\n".join(rows) + "\n\n" + "\n".join(lines)


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
