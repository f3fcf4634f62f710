"""Giving freed memory back to the kernel (glibc's malloc), so a server's RSS follows what it
holds: Traces, activations and evicted cache entries.

Two settings, both no-ops where the C library is not glibc:
- return_freed_memory: large blocks are mmapped on their own and unmapped when freed;
- trim_heap: free pages inside the heaps (small arrays of evicted Traces) go back as well.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number


@cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def return_freed_memory(threshold: int = 8 << 20) -> bool:
    """Have glibc serve every allocation of `threshold` bytes or more with its own mmap, given
    back to the kernel when freed. By default glibc raises that threshold (up to 32 MB) each
    time a large block is freed, after which blocks of up to 32 MB come from per-thread heaps
    that keep their pages: with several sessions' threads in turn, measured ~200 MB more on a
    4-session crowd of largest inputs (bench_admission's child). False where there is no glibc.

    8 MB, not 1 (issue 40): at 1 MB every activation of a capture was fresh memory faulted in
    again on each run, and on a virtual machine that hands freed memory to its host a fresh
    page written a second or more after a free cost ~2.3 ms a MB (bench_heap.fresh_memory).
    bench_heap (GPT-2 small shape, 512 tokens, 2 threads, fresh processes): attention capture
    1.70 -> 1.46 s, full capture 2.17 -> 1.52 s (page faults 397,000 -> 137,000). What it cost:
    the paper model's 4- and 16-session crowds of largest inputs peaked at 2,162-2,174 MB against
    2,073-2,097 (bench_admission child, gate); bench_stress's RSS after 4 repeats 445-453 MB
    against 446-449. Traces' slabs (151 MB of attention at 512 tokens) still go back at once.
    """
    libc = _libc()
    try:
        return bool(libc is not None and libc.mallopt(M_MMAP_THRESHOLD, threshold))
    except AttributeError:
        return False


def trim_heap() -> bool:
    """Give the free pages inside glibc's heaps back to the kernel (malloc_trim(0)).

    Blocks under the mmap threshold (a short sentence's arrays) live in the heaps; once freed,
    glibc keeps their pages for reuse, so RSS stayed above what the caches held after they
    evicted. A few milliseconds; True if anything was released."""
    libc = _libc()
    try:
        return bool(libc is not None and libc.malloc_trim(0))
    except AttributeError:
        return False
