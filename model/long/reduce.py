"""One attention layer's probabilities, reduced chunk by chunk to what can be shown.

Shape legend
    H  heads            n  tokens (queries = keys: self-attention over one text)
    c  queries in a chunk        w  keys a chunk reads (those not blocked)
    P  pixels per side (pooled maps), P <= n        k  top keys kept per query

`LayerReducer.add(probs, scores, lse, q0, k0)` takes a chunk's exact probabilities (H, c, w) for
queries q0..q0+c over keys k0..k0+w (every key outside that range is blocked, weight 0) and
folds them into: pooled maps (mean and max over each pixel's cells, blocked cells counted as
0, as a full capture holds them), per-query statistics, per-key attention received, per-head
mass by distance band, and each query's log-sum-exp (so any block can be recomputed exactly
from the kept queries and keys). Memory is O(H·n + H·P²), never O(n²).
"""

from __future__ import annotations

import numpy as np
import torch

LOCAL, MIDDLE = 64, 1024  # distance bands: local <= 64 < middle <= 1,024 < far
REACH = 0.01  # max distance: the farthest of its top keys holding at least this share
TOP_K = 8
TOP_BLOCK = 64  # cells per block in top_indices' first pass (32 and 128 were slower)
PER_QUERY = ("entropy", "first", "special", "previous", "mean_distance", "max_distance")


def bin_starts(n: int, p: int) -> np.ndarray:
    """int64 (p+1,): first position of each of p pixels over n positions, then n."""
    b = np.arange(p + 1, dtype=np.int64)
    return -(-b * n // p)


def pixel_of(i: int, n: int, p: int) -> int:
    """The pixel (0..p-1) that position i falls in."""
    return i * p // n


def _local_starts(starts: np.ndarray, lo: int, hi: int, p: int, n: int) -> tuple[int, int,
                                                                                 np.ndarray]:
    """Pixels lo..hi-1 cover: (first pixel, last pixel + 1, segment starts relative to lo)."""
    a, b = pixel_of(lo, n, p), pixel_of(hi - 1, n, p) + 1
    seg = np.maximum(starts[a:b], lo) - lo
    return a, b, seg


def top_indices(scores: torch.Tensor, k: int, block: int = TOP_BLOCK) -> torch.Tensor:
    """int64 (..., k): where each row's k largest scores are (ties in any order).
    A row's k largest lie in the k blocks whose maxima are largest (an element outside them
    is beaten by k block maxima), so only those k·block cells, and the tail past the last
    whole block, go through topk: 2.3 ms, not 5.1, for a (4, 64, 8,192) chunk."""
    w = scores.size(-1)
    whole = w // block
    if whole <= 2 * k:  # short rows: one topk is as fast
        return torch.topk(scores, k, dim=-1).indices
    blocks = scores[..., :whole * block].unflatten(-1, (whole, block))
    which = torch.topk(blocks.amax(-1), k, dim=-1).indices  # (..., k) the best blocks
    # their cells, a whole block per index: rows of blocks picked by (row, block) pairs
    # copy 64 contiguous floats at a time (0.31 ms a (4, 64, 8,192) chunk, where a gather
    # through an expanded index took 0.59 and a gather through a full one made a 1 MB int64
    # index). The leading dims merge into one without a copy while the rows are contiguous
    lead = which.shape[:-1]
    rows = blocks.reshape(-1, whole, block)  # (rows, whole, block)
    picked = rows[torch.arange(rows.size(0))[:, None], which.reshape(rows.size(0), k)]
    cand = picked.reshape(*lead, k * block)
    tail = w - whole * block
    if tail:
        cand = torch.cat([cand, scores[..., whole * block:]], -1)
    best = torch.topk(cand, k, dim=-1).indices  # (..., k) positions in cand
    inside = best < k * block
    at = which.gather(-1, torch.where(inside, best // block, 0)) * block + best % block
    return torch.where(inside, at, best - k * block + whole * block)


class LayerReducer:
    """Every head of one (kind, layer), reduced as its query chunks arrive."""

    def __init__(self, n_heads: int, n: int, pixels: int, specials: np.ndarray,
                 top_k: int = TOP_K) -> None:
        self.n, self.h = n, n_heads
        self.p = min(pixels, n)
        self.starts = bin_starts(n, self.p)
        self.top_k = min(top_k, n)
        self.special_pos = torch.from_numpy(np.flatnonzero(specials))
        self.sum = np.zeros((n_heads, self.p, self.p), np.float32)  # float32: half the RSS
        self.max = np.zeros((n_heads, self.p, self.p), np.float32)
        self.stats = {name: np.zeros((n_heads, n), np.float32) for name in PER_QUERY}
        self.stats["received"] = np.zeros((n_heads, n), np.float32)  # per key: Σ over queries
        # positions as uint16 (LONG_CAP is 32,768): half of int32's 268 MB for 16 × 16 heads
        # at 32,768 tokens
        self.top_keys = np.zeros((n_heads, n, self.top_k), np.uint16 if n <= 1 << 16 else
                                 np.int32)
        self.top_weights = np.zeros((n_heads, n, self.top_k), np.float32)
        self.lse = np.zeros((n_heads, n), np.float32)
        self.bands = np.zeros((n_heads, 3), np.float64)  # Σ over queries: local, middle, far

    def add(self, probs: torch.Tensor, scores: torch.Tensor, lse: torch.Tensor, q0: int,
            k0: int, causal: bool, log_z: torch.Tensor | None = None,
            heads: slice = slice(None)) -> None:
        """probs float32 (H, c, w) for queries q0.. over keys k0..; the scores they came from
        (blocked cells finite and below every open one: their weight is 0, and they rank
        last); lse (H, c); causal: no query reads a key after it (distances then need no
        absolute value). With log_z (H, c),
        the scores are shifted so that each row's largest is 0 (lse = that max + log_z).
        heads: which of the layer's heads the chunk holds (all of them by default).
        The scores are overwritten (with p·s, for the entropy)."""
        h, c, w = probs.shape
        q1, k1 = q0 + c, k0 + w
        self.lse[heads, q0:q1] = lse.numpy()
        st = self.stats
        if k0 == 0:
            st["first"][heads, q0:q1] = probs[:, :, 0].numpy()
        sp = self.special_pos[(self.special_pos >= k0) & (self.special_pos < k1)] - k0
        if len(sp):
            st["special"][heads, q0:q1] = probs[:, :, sp].sum(-1).numpy()
        rows = torch.arange(c)
        prev = rows + q0 - 1 - k0  # the key just before each query, in chunk coordinates
        ok = (prev >= 0) & (prev < w)
        if ok.any():
            st["previous"][heads, q0:q1][:, ok.numpy()] = probs[:, rows[ok], prev[ok]].numpy()
        qi = torch.arange(q0, q1, dtype=torch.float32)
        if causal:  # Σ p·(i − j) = i − p·j: a matrix–vector product, no (c, w) temporary
            kj = torch.arange(k0, k1, dtype=torch.float32)
            st["mean_distance"][heads, q0:q1] = (qi - torch.matmul(probs, kj)).numpy()
        else:
            dist = (qi[:, None] - torch.arange(k0, k1, dtype=torch.float32)[None, :]).abs_()
            st["mean_distance"][heads, q0:q1] = (probs * dist).sum(-1).numpy()
        self._bands(probs, q0, k0, causal, heads)
        kk = min(self.top_k, w)
        # the scores rank keys as the probabilities do (exp and 1/z keep the order), and topk
        # ran faster over them than over the many near-zero probabilities (7.9 -> 5.2 ms a
        # chunk, GPT-2 shape at 8,192 tokens)
        top = top_indices(scores, kk)
        weights = probs.gather(-1, top)
        keys = top + k0
        self.top_keys[heads, q0:q1, :kk] = keys.numpy()
        self.top_weights[heads, q0:q1, :kk] = weights.numpy()
        # max distance: the farthest of the top keys holding at least REACH of the weight
        reach = torch.where(weights >= REACH, (qi[:, None] - keys).abs(), 0)
        st["max_distance"][heads, q0:q1] = reach.amax(-1).numpy()
        row_sum = self._pool(probs, q0, q1, k0, k1, heads)
        # received per key: the pooled rows' sums added up (1/(rows per pixel) of the cells)
        st["received"][heads, k0:k1] += row_sum.sum(1).numpy()
        # entropy = lse − Σ p·s: one product per cell instead of a log (with shifted scores,
        # log_z − Σ p·s, which loses nothing to adding the max back). Last, since it
        # multiplies the scores in place: a row-by-row batched dot took twice as long
        dot = scores.mul_(probs).sum(-1)
        st["entropy"][heads, q0:q1] = ((lse if log_z is None else log_z) - dot).numpy()

    def aligned(self, step: int) -> int:
        """A query chunk size that ends on pixel edges when pixels are all one size (n a
        multiple of P), so _pool reduces rows through a view instead of a loop."""
        size = self.n // self.p
        if self.n % self.p or step < size:
            return step
        return step - step % size

    def _bands(self, probs: torch.Tensor, q0: int, k0: int, causal: bool,
               heads: slice) -> None:
        """Σ over these queries of their mass at local, middle and far distance."""
        _, c, w = probs.shape
        out = []
        qi = torch.arange(q0, q0 + c)[:, None]
        for limit in (LOCAL, MIDDLE):
            if causal:
                # no key after a query has weight, so query i's mass within `limit` is its
                # mass from key a = max(k0, q0 - limit) on, less what lies left of i - limit:
                # a triangle in the strip's first c columns. Two sums, no (c, c + limit) mask
                a = max(0, q0 - limit - k0)
                m = min(c, w - a)
                left = torch.arange(k0 + a, k0 + a + m)[None, :] < qi - limit  # (c, m)
                # rows first, then the chunk: the far band (c − mass) of a window shorter
                # than `limit` then stays exactly 0, as the old masked sum left it
                mass = probs[:, :, a:].sum(-1).sum(-1).double()
                if bool(left.any()):
                    mass -= (probs[:, :, a:a + m] * left).sum(-1).sum(-1).double()
                out.append(mass)
                continue
            dist = (qi - torch.arange(k0, k0 + w)[None, :]).abs_()
            out.append((probs * (dist <= limit)).sum(-1).sum(-1).double())
        local, near = out  # near: within MIDDLE, local included; rows add up to 1
        self.bands[heads, 0] += local.numpy()
        self.bands[heads, 1] += (near - local).numpy()
        self.bands[heads, 2] += c - near.numpy()

    def _pool(self, p: torch.Tensor, q0: int, q1: int, k0: int, k1: int,
              heads: slice) -> torch.Tensor:
        """Fold a chunk (H, c, w) into the pooled sums and maxima: rows first, then keys.
        Returns the row-pooled sums (H, query pixels, w)."""
        ka, kb, kseg = _local_starts(self.starts, k0, k1, self.p, self.n)
        qa, qb, qseg = _local_starts(self.starts, q0, q1, self.p, self.n)
        # rows first, as slices of whole contiguous rows (torch, one pass over the chunk); the
        # key pass then sees 1/(rows per pixel) of the cells. numpy's reduceat over the keys
        # made H·c·pixels tiny segments: 39 % of a GPT-2 layer at 2,048 tokens.
        qend = np.append(qseg[1:], q1 - q0)
        if len(set((qend - qseg).tolist())) == 1:  # pixels of equal height: a view
            rows = p.view(p.size(0), len(qseg), -1, p.size(2))
            row_sum, row_max = rows.sum(2), rows.amax(2)
        else:
            row_sum = torch.stack([p[:, a:b].sum(1) for a, b in zip(qseg, qend)], 1)
            row_max = torch.stack([p[:, a:b].amax(1) for a, b in zip(qseg, qend)], 1)
        width = np.diff(np.append(kseg, k1 - k0))
        whole = np.flatnonzero(width == width.max())
        if whole[-1] - whole[0] + 1 == len(whole) and whole[0] <= 1 \
                and whole[-1] >= len(width) - 2:
            # pixels of one width, save a cut one at either end (a chunk's keys start or stop
            # inside a pixel): the whole ones as a view, the cut ones alone. At 32,768 tokens
            # (64 keys a pixel, 16-row chunks) the gather below took 0.7 of a chunk's 4 ms
            i0, i1 = int(whole[0]), int(whole[-1]) + 1
            a, b = int(kseg[i0]), int(kseg[i0]) + (i1 - i0) * int(width.max())
            sums = [row_sum[..., a:b].unflatten(-1, (i1 - i0, -1)).sum(-1)]
            maxes = [row_max[..., a:b].unflatten(-1, (i1 - i0, -1)).amax(-1)]
            for lo, hi, at in ((0, a, 0), (b, k1 - k0, 1)):
                if lo < hi:
                    sums.insert(at * len(sums), row_sum[..., lo:hi].sum(-1, keepdim=True))
                    maxes.insert(at * len(maxes), row_max[..., lo:hi].amax(-1, keepdim=True))
            col_sum = sums[0] if len(sums) == 1 else torch.cat(sums, -1)
            col_max = maxes[0] if len(maxes) == 1 else torch.cat(maxes, -1)
            return self._fold(heads, qa, qb, ka, kb, col_sum, col_max, row_sum)
        # pixels of two widths (n not a multiple of P): every pixel gathered to the widest
        # pixel's width; a narrower (or cut) pixel repeats its first key, which the max
        # ignores and the sum weighs 0
        slot = np.arange(width.max())
        idx = torch.from_numpy(kseg[:, None] + np.where(slot < width[:, None], slot, 0))
        real = torch.from_numpy((slot < width[:, None]).astype(np.float32))  # (pixels, s)
        col_sum = (row_sum[..., idx] * real).sum(-1)  # (H, query pixels, key pixels)
        col_max = row_max[..., idx].amax(-1)
        return self._fold(heads, qa, qb, ka, kb, col_sum, col_max, row_sum)

    def _fold(self, heads: slice, qa: int, qb: int, ka: int, kb: int, col_sum: torch.Tensor,
              col_max: torch.Tensor, row_sum: torch.Tensor) -> torch.Tensor:
        """Add a chunk's (H', query pixels, key pixels) sums and maxima into the maps."""
        self.sum[heads, qa:qb, ka:kb] += col_sum.numpy()
        cell = self.max[heads, qa:qb, ka:kb]
        np.maximum(cell, col_max.numpy(), out=cell)
        return row_sum

    def pooled_mean(self) -> np.ndarray:
        """float32 (H, P, P): each pixel's mean over its cells (sums become means: once)."""
        size = np.diff(self.starts).astype(np.float64)
        self.sum /= (size[:, None] * size[None, :]).astype(np.float32)  # in place: no copy
        return self.sum

    def band_shares(self) -> np.ndarray:
        """float32 (H, 3): mean share of a query's attention at local, middle, far distance."""
        return (self.bands / self.n).astype(np.float32)
