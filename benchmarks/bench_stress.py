"""Stress on shared models, longer than the test: does memory level off, and where does it go?

    python -m benchmarks.bench_stress --repeats 8 --workers 8 --rounds 2 [--server-heap] [--save]

Loads the shipped `paper`, a tiny random GPT-2 (12 x 12) and a tiny Llama with grouped-query
attention (tests/stress.py), then runs tests/stress.stress `repeats` times: each repeat runs
every instrument `rounds` times from `workers` threads and checks it bit for bit against its
sequential run, that no module hook was added and no worker thread outlived it. After each
repeat it records RSS after gc and malloc_trim (what the process holds, not the allocator's
free lists) and the bytes Python objects hold (tracemalloc, when --trace), so growth can be
told apart: Python objects (caches), native heap kept by the allocator, or a plateau.
--server-heap sets glibc's heap as the server does (model.heap.return_freed_memory);
MALLOC_ARENA_MAX in the environment is recorded beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import torch

from benchmarks.common import save_results
from model import load_checkpoint
from model.heap import return_freed_memory
from tests.hostile.families import build_folder
from tests.stress import hook_census, operations, stress, tiny_llama, trimmed_rss_mb

ROOT = Path(__file__).resolve().parents[1]
TEXTS = {"paper": ("The cat eats fish.", "The dog eats fish.", "ko"),
         "gpt2": ("The cat eats the fish.", "The dog eats the fish.", None),
         "llama": ("The cat eats the fish.", "The dog eats the fish.", None)}


def shared_models(root: Path) -> tuple[dict, dict]:
    """{name: (bundle, ops)} and each model's hook census right after load."""
    bundles = {"paper": load_checkpoint(ROOT / "checkpoints" / "paper"),
               "gpt2": load_checkpoint(build_folder(root, "gpt2")),
               "llama": load_checkpoint(tiny_llama(root))}
    census = {n: hook_census(b.model) for n, b in bundles.items()}
    return {n: (b, operations(b, *TEXTS[n])) for n, b in bundles.items()}, census


def top_python(snap_a, snap_b, n: int = 5) -> list[str]:
    """The lines whose Python allocations grew most between two tracemalloc snapshots."""
    stats = snap_b.compare_to(snap_a, "lineno")
    return [f"{s.size_diff / 2**20:+.2f} MB {s.traceback[0]}" for s in stats[:n]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--trace", action="store_true", help="also measure Python allocations")
    ap.add_argument("--save", action="store_true", help="write benchmarks/results.json")
    ap.add_argument("--server-heap", action="store_true",
                    help="the server's heap settings: blocks of 1 MB or more mmapped on their own")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.server_heap:
        return_freed_memory()
    start = time.perf_counter()
    before_load = trimmed_rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        models, census = shared_models(Path(tmp))
        loaded = trimmed_rss_mb()
        if args.trace:
            tracemalloc.start()
        first = snap = tracemalloc.take_snapshot() if args.trace else None
        rss, python_mb, problems, runs = [], [], [], 0
        for i in range(args.repeats):
            report = stress(models, args.workers, args.rounds, seed=i, loaded=census)
            runs += report.runs
            problems += report.problems()
            rss.append(round(report.rss_after_mb, 1))
            if args.trace:
                now = tracemalloc.take_snapshot()
                python_mb.append(round(tracemalloc.get_traced_memory()[0] / 2**20, 1))
                print(f"repeat {i}: RSS {rss[-1]} MB, Python {python_mb[-1]} MB;",
                      "; ".join(top_python(snap, now, 3)), flush=True)
                snap = now
            else:
                print(f"repeat {i}: RSS {rss[-1]} MB ({report.runs} runs)", flush=True)
        growth = top_python(first, snap) if args.trace else []
    figures = {"runs": runs, "workers": args.workers, "repeats": args.repeats,
               "rss_before_load_mb": round(before_load, 1), "rss_loaded_mb": round(loaded, 1),
               "rss_after_repeat_mb": rss, "python_mb": python_mb, "problems": problems[:20],
               "python_growth": growth, "seconds": round(time.perf_counter() - start, 1),
               "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX", ""),
               "server_heap": args.server_heap}
    print(json.dumps(figures, indent=1))
    if args.save:
        part = "shared_models" + ("_server_heap" if args.server_heap else "") + (
            "_arenas" + os.environ["MALLOC_ARENA_MAX"] if os.environ.get("MALLOC_ARENA_MAX")
            else "")
        save_results("bench_stress", {part: figures})
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
