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
    return Report(lines, {"policies": figures})


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
            f"({provenance(results, 'bench_heap.policies')}).\n")
