"""The README renderers for the load, admission CPU, estimate and short-soak figures read the
figures they name (benchmarks/readme_*.py; the blocks themselves are tied to results.json by
test_readme.py)."""

from __future__ import annotations

import pytest

from benchmarks import readme, readme_table
from benchmarks.bench_estimates import spread

RUN = {"measured": "2026-11-24 04:30 UTC", "cpu_cores": 2, "load_average": [9.0, 8.0, 7.0]}


def test_spread_is_the_lowest_and_highest_estimate_over_peak():
    rows = [{"estimate_mb": 88.0, "peak_mb": 100.0}, {"estimate_mb": 230.0, "peak_mb": 200.0},
            {"estimate_mb": 50.0, "peak_mb": 50.0}]
    assert spread(rows) == pytest.approx((-0.12, 0.15))


def test_estimates_block_says_the_spread_and_each_row():
    rows = [{"label": "a 1x10", "estimate_mb": 88.0, "peak_mb": 100.0},
            {"label": "b 2x20", "estimate_mb": 115.0, "peak_mb": 100.0}]
    lo, hi = spread(rows)
    part = {"rows": rows, "low": round(lo, 3), "high": round(hi, 3), **RUN}
    text = readme.block_estimates({"bench_estimates": {"capture": part, "runs": part}})
    assert "land within −12 % … +15 % of the peak over 2 rows (a 1x10 0.88, b 2x20 1.15;" in text
    assert "`bench_estimates.runs`, 2026-11-24 04:30 UTC, 2 cores, load average 9.0" in text


def test_cpu_per_result_is_read_at_four_inputs_for_each_policy():
    def counts(cpu: float, runs: int, threads: int) -> dict:
        return {"counts": {n: {"cpu_s_per_result": cpu + k, "runs": runs, "threads": threads}
                           for k, n in ((0.5, "1"), (0.0, "4"), (0.25, "16"))}, **RUN}

    results = {"bench_admission": {"gate": counts(1.0, 1, 2), "no_gate": counts(2.0, 10**6, 2),
                                   "runs2": counts(3.0, 2, 1)}}
    assert readme_table.cpu_per_result(results) == (
        "CPU per result at 4: 1.00 s gated (1 run(s) × 2 thread(s)), 2.00 s ungated (all at "
        "once × 2 thread(s)), 3.00 s 2 runs at once (2 run(s) × 1 thread(s))")


def test_short_soak_says_over_when_the_peak_passes_the_bound():
    base = {"inputs": 200, "trace_cache_mb": 8, "wall_s": 250, "peak_outside_cache_mb": 480,
            "slope_mb_per_100_inputs": 6.7, **RUN}
    within = readme.block_soak_short({"bench_soak": {"short": {**base,
                                                               "peak_after_warmup_mb": 608}}})
    over = readme.block_soak_short({"bench_soak": {"short": {**base,
                                                             "peak_after_warmup_mb": 609}}})
    assert "609 MB against the 608 MB bound (OVER it)" in over
    assert "608 MB against the 608 MB bound (within it)" in within


def test_load_row_gives_the_sessions_latencies_and_the_servers_cpu():
    r = {"sessions": 20, "charts": 4, "p50_s": 41.04, "p95_s": 52.96, "wall_s": 60.2,
         "server_cpu_s": 7.46, "server_peak_rss_mib": 1234, "health_max_s": 0.5, "problems": 0,
         "load_average_start": 12.34, **RUN}
    (row,) = readme_table.rows_load({"bench_load": {"sessions_20": r}})
    assert "| p50 41.0 s / p95 53.0 s Ctrl+Enter → last chart, all done after 60 s; the " \
           "server used 7.5 s of CPU, peaked at 1,234 MiB" in row
    assert "load average 12.3 before the browsers started (`bench_load.sessions_20`" in row


def test_blocks_with_a_target_flag_a_missed_one_as_the_soak_block_does():
    """The long block and the table rows say "OVER it" beside a figure past its target and
    "within it" at or under it, from the figures (issue 60)."""
    from benchmarks import bench_long

    run = {"tokens": 2048, "threads": 1, "sdpa_s": 10.0, "long_s": 15.0, "reduce_s": 2.0,
           "weights_gb": 0.3, "long_extra_gb": 2.0, "long_peak_rss_gb": 2.5,
           "sdpa_peak_rss_gb": 2.0, "qk_dtype": "float32", **RUN}
    text = bench_long.block({"bench_long": {
        "a": {**run, "ratio": 1.5}, "b@8192": {**run, "tokens": 8192, "ratio": 1.51,
                                                "long_extra_gb": 2.01}}})
    assert "15.0 s (1.50×, within it; 1.50)" in text and "(1.51×, OVER it; 1.51)" in text
    assert "0.30 + 2.00 GB (within it)" in text and "0.30 + 2.01 GB (OVER it)" in text
    assert "(1 of 2 runs OVER it)" in text and "beyond the weights (1 of 2 OVER it)" in text
    scan = {"heads": 36, "plain_forward_s": 0.01, "repeat": 5, **RUN}
    for seconds, said in ((3.0, "3.000 s (within it)"), (3.01, "3.010 s (OVER it)")):
        (row,) = readme_table.rows_scan({"bench_heads": {"scan": {**scan, "scan_s": seconds}}})
        assert said in row, row
