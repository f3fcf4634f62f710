"""model.heap: freed memory goes back to the kernel (glibc), measured as RSS."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

# A child process, so that RSS is this test's alone: many small arrays (under the mmap threshold,
# so they live in malloc's heap) are allocated, every other one is kept (fragmenting the heap,
# as a cache that evicts some entries does), the rest freed; RSS before and after trim_heap.
CHILD = """
import gc, numpy as np
from model.heap import return_freed_memory, trim_heap
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
return_freed_memory()
base = rss()
blocks = [np.ones(64 * 1024 // 8) for _ in range(8000)]  # 8,000 x 64 kB = 500 MB
kept = blocks[::50]  # one in fifty stays, spread over the heap
del blocks
gc.collect()
before = rss()
released = trim_heap()
print(base, before, rss(), released)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trim_heap_gives_freed_heap_pages_back():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    base, before, after, released = out.stdout.split()
    base, before, after = float(base), float(before), float(after)
    assert released == "True"
    assert before - base > 300  # glibc kept the freed blocks' pages...
    assert after - base < 100, (base, before, after)  # ...until trimmed (10 MB are kept)
