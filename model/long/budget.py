"""A long capture's peak bytes, from the shapes alone (for the admission gate).

Shape legend: L layers, H query heads, G key/value heads, n tokens, Dh head size,
D model width, F feed-forward width, P pixels per side.
"""

from __future__ import annotations

from ..budget import F32, Dims, Estimate
from .attend import CHUNK_BYTES
from .reduce import PER_QUERY, TOP_K

LONG_CAP = 32_768  # pieces a long capture accepts
LONG_FROM = 520  # above this many pieces the attention view draws the long mode


def long_estimate(d: Dims, n: int, pixels: int, qk_bytes: int = F32) -> Estimate:
    """Peak bytes of capture_long on n tokens: what it keeps plus one layer's working set.
    qk_bytes: bytes per kept query/key value in memory (0 when they go to disk: spill.py)."""
    layers = sum(d.layers.values())
    h, g, p = d.heads, d.hkv, min(pixels, n)
    # + received and lse; the top keys' weights in float32, their positions in uint16
    stats = layers * h * n * ((len(PER_QUERY) + 2 + TOP_K) * F32 + TOP_K * 2)
    # sums (become the means) and maxima; finishing moves them layer by layer into the stacked
    # arrays (LongRecorder.finish), so about two layers' worth more, not a second copy of all.
    # 16 x 16 heads (kv 4), 2,048 tokens, P = 512: estimate 729 MiB, measured peak 691 above
    # the start (1,180 when every layer was stacked twice, as the old factor of 4 said)
    pooled = (layers + 2) * h * p * p * F32 * 2
    kept = layers * (h + g) * n * d.d_head * qk_bytes
    # scores/probs, the distance, band and reach temporaries; a chunk is at least 16 queries
    # of one kv head's query heads (attend.kv_per_chunk), so at 32,768 tokens it can hold
    # more than CHUNK_BYTES
    chunk = 6 * max(CHUNK_BYTES, 16 * (h // max(g, 1)) * n * F32)
    forward = n * (8 * d.d_model + 2 * d.d_ff) * F32  # residual, norms, q/k/v, FFN
    parts = {"statistics": stats, "pooled maps": pooled, "queries and keys": kept,
             "one chunk": chunk, "forward": forward}
    return Estimate(bytes=sum(parts.values()), parts=parts, dims=d, run="long")
