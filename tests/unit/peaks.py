"""Peak memory of one call, as the estimate-vs-measured tests measure it (test_budget.py,
test_budget_runs.py), and the child process they measure in.

The peak is the resident set size's high-water mark (VmHWM), reset just before the call
(/proc/self/clear_refs, after gc and malloc_trim so freed heap pages are given back), minus the
RSS just before. RSS is what the kernel's OOM killer counts, and it sees every allocator at once
(torch's CPU tensors, numpy's arrays, Python objects); tracemalloc would miss torch's
allocations, and torch's profiler would miss numpy's. Linux only.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from model.budget import MB

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
TOLERANCE = 0.30  # an estimate must land within ±30 % of the measured peak …
# … on a row large enough for that to mean something. A few MB that no shape formula models
# (the first batched call's thread pools and allocator arenas, CPU-specific kernel scratch)
# added 3-4 MB to a 9 MB peak on the CI machines: a ±30 % check of such a row measures that
# noise, and an absolute allowance for it let a 4.9 MB estimate pass any peak from 0 to 18 MB
# (issue 29). So rows under MIN_PEAK are refused as too small to check, and the rows kept are
# held to ±30 % alone; the gate's budget is counted in hundreds of MB.
MIN_PEAK = 32 * MB


def _status(key: str) -> int:
    """One /proc/self/status figure, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def peak_of(fn: Callable[[], T]) -> tuple[T, int]:
    """fn()'s result, and how many bytes the process's RSS peaked above its level before."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = _status("VmRSS:")
    out = fn()
    return out, _status("VmHWM:") - before


def run_child(code: str, timeout_s: float = 300) -> list[dict]:
    """Run `code` in a fresh Python at the repository root with one torch thread (no other
    test's memory in the way) and return the JSON objects it printed, one per line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=timeout_s)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def check_estimate(row: dict, label: str) -> None:
    """Print one measured row ({"estimate", "peak", ...}) and assert the estimate is within
    TOLERANCE of the peak, on a row whose peak is at least MIN_PEAK."""
    ratio = row["estimate"] / row["peak"]
    print(f"{label}: estimate {row['estimate'] / MB:.0f} MB, measured {row['peak'] / MB:.0f} MB "
          f"({ratio:.2f})")
    assert row["peak"] >= MIN_PEAK, (f"{label}: a {row['peak'] / MB:.1f} MB peak is too small "
                                     f"to check an estimate against; measure a larger input")
    assert abs(row["estimate"] - row["peak"]) <= TOLERANCE * row["peak"], row
