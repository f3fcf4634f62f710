"""One round of bench_refactor on one side: run as a script with cwd = a checkout of the lab
(an archive of some commit), so that `model` is that commit's code, never this tree's.

    python /path/to/refactor_worker.py SPEC.json     (cwd: the archive)

SPEC.json gives the two models' folders and their inputs (the parent builds them once, so both
sides read the same weights and the same text). Prints one JSON line: where `model` was imported
from (the parent checks it lies inside the archive), each capture's pieces and wall times, and
those of a fixed torch workload timed right before each capture (the load control).
Only the public API both sides share is used: model.load_checkpoint and model.capture.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

# Python put this script's folder (the current tree's benchmarks/) first on the path; the
# archive is what must be imported, so it takes that place.
sys.path[0] = os.getcwd()
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(spec_path: str) -> dict:
    import torch
    from threadpoolctl import threadpool_limits

    import model
    from model import capture, load_checkpoint

    spec = json.loads(open(spec_path, encoding="utf-8").read())
    torch.set_num_threads(1)  # one thread, as bench_capture's Hugging Face shapes
    with threadpool_limits(limits=1):
        paper = load_checkpoint(spec["paper"]["folder"])
        gpt2 = load_checkpoint(spec["gpt2"]["folder"])
        p, g = spec["paper"], spec["gpt2"]
        runs = {
            "paper": lambda: capture(paper, p["sources"], p["targets"], target_lang="ko"),
            "gpt2": lambda: capture(gpt2, g["lines"]),
        }
        pieces = {}
        for name, fn in runs.items():  # warm-up: first-call costs stay out of the timing
            trace = fn()
            pieces[name] = [len(trace.src_tokens[0]), len(trace.tgt_tokens[0])]
        steady = control()
        steady()
        times: dict[str, list[float]] = {name: [] for name in runs}
        controls: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(spec["repeat"]):
            for name, fn in runs.items():
                controls[name].append(timed(steady))  # right before: the same moment's load
                times[name].append(timed(fn))
    return {"model_file": model.__file__, "pieces": pieces,
            "ms": {name: round(statistics.median(t) * 1e3, 2) for name, t in times.items()},
            "control_ms": {name: round(statistics.median(t) * 1e3, 2)
                           for name, t in controls.items()},
            # each capture over the control timed just before it, the median of those
            "over_control": {name: round(statistics.median(
                c / s for c, s in zip(times[name], controls[name], strict=True)), 4)
                for name in runs},
            "all_ms": {name: [round(x * 1e3, 2) for x in t] for name, t in times.items()}}


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def control():
    """A fixed torch workload that is the same code on both sides (no lab code in it): its time
    measures the machine's load at that moment, so capture / control partly cancels it."""
    import torch

    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(512, 768, generator=gen)  # (T, D)
    w = torch.randn(768, 768, generator=gen) / 768 ** 0.5

    def work() -> None:
        x = x0
        for _ in range(12):
            x = torch.tanh(x @ w)

    return work


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
