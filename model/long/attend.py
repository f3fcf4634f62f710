"""Attention computed chunk by chunk over queries, each chunk's probabilities used twice.

Shape legend
    H  query heads      G  key/value heads (H = G · R, query head h reads kv head h // R)
    n  tokens           Dh head size        c  queries in a chunk      w  keys it reads

`attend` is what a model's attention call does in long mode: for each chunk of queries it
forms the scores over the keys that chunk may read (causal and sliding-window rows skip the
keys they cannot see), takes the softmax once, and hands the same probabilities to the
context (probs · V, the model's output) and to the layer's reducer (model/long/reduce.py).
No (n, n) matrix is ever held: a chunk is at most CHUNK_BYTES of probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .reduce import LayerReducer

# one chunk's probabilities. 8 MB, not 32: one GPT-2 layer (12 heads, 1 thread) with its
# reductions took 11.1 s, not 20.9, at 8,192 tokens and 1.57 s, not 1.98, at 2,048 (each
# pass over the chunk stays nearer the caches; 4 MB measured the same as 8)
CHUNK_BYTES = 8 << 20
MIN_ROWS = 64  # query rows per kv head a chunk keeps, when fewer heads share it (kv_per_chunk)
BLOCKED = -1e30  # a blocked score: exp() of it is 0, and 0 · it is 0 (not NaN as with -inf)


@dataclass(frozen=True)
class Rule:
    """How one layer scores and blocks: what block() needs to recompute any cell."""

    scaling: float
    causal: bool
    window: int | None = None  # sliding window: key j visible from query i when i - j < window
    softcap: float | None = None  # Gemma-style softcap · tanh(score / softcap)

    def keys(self, q0: int, q1: int, n: int) -> tuple[int, int]:
        """The key range [k0, k1) that queries q0..q1-1 may read."""
        k1 = q1 if self.causal else n
        k0 = max(0, q0 - self.window + 1) if self.window else 0
        return k0, k1

    def scores(self, q: torch.Tensor, k: torch.Tensor,
               out: torch.Tensor | None = None) -> torch.Tensor:
        """(G, R·c, Dh) · (G, w, Dh) -> float32 (G, R·c, w) scaled (and softcapped) scores,
        written into `out` (that shape) when given."""
        # scaling the (c, Dh) queries, not the (c, w) scores: one pass over the chunk fewer
        s = torch.matmul(q * self.scaling, k.transpose(1, 2), out=out)
        if self.softcap is not None:
            s.div_(self.softcap).tanh_().mul_(self.softcap)
        return s

    def block_mask(self, q0: int, q1: int, k0: int, k1: int) -> torch.Tensor | None:
        """bool (c, w), True = blocked, or None when nothing in the block is."""
        qi = torch.arange(q0, q1)[:, None]
        kj = torch.arange(k0, k1)[None, :]
        blocked = torch.zeros((q1 - q0, k1 - k0), dtype=torch.bool)
        if self.causal:
            blocked |= kj > qi
        if self.window:
            blocked |= qi - kj >= self.window
        return blocked if bool(blocked.any()) else None

    def strips(self, q0: int, q1: int, k0: int, k1: int
               ) -> list[tuple[int, int, torch.Tensor]]:
        """Where a chunk's blocked cells can be: (first column, last column + 1, bool (c, m)
        True = blocked) relative to k0. Causal cells are blocked only right of q0 and window
        cells only left of q1 - window, so masking these strips alone leaves the bulk of a
        long row untouched (a full-width mask and fill cost ~15 % of a capture)."""
        w = k1 - k0
        spans = []
        if self.causal:
            spans.append((max(0, q0 + 1 - k0), w))
        if self.window:
            spans.append((0, min(w, q1 - self.window - k0)))
        out = []
        for a, b in spans:
            if a < b:
                mask = self.block_mask(q0, q1, k0 + a, k0 + b)
                if mask is not None:
                    out.append((a, b, mask))
        return out


def chunk_size(n_heads: int, n: int) -> int:
    """Queries per chunk so that one chunk's probabilities fit CHUNK_BYTES (16..1,024)."""
    return int(max(16, min(1024, CHUNK_BYTES // (4 * n_heads * max(n, 1)))))


def kv_per_chunk(h: int, g: int, n: int) -> int:
    """Key/value heads whose query heads share a chunk: all of them while a chunk still holds
    MIN_ROWS query rows per kv head, fewer on long texts. With every head at once, 8,192
    tokens left 16 queries a chunk, and score and context products of 16 rows ran at about
    half the speed of 64-row ones (GPT-2 shape, 1 thread)."""
    r = h // g
    return int(max(1, min(g, CHUNK_BYTES // (4 * r * max(n, 1) * max(1, MIN_ROWS // r)))))


def grouped(x: torch.Tensor, groups: int) -> torch.Tensor:
    """(H, c, Dh) -> (G, R·c, Dh): query heads next to the key/value head they read."""
    h, c, d = x.shape
    return x.reshape(groups, (h // groups) * c, d)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rule: Rule,
           reducer: LayerReducer | None) -> torch.Tensor:
    """q (H, n, Dh), k/v (G, n, Dh), float32 -> context (H, n, Dh), reducing as it goes.
    The context is a view of an (n, H, Dh) array, the layout a model's attention returns, so
    that handing it back (transpose(0, 1)) copies nothing: 134 MB fewer at 32,768 tokens
    with 16 heads of 64."""
    h, n, _ = q.shape
    g = k.size(0)
    r = h // g
    out = torch.empty((n, h, v.size(-1)), dtype=v.dtype).transpose(0, 1)
    per = kv_per_chunk(h, g, n)
    for g0 in range(0, g, per):
        g1 = min(g, g0 + per)
        h0, h1 = g0 * r, g1 * r  # the query heads that read kv heads g0..g1-1
        _attend_heads(q[h0:h1], k[g0:g1], v[g0:g1], rule, reducer, out[h0:h1], h0)
    return out


def _attend_heads(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rule: Rule,
                  reducer: LayerReducer | None, out: torch.Tensor, h0: int) -> None:
    """attend() for the query heads h0.. and their kv heads; writes into out (H', n, Dh)."""
    h, n, _ = q.shape
    g = k.size(0)
    heads = slice(h0, h0 + h)
    step = chunk_size(h, n) if reducer is None else reducer.aligned(chunk_size(h, n))
    # the scores and probabilities of every chunk go into the same two buffers: a fresh
    # 8 MB tensor a chunk is fresh pages to fault in each time, and the server has glibc
    # map every block of 1 MB or more anew (model/heap.py). One Llama-shape layer at 8,192
    # tokens, 1 thread, six alternating rounds (with top_indices' smaller index): median
    # 10.5 -> 6.6 s with the server's setting, 7.1 -> 6.3 s without
    widest = max(k1 - k0 for k0, k1 in (rule.keys(q0, min(n, q0 + step), n)
                                          for q0 in range(0, n, step)))
    buffers = torch.empty((2, h * step * widest), dtype=torch.float32)
    for q0 in range(0, n, step):
        q1 = min(n, q0 + step)
        k0, k1 = rule.keys(q0, q1, n)
        c, w = q1 - q0, k1 - k0
        s_buf, p_buf = buffers[:, :h * c * w].view(2, g, -1, w)
        s = rule.scores(grouped(q[:, q0:q1], g), k[:, k0:k1], out=s_buf).view(h, c, w)
        for a, b, blocked in rule.strips(q0, q1, k0, k1):
            # finite: a blocked cell's weight is exactly 0, and p·s stays 0
            s[..., a:b].masked_fill_(blocked, BLOCKED)
        top = s.amax(-1, keepdim=True)  # every row sees at least its own key
        s.sub_(top)  # shifted in place, then exp() reads it once and writes p once (a
        p = torch.exp(s, out=p_buf.view(h, c, w))  # subtraction into p and exp_() on it
        # passed over the chunk twice)
        z = p.sum(-1, keepdim=True)
        p.div_(z)  # the probabilities: computed once, used for the output and the reducer
        ctx = torch.matmul(p.view(g, -1, w), v[:, k0:k1])  # (G, R·c, Dh)
        out[:, q0:q1] = ctx.view(h, c, -1)
        if reducer is not None:
            log_z = z.log().squeeze(-1)
            reducer.add(p, s, top.squeeze(-1) + log_z, q0, k0, rule.causal, log_z=log_z,
                        heads=heads)
