"""What the server's heap setting costs a capture (issue 40): three glibc heap policies, one
512-token GPT-2-small-shape capture each, at 2 threads.

    python -m benchmarks bench_heap

ui/admission.server_gate maps every block of 1 MB or more on its own
(model.heap.return_freed_memory), so that RSS follows what the server holds and freed
activations never stay in a thread's heap. The price is that every activation of 1 MB or more
is fresh memory whose pages are faulted in again on every run. The policies, each in its own
fresh process, in two interleaved rounds:

- default: glibc as it comes (its mmap threshold rises as large blocks are freed);
- server: the server's setting (return_freed_memory);
- two heaps: MALLOC_ARENA_MAX=2 with glibc's default threshold.

Each child loads the model, captures once to warm up, then times `capture(..., names=["attn"])`
and the full capture five times each (medians) and counts the minor page faults of a run.
What the memory side of each policy costs is bench_stress's business (RSS after rounds of
every instrument from 8 threads); this measures the time.

A second part, fresh_memory, says what a fresh page costs on this machine: one process writes
TOUCH_MB of new memory (numpy, its own mmap), frees it, and does so TOUCH_TRIES times at once
and TOUCH_TRIES times TOUCH_PAUSE_S seconds apart, and writes each array a second time, once
mapped. In a virtual machine whose guest hands freed memory back to the host (free page
reporting, here after about a second), memory written again after a pause faults on both
sides: measured ~2 ms a MB against ~0.16 at once. Every fresh slab and activation of a capture
that follows a user's pause pays it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, Report

TOUCH_MB, TOUCH_TRIES, TOUCH_PAUSE_S = 256, 5, 3.0
POLICIES = {"default": {}, "server": {"BENCH_HEAP_SERVER": "1"},
            "two heaps": {"MALLOC_ARENA_MAX": "2"}}
ROUNDS = 2

_CHILD = r"""
import json, os, resource, statistics, sys, time
import torch
from model.heap import return_freed_memory
if os.environ.get("BENCH_HEAP_SERVER"):
    return_freed_memory()
torch.set_num_threads(2)
from benchmarks.bench_hf import text
from model import capture, load_checkpoint
bundle = load_checkpoint(sys.argv[1])
line = text()
capture(bundle, [line], names=["attn"])
out = {}
for key, names in (("attn", ["attn"]), ("full", None)):
    times, faults = [], []
    for _ in range(5):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t = time.perf_counter()
        trace = capture(bundle, [line], names=names)
        times.append(time.perf_counter() - t)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        del trace
    out[key] = {"s": statistics.median(times), "faults": statistics.median(faults)}
print(json.dumps(out))
"""


_TOUCH = r"""
import json, sys, time
import numpy as np
mb, tries, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
out = {"soon": [], "after_pause": [], "mapped": []}
for key, wait in (("soon", 0.0), ("after_pause", pause)):
    for _ in range(tries):
        time.sleep(wait)  # what was freed has had this long to go back to the host
        t = time.perf_counter()
        a = np.empty(mb << 18, np.float32)  # mb MB, above glibc's mmap threshold: own mapping
        a.fill(1.0)
        out[key].append((time.perf_counter() - t) * 1e3 / mb)
        t = time.perf_counter()
        a.fill(2.0)
        out["mapped"].append((time.perf_counter() - t) * 1e3 / mb)
        del a  # unmapped: the next try's memory is fresh again
print(json.dumps(out))
"""


def _touch() -> dict:
    """ms per MB of writing fresh memory at once and after a pause, and of writing memory
    already mapped (part fresh_memory)."""
    out = subprocess.run([sys.executable, "-c", _TOUCH, str(TOUCH_MB), str(TOUCH_TRIES),
                          str(TOUCH_PAUSE_S)], cwd=ROOT, check=True, capture_output=True,
                         text=True, timeout=600)
    got = json.loads(out.stdout.splitlines()[-1])
    return {"mb": TOUCH_MB, "tries": TOUCH_TRIES, "pause_s": TOUCH_PAUSE_S,
            "soon_ms_per_mb": [round(x, 3) for x in sorted(got["soon"])],
            "after_pause_ms_per_mb": [round(x, 3) for x in sorted(got["after_pause"])],
            "mapped_ms_per_mb": round(statistics.median(got["mapped"]), 3)}


def _child(folder: Path, env: dict[str, str]) -> dict:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", **env}
    full.pop("OMP_NUM_THREADS", None)  # the child sets its own 2 threads
    out = subprocess.run([sys.executable, "-c", _CHILD, str(folder)], cwd=ROOT, env=full,
                         check=True, capture_output=True, text=True, timeout=600)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> Report:
    from benchmarks.bench_hf import build

    runs: dict[str, list[dict]] = {name: [] for name in POLICIES}
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(Path(tmp) / "gpt2-small-random")
        for r in range(ROUNDS):
            order = list(POLICIES) if r % 2 == 0 else list(reversed(POLICIES))
            for name in order:
                runs[name].append(_child(folder, POLICIES[name]))
    figures, lines = {}, []
    for name, got in runs.items():
        row = {key: {"s": round(statistics.median(g[key]["s"] for g in got), 3),
                     "faults": int(statistics.median(g[key]["faults"] for g in got))}
               for key in ("attn", "full")}
        figures[name] = {**row, "threads": 2, "tokens": 512, "rounds": ROUNDS}
        lines.append(f"{name}: attention {row['attn']['s']:.2f} s ({row['attn']['faults']:,} "
                     f"page faults), everything {row['full']['s']:.2f} s "
                     f"({row['full']['faults']:,})")
    touch = _touch()
    lines.append(f"fresh memory, {touch['mb']} MB written {touch['tries']} times each way: "
                 f"at once {_spread_ms(touch['soon_ms_per_mb'])}, after {touch['pause_s']:g} s "
                 f"{_spread_ms(touch['after_pause_ms_per_mb'])}; written again once mapped "
                 f"{touch['mapped_ms_per_mb']:.2f} ms a MB")
    return Report(lines, {"policies": figures, "fresh_memory": touch})


def block(results: dict) -> str:
    """The README's heap block: each policy's two captures, times and page faults."""
    from benchmarks.readme_results import provenance

    got = results.get("bench_heap", {}).get("policies")
    if not got:
        return "No run recorded yet: `python -m benchmarks bench_heap` measures it.\n"
    rows = ["| glibc heap | attention only: s (page faults a run) | everything: s (page faults) |",
            "|---|---|---|"]
    for name, row in got.items():
        if isinstance(row, dict) and "attn" in row:
            rows.append(f"| {name} | {row['attn']['s']:.2f} ({row['attn']['faults']:,}) | "
                        f"{row['full']['s']:.2f} ({row['full']['faults']:,}) |")
    return ("\n".join(rows) + f"\n\nGPT-2 small shape, 512 tokens, 2 threads, medians of 5 runs "
            f"in each of {ROUNDS} fresh processes a policy, interleaved "
            f"({provenance(results, 'bench_heap.policies')}).\n" + _touch_block(results))


def _spread_ms(values: list[float]) -> str:
    return (f"{statistics.median(values):.2f} ms a MB (median; {values[0]:.2f} to "
            f"{values[-1]:.2f})")


def _touch_block(results: dict) -> str:
    """The heap block's last paragraph: what a fresh page costs here (part fresh_memory)."""
    from benchmarks.readme_results import provenance

    t = results.get("bench_heap", {}).get("fresh_memory")
    if not t:
        return ""
    return (f"\nWhat fresh memory costs on this machine: {t['mb']} MB of it, written "
            f"{t['tries']} times each way and freed in between, took "
            f"{_spread_ms(t['soon_ms_per_mb'])} when written at once and "
            f"{_spread_ms(t['after_pause_ms_per_mb'])} when written {t['pause_s']:g} s after "
            f"the last was freed; the same array written again, already mapped, "
            f"{t['mapped_ms_per_mb']:.2f} ms a MB "
            f"({provenance(results, 'bench_heap.fresh_memory')}).\n")
