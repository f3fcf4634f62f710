"""The short soak (make soak runs the full 2,000 inputs): 200 distinct inputs through rotating
AppTest sessions in one fresh process (benchmarks/bench_soak.py), on random views, both shipped
checkpoints and random knocked-out heads, with a Trace cache of only 8 MB so eviction happens.

Inputs are classroom-sized here (1-3 lines of 3-20 words; one in ten up to 4 lines of up to 20
words) to keep the run to a minute or two on two cores; the full soak goes up to the limits
(16 lines, 520 words a line) with a 2 GB cache.
A fresh subprocess, so that RSS is the soak's alone and not whatever the rest of the suite left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, needs

SHIPPED = all((ROOT / "checkpoints" / n / "config.json").is_file() for n in ("paper", "seed001"))
ARGS = ["--inputs", "200", "--every", "20", "--sessions", "6", "--churn", "10",
        "--max-lines", "4", "--max-words", "20", "--trace-cache-mb", "8", "--json",
        "--checkpoints", "paper,seed001",  # the translators: bench_soak.SHORT says why
        "--long-share", "0"]  # long mode builds and imports a Hugging Face model: make soak's


@pytest.fixture(scope="module")
def soak() -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
           "ATTN_CHECKPOINTS_DIR": str(ROOT / "checkpoints")}
    env.pop("ATTN_MODELS", None)
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_soak", *ARGS], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=1800)
    last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    assert last.startswith("{"), (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    result = json.loads(last)
    print("\n".join(result["summary"]))  # shown with -s, and in the log of a failure
    return result


pytestmark = needs(SHIPPED, reason="the soak uses both shipped checkpoints")


def test_memory_levels_off(soak):
    """After warm-up RSS stays within 250 MB of where it was, and its slope over the last 100
    inputs is under 50 MB per 100 inputs (keeping every small Trace would be 100-200; samples
    of 100 inputs are noisy, so the full soak's ±5 MB limit is make soak's)."""
    samples = soak["samples"]
    assert len(samples) == 200 // 20 + 1
    at_warmup = next(r for n, r in samples if n >= soak["warmup"])
    assert soak["peak_after_warmup_mb"] <= at_warmup + 250, soak["summary"]
    assert abs(soak["slope_mb_per_100"]) <= 50.0, soak["summary"]


def test_memory_within_the_issue_bound(soak):
    """ATTN_TRACE_CACHE_MB + 600 MB, here 608 MB: measured 516 MB, 547 MB with 2026-11-28's new
    views (615 MB while the head atlas imported scikit-learn). (It failed at 832-904 MB
    while open sessions kept their Traces, the val split was drawn from 200k pairs, the model
    loader imported torch._dynamo and the query-key map imported scikit-learn.)"""
    assert soak["peak_after_warmup_mb"] <= soak["trace_cache_mb"] + 600, soak["summary"]
    assert soak["peak_outside_mb"] <= 600, soak["summary"]


def test_every_cache_stays_within_its_bound(soak):
    assert not soak["cache_violations"], soak["cache_violations"]
    trace = soak["caches"]["trace_cache"]
    assert trace["bytes"] <= 8 * 2**20 or trace["entries"] == 1  # eviction did happen
    assert any(k.startswith("cache_data.") for k in soak["caches"])


def test_closed_sessions_leave_nothing_behind(soak):
    assert soak["closed_sessions"] >= 15
    assert soak["closed_alive"] == 0 and soak["states_alive"] == 0
    assert not soak["gate"].get("running") and not soak["gate"].get("waiting"), soak["gate"]


def test_no_input_broke_a_page(soak):
    assert not soak["exceptions"], soak["exceptions"]
    assert sum(soak["errors"].values()) == 0, soak["errors"]
