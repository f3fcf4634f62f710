"""The soak's printed summary (bench_soak): what a run measured and whether it passed."""

from __future__ import annotations

import numpy as np

from benchmarks.soak_common import HEADROOM_MB, SLOPE_LIMIT_MB, SoakResult


def summary(res: SoakResult) -> list[str]:
    cfg = res.config
    lat = np.array(res.latency_s)
    every = [(n, r, c) for (n, r), c in zip(res.samples, res.cached_mb, strict=True)
             if n % cfg["every"] == 0]
    lines = [
        f"{cfg['inputs']} distinct inputs, {cfg['sessions']} sessions open at a time "
        f"({res.closed_sessions} closed on the way), one process, "
        f"ATTN_TRACE_CACHE_MB={res.trace_cache_mb:g}; {res.wall_s:.0f} s",
        "RSS every {} inputs (MB): {}".format(
            cfg["every"], " ".join(f"{r:.0f}" for _, r, _ in every)),
        f"peak RSS after warm-up ({res.warmup} inputs): {res.peak_after_warmup_mb:.0f} MB, "
        f"bound {res.bound_mb:.0f} MB (ATTN_TRACE_CACHE_MB + {HEADROOM_MB}"
        + (f" + {res.library_mb:.0f} MB that importing transformers adds, measured in a fresh "
           "process: the language model is a Hugging Face folder)" if res.library_mb else ")"),
        "Trace cache every {} inputs (MB): {}".format(
            cfg["every"], " ".join(f"{c:.0f}" for *_, c in every)),
        "RSS beyond the Trace cache every {} inputs (MB): {}".format(
            cfg["every"], " ".join(f"{r - c:.0f}" for _, r, c in every)),
        f"slope over the last {cfg['inputs'] // 2} inputs (RSS probed every {cfg['probe']}): "
        f"beyond the Trace cache {res.outside_slope_mb_per_100:+.2f} MB per 100 inputs (limit "
        f"±{SLOPE_LIMIT_MB:g}); RSS itself {res.slope_mb_per_100:+.2f}, not judged: it follows "
        "what the cache holds",
        f"peak RSS beyond the Trace cache after warm-up: {res.peak_outside_mb:.0f} MB",
        f"rerun per input: p50 {np.percentile(lat, 50):.2f} s, p95 "
        f"{np.percentile(lat, 95):.2f} s, max {lat.max():.2f} s",
        "caches at the end: " + "; ".join(
            f"{k} {v['entries']}" + (f" ({v['bytes'] / 2**20:.1f} MB)" if "bytes" in v else "")
            for k, v in sorted(res.caches.items())),
        f"closed sessions still alive: {res.closed_alive} of {res.closed_sessions}, session "
        f"states left after closing all: {res.states_alive}; "
        f"admission gate at the end: {res.gate or 'none'}; cache "
        f"bound violations: {len(res.cache_violations)}; exceptions: {len(res.exceptions)}; "
        f"inputs with an error box: {sum(res.errors.values())} {res.errors or ''}",
        f"long mode: {res.long_inputs} inputs, {res.long_drawn} drawn in long mode"
        + (f" of {min(res.long_pieces):,}-{max(res.long_pieces):,} pieces, each session's "
           f"last LongTrace held against the gate; bytes still held after every session "
           f"closed: {res.gate.get('held', 0):,}" if res.long_pieces else ""),
        "PASS" if res.passed else "FAIL",
    ]
    return lines + res.cache_violations[:5] + res.exceptions[:5]
