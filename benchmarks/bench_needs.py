"""What a view's needs save (issue 23): recording only what the view on screen reads.

gpt2_512: a random-weight GPT-2-small-shaped folder (12 layers × 12 heads, 768 wide,
    vocabulary 50,257; benchmarks/bench_capture.build) at 512 tokens, one torch thread and one
    BLAS thread. Three runs, medians of interleaved rounds: transformers' own sdpa forward
    (tokenize + forward, as bench_capture), the backend's capture of the attention view's needs
    (ui.views.view_needs("attention"), norms toggle off) and of everything (EVERYTHING, what
    the app recorded for every view before). MB recorded is the Trace's arrays (nbytes); the
    estimate is model/budget.py's for the same needs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

from benchmarks.bench_capture import build, sdpa_forward, text
from benchmarks.common import Report, median_times

REPEAT = 5
MB = 2**20


def gpt2_512() -> tuple[list[str], dict]:
    """The attention view's needs against everything, on the GPT-2 small shape."""
    from threadpoolctl import threadpool_limits

    from model import load_checkpoint
    from model.backends import EVERYTHING, backend_for
    from model.capture import nbytes
    from ui.views import view_needs

    needs = view_needs("attention", {}, {})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as tmp, threadpool_limits(limits=1):
            folder = build("gpt2", Path(tmp) / "gpt2")
            bundle = load_checkpoint(folder)
            backend = backend_for(bundle)
            line = text()
            plain = sdpa_forward(folder, bundle.tokenizer, line)
            def view_only():
                return backend.capture(backend.encode([line]), needs)

            def everything():
                return backend.capture(backend.encode([line]), EVERYTHING)

            t_plain, t_view, t_all = median_times([plain, view_only, everything],
                                                  repeat=REPEAT, warmup=1)
            batch = backend.encode([line])
            view_mb, all_mb = nbytes(view_only()) / MB, nbytes(everything()) / MB
            est_view = backend.estimate(batch, needs).mb
            est_all = backend.estimate(batch, EVERYTHING).mb
            n = len(batch.src_lists[0])
    finally:
        torch.set_num_threads(threads)
    figures = {
        "shape": "GPT-2 small shape: 12 layers x 12 heads, 768 wide, vocabulary 50,257",
        "tokens": n, "repeat": REPEAT, "torch_threads": 1, "view": "attention",
        "needs": sorted(needs), "sdpa_ms": round(t_plain * 1e3, 1),
        "view_ms": round(t_view * 1e3, 1), "everything_ms": round(t_all * 1e3, 1),
        "view_over_sdpa": round(t_view / t_plain, 3),
        "everything_over_sdpa": round(t_all / t_plain, 3),
        "view_mb": round(view_mb, 1), "everything_mb": round(all_mb, 1),
        "view_estimate_mb": round(est_view, 1), "everything_estimate_mb": round(est_all, 1),
    }
    lines = [f"{figures['shape']}, {n} tokens, 1 torch thread, median of {REPEAT}:",
             f"  sdpa forward {figures['sdpa_ms']} ms",
             f"  attention view's needs {sorted(needs)}: {view_mb:,.0f} MB recorded, "
             f"{t_view / t_plain:.2f}x the forward (estimate {est_view:,.0f} MB)",
             f"  everything: {all_mb:,.0f} MB recorded, {t_all / t_plain:.2f}x the forward "
             f"(estimate {est_all:,.0f} MB)"]
    return lines, figures


PARTS = {"gpt2_512": gpt2_512}


def main(parts: list[str] | None = None) -> Report:
    """Run the parts asked for (all by default)."""
    report = Report(lines=[])
    for name in parts or list(PARTS):
        lines, figures = PARTS[name]()
        report.lines += lines
        report.figures[name] = figures
    return report
