"""Queries and keys kept on disk: exact float32 drill-down without holding them in memory.

Shape legend: H heads (query or key/value), n tokens, Dh head size.

A long capture keeps every layer's Q and K so that any block can be recomputed (trace.py).
In memory that is L·(H + G)·n·Dh floats: 604 MB for GPT-2 small at 8,192 tokens, 2.7 GB
for a 16-layer Llama shape at 32,768, the largest thing a long capture holds. `QKFile` writes
them instead to one temporary file that is unlinked as soon as it is made (so nothing is left
behind, whatever ends the process) and closed when the trace is collected. A block reads
back only its rows: one head's rows are contiguous, so that is one read per side (256 KB at
1,024 × 64 floats), however long the text.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from model.settings import settings

SPILL_FROM = 64 << 20  # kept Q/K above this many bytes go to disk ("auto")
HEADROOM = 1 << 30  # and only while the disk keeps this much free besides


def spill_dir() -> str:
    """Where the files go: $ATTN_SPILL_DIR, else the system's temporary directory."""
    return settings().spill_dir or tempfile.gettempdir()


def can_spill(nbytes: int) -> bool:
    """True when nbytes fit on the spill directory's disk with HEADROOM to spare."""
    try:
        return shutil.disk_usage(spill_dir()).free >= nbytes + HEADROOM
    except OSError:  # no such directory, or unreadable: keep them in memory
        return False


class QKFile:
    """One capture's queries and keys, appended layer by layer to an unlinked file."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(dir=spill_dir())
        self._fd = self._file.fileno()
        self._end = 0
        # closed when the trace goes, explicitly (no ResourceWarning from a collected file)
        self._closer = weakref.finalize(self, self._file.close)

    @property
    def size(self) -> int:
        """Bytes written so far (on disk, not in memory)."""
        return self._end

    def put(self, x: torch.Tensor) -> OnDisk:
        """Write float32 (H, n, Dh) and return where it lies."""
        start = self._end
        for head in x.detach():  # head by head: a model's q is a strided view of (n, H, Dh),
            # and one head's contiguous copy is 8 MB at 32,768 × 64, the whole q 134 MB
            a = np.ascontiguousarray(head.to(torch.float32).numpy())
            view, done = memoryview(a).cast("B"), 0
            while done < len(view):  # a single write may stop short (Linux: ~2 GB at most)
                done += os.pwrite(self._fd, view[done:], self._end + done)
            self._end += len(view)
        return OnDisk(self, start, tuple(x.shape))

    def read(self, offset: int, count: int) -> np.ndarray:
        """count float32 values from offset."""
        want = count * 4
        buf = bytearray(want)
        view, done = memoryview(buf), 0
        while done < want:
            got = os.preadv(self._fd, [view[done:]], offset + done)
            if got <= 0:
                raise OSError("the spilled queries and keys ended early")
            done += got
        return np.frombuffer(buf, np.float32)


@dataclass(frozen=True)
class OnDisk:
    """A float32 (H, n, Dh) tensor written to a QKFile."""

    file: QKFile
    offset: int
    shape: tuple[int, int, int]

    def size(self, dim: int) -> int:
        return self.shape[dim]

    def rows(self, head: int, r0: int, r1: int) -> torch.Tensor:
        """float32 (1, r1-r0, Dh): rows r0..r1-1 of one head (one read)."""
        _, n, d = self.shape
        start = self.offset + (head * n + r0) * d * 4
        return torch.from_numpy(self.file.read(start, (r1 - r0) * d)).view(1, r1 - r0, d)
