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


def return_freed_memory(threshold: int = 1 << 20) -> bool:
    """Have glibc serve every allocation of `threshold` bytes or more with its own mmap, given
    back to the kernel when freed. By default glibc raises that threshold (up to 32 MB) each
    time a large block is freed, after which blocks of up to 32 MB come from per-thread heaps
    that keep their pages: with several sessions' threads in turn, measured ~200 MB more on a
    4-session crowd of largest inputs (bench_admission's child). False where there is no glibc."""
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
