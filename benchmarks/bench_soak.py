"""Soak: one process, many sessions, thousands of distinct inputs; does memory level off?

    python -m benchmarks bench_soak                 # make soak: 2,000 inputs
    python -m benchmarks.bench_soak --inputs 200 --every 20 --max-lines 3 --max-words 30 --json

How: this process plays the server. Sessions are Streamlit AppTest sessions of app.py, all in
this one process, so they share exactly what a server's sessions share: the imported runtime
module, st.cache_data / st.cache_resource (process-wide), the Trace cache and the loaded
models. What AppTest leaves out is the tornado/websocket layer, which keeps no results (only
each connection's outgoing message queue), so it is not what a soak must watch. Eight sessions
are open at a time; every 25 inputs the oldest closes (dropped, its session state
weak-referenced) and a new one opens, so closed sessions can be checked for leftovers.

Each input is new text (corpus sentences, Korean and English, glued to random lengths), on a
random view (every view of the bar: patching, heads › statistics or detectors, training,
generation, …), checkpoint (paper / seed001 / lm) and, for a fifth of them, random
knocked-out heads. A few (--long-share, 2 %) paste a long text (521 to 8,192 pieces) into
the attention view of a random long-context model built for the soak, so long mode runs and
each such session keeps its LongTrace, held against the admission gate until the session
closes: after every session closed, the gate must hold nothing.
Nine in ten are classroom-sized (1-3 lines of up to 30 words); one in ten is drawn up to the
input limits (up to 16 lines, up to 520 words a line, log-uniform). RSS (VmRSS after
gc.collect) is recorded every `every` inputs.

RSS is also probed every `probe` inputs (20), so that a slope has ~50 points over the last
1,000 inputs rather than 10.

Pass: after warm-up (the first tenth of the inputs) RSS stays within ATTN_TRACE_CACHE_MB + 600
MB, and what RSS holds beyond the Trace cache's own bytes does not trend: the least-squares
slope of (RSS - cache bytes) over the last half of the inputs (the last 1,000 of 2,000) is
within ±SLOPE_LIMIT_MB MB per 100 inputs. The slope of RSS itself is printed too, but not
judged: it follows what the cache happens to hold, which a 1-in-10 large input moves by up to
~600 MB at a time (one run: 1.3-2.05 GB over its last 1,000 inputs, RSS slope +21 MB per 100
with memory beyond the cache flat), and a random walk of that size is not a leak. Also every
cache stays within its own bound, and no closed session's state is still alive.

Settings and result in soak_common.py, the inputs in soak_inputs.py, the long-mode model and
input in soak_long.py, what is measured (RSS, caches, the gate) in soak_memory.py, the printed
summary in soak_report.py; this module drives the sessions and judges.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tempfile
import time
import weakref
from dataclasses import asdict
from pathlib import Path

import numpy as np

from benchmarks.soak_common import (
    APP,
    CHECKPOINTS,
    HEADS_PARTS,
    HF_CHECKPOINTS,
    ROOT,
    SoakConfig,
    SoakResult,
)
from benchmarks.soak_inputs import Inputs
from benchmarks.soak_long import long_input, long_model
from benchmarks.soak_memory import (
    cache_report,
    gate_snapshot,
    library_mb,
    rss_mb,
    runtime_module,
)
from benchmarks.soak_report import summary


def open_session():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=600)
    at.run()
    return at


def one_input(at, text: str, ckpt: str, view: str, ablate: str, part: str) -> None:
    """Everything a student changes for one new input, applied in one rerun; on the heads
    view a second rerun picks its part (the radio exists once the view is drawn)."""
    if at.selectbox(key="ckpt").value != ckpt:
        at.selectbox(key="ckpt").select(ckpt)
    at.text_area(key="text").input(text)
    at.text_input(key="ablate").input(ablate)
    at.radio(key="view").set_value(view)
    at.run()
    if view == "heads" and not at.exception:
        at.radio(key="_w_heads_part").set_value(part).run()


def run_soak(cfg: SoakConfig, log=print) -> SoakResult:
    """Drive cfg.inputs distinct inputs through rotating sessions; sample RSS and caches."""
    if cfg.trace_cache_mb is not None:
        os.environ["ATTN_TRACE_CACHE_MB"] = str(cfg.trace_cache_mb)
    os.environ.setdefault("ATTN_CHECKPOINTS_DIR", str(ROOT / "checkpoints"))
    folder = None
    if cfg.long_share:  # listed before the app's settings are first read
        folder = tempfile.TemporaryDirectory(prefix="soak_long_")
        long_model(Path(folder.name))
        os.environ["ATTN_MODELS"] = folder.name
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return _run(cfg, log)
    finally:
        if folder is not None:
            folder.cleanup()


def _run(cfg: SoakConfig, log) -> SoakResult:
    from benchmarks.common import share_script_cache

    share_script_cache()  # compile app.py once, as a server does
    runtime = runtime_module()
    res = SoakResult(config=asdict(cfg))
    from model.settings import settings

    res.trace_cache_mb = settings().trace_cache_mb  # what the app's Trace cache was given
    if HF_CHECKPOINTS & set(cfg.checkpoints) or cfg.long_share:
        res.library_mb = round(library_mb(), 1)
    res.warmup = max(cfg.every, cfg.inputs // 10)
    inputs, rng = Inputs(cfg), random.Random(cfg.seed + 2)
    start = time.monotonic()
    sessions = [open_session() for _ in range(cfg.sessions)]
    views = list(sessions[0].radio(key="view").options)
    closed: list[weakref.ref] = []
    res.samples.append((0, rss_mb()))
    res.cached_mb.append(runtime.trace_cache().bytes / 2**20)
    for i in range(cfg.inputs):
        if i and i % cfg.churn == 0:  # the oldest tab closes, a new one opens
            old = sessions.pop(0)
            closed.append(weakref.ref(old))  # the session must not outlive its closing
            del old
            sessions.append(open_session())
        at = sessions[i % cfg.sessions]
        view = rng.choice(views)
        t0 = time.perf_counter()
        if rng.random() < cfg.long_share:
            view, words = "attention (long mode)", inputs.long_text()
            res.long_drawn += long_input(at, inputs.next(), words)
            res.long_inputs += 1
            res.long_pieces.append(len(words.split()) + 1)  # word-level pieces and <s>
        else:
            one_input(at, inputs.next(), rng.choice(cfg.checkpoints), view, inputs.ablation(),
                      rng.choice(HEADS_PARTS))
        res.latency_s.append(time.perf_counter() - t0)
        if at.exception:
            res.exceptions.append(f"input {i} on {view}: {at.exception[0].value}"[:300])
        if at.error:
            res.errors[view] = res.errors.get(view, 0) + 1
        if (i + 1) % cfg.probe == 0 or (i + 1) % cfg.every == 0:
            res.samples.append((i + 1, rss_mb()))
            caches, problems = cache_report(runtime)
            res.cached_mb.append(caches["trace_cache"]["bytes"] / 2**20)
            res.cache_violations += [f"after {i + 1}: {p}" for p in problems]
            res.caches = caches
        if (i + 1) % cfg.every == 0:
            log(f"  {i + 1:5d} inputs  RSS {res.samples[-1][1]:7.0f} MB  trace cache "
                f"{caches['trace_cache']['entries']:2d} entries "
                f"{caches['trace_cache']['bytes'] / 2**20:6.0f} MB  "
                f"{time.monotonic() - start:6.0f} s")
    sessions.clear()
    at = None  # noqa: F841 - the loop's last session must go too
    gc.collect()
    res.closed_sessions = len(closed)
    res.closed_alive = sum(ref() is not None for ref in closed)
    # every session is closed now: no session state may be left anywhere in the process
    # (but Streamlit's own module-level one for code run outside a session)
    from streamlit.runtime.state import session_state_proxy

    bare = getattr(session_state_proxy, "_mock_session_state", None)
    bare = object.__getattribute__(bare, "_state") if bare is not None else None
    res.states_alive = sum(type(o).__name__ == "SessionState" and o is not bare
                           for o in gc.get_objects())
    res.gate = gate_snapshot()  # no run or queue place left behind by a closed session
    res.wall_s = time.monotonic() - start
    after = [(n, r) for n, r in res.samples if n >= res.warmup]
    res.peak_after_warmup_mb = max(r for _, r in after)
    outside = [(n, r - c) for (n, r), c in zip(res.samples, res.cached_mb, strict=True)]
    res.peak_outside_mb = max(r for n, r in outside if n >= res.warmup)
    res.slope_mb_per_100 = _slope(res.samples, cfg.inputs - cfg.inputs // 2)
    res.outside_slope_mb_per_100 = _slope(outside, cfg.inputs - cfg.inputs // 2)
    return res


def _slope(series: list[tuple[int, float]], start: int) -> float:
    """Least-squares slope of the samples from input `start` on, in MB per 100 inputs."""
    tail = [(n, r) for n, r in series if n >= start]
    if len(tail) < 2:
        return 0.0
    x, y = np.array([n for n, _ in tail], float), np.array([r for _, r in tail])
    return float(np.polyfit(x, y, 1)[0] * 100)


# make test's short soak (tests/hostile/test_soak.py's ARGS): 200 classroom-sized inputs and an
# 8 MB Trace cache, so eviction happens; a couple of minutes instead of the full soak's ~7. The
# translators only: the language model brings transformers into the process (RSS 618 -> 675 MB
# when it first came up in a 200-input run with it, bench_soak.short_mixed), beyond the bound
SHORT = SoakConfig(inputs=200, every=20, sessions=6, churn=10, max_lines=4, max_words=20,
                   trace_cache_mb=8, checkpoints=("paper", "seed001"), long_share=0.0)


def main(parts: list[str] | None = None):
    """The full soak (make soak), or `bench_soak:short` for make test's 200 inputs; prints the
    RSS series, the slope and PASS/FAIL. One part per process: each sets the cache's budget."""
    from benchmarks.common import Report

    configs = {"soak": SoakConfig(), "short": SHORT}
    if parts and (len(parts) > 1 or parts[0] not in configs):
        raise SystemExit(f"bench_soak runs one part per process, one of {', '.join(configs)}")
    name = parts[0] if parts else "soak"
    res = run_soak(configs[name], log=lambda line: print(line, flush=True))
    every = res.config["every"]
    figures = {name: {"inputs": res.config["inputs"],
                      "rss_mb": [round(r, 1) for n, r in res.samples if n % every == 0],
                      "trace_cache_mb_series": [round(c, 1) for (n, _), c in
                                                zip(res.samples, res.cached_mb, strict=True)
                                                if n % every == 0],
                      "peak_outside_cache_mb": round(res.peak_outside_mb),
                      "outside_slope_mb_per_100_inputs": round(res.outside_slope_mb_per_100, 2),
                      "peak_after_warmup_mb": round(res.peak_after_warmup_mb),
                      "slope_mb_per_100_inputs": round(res.slope_mb_per_100, 2),
                      "trace_cache_mb": res.trace_cache_mb, "passed": res.passed,
                      "library_mb": res.library_mb, "bound_mb": round(res.bound_mb),
                      "checkpoints": list(res.config["checkpoints"]),
                      "long_inputs": res.long_inputs, "long_drawn": res.long_drawn,
                      "long_pieces": sorted(res.long_pieces),
                      "gate_held_at_end": res.gate.get("held", 0),
                      "wall_s": round(res.wall_s)}}
    return Report(summary(res), figures)


def _cli(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inputs", type=int, default=2_000)
    p.add_argument("--every", type=int, default=100)
    p.add_argument("--probe", type=int, default=20)
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--churn", type=int, default=25)
    p.add_argument("--max-lines", type=int, default=16)
    p.add_argument("--max-words", type=int, default=520)
    p.add_argument("--stress-share", type=float, default=0.1)
    p.add_argument("--trace-cache-mb", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--long-share", type=float, default=0.02,
                   help="share of inputs pasting a long text into long mode")
    p.add_argument("--long-max", type=int, default=8_192, help="pieces of a long text at most")
    p.add_argument("--checkpoints", default=",".join(CHECKPOINTS), help="comma-separated")
    p.add_argument("--json", action="store_true", help="print the result as one JSON line")
    a = p.parse_args(argv)
    cfg = SoakConfig(inputs=a.inputs, every=a.every, probe=a.probe, sessions=a.sessions,
                     churn=a.churn, max_lines=a.max_lines, max_words=a.max_words,
                     stress_share=a.stress_share, trace_cache_mb=a.trace_cache_mb, seed=a.seed,
                     long_share=a.long_share, long_max=a.long_max,
                     checkpoints=tuple(c for c in a.checkpoints.split(",") if c))
    res = run_soak(cfg, log=(lambda line: None) if a.json else (lambda s: print(s, flush=True)))
    if a.json:
        print(json.dumps({**asdict(res), "passed": res.passed, "summary": summary(res)}))
    else:
        print("\n".join(summary(res)))
    return 0 if res.passed else 1


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
