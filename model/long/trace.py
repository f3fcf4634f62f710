"""LongTrace: every head's attention over a long text, held in O(L·H·n) memory.

Shape legend
    L  layers of one kind    H  query heads    G  key/value heads    n  tokens
    P  pixels per side       k  top keys per query        Dh  head size

pooled[kind]          {"mean", "max"}: float32 [L,H,P,P], each pixel's cells' mean / max
stats[kind][name]     float32 [L,H,n]; per query: entropy, first, special, previous,
                      mean_distance, max_distance; per key: received (Σ over queries)
top[kind]             {"keys": uint16, "weights": float32} [L,H,n,k]: each query's strongest
summary[kind]         "bands" [L,H,3]: mean share at local / middle / far distance; "sink"
                      [L,H]: mean share on position 0; "sink_key", "sink_share" [L,H]: the
                      key receiving most and its mean share
positional(kind)      share [L,H] of queries whose strongest key is at the head's usual
                      distance, and that distance [L,H]
block(kind, layer, head, q0, q1, k0, k1)   float32 [q1-q0, k1-k0]: exact probabilities,
                      recomputed from the kept Q, K and each query's log-sum-exp (Q and K
                      in memory, or on disk when qk_store is "disk": spill.py)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .attend import Rule, grouped
from .reduce import PER_QUERY, LayerReducer
from .spill import OnDisk, QKFile

MAX_BLOCK = 1024  # block() answers up to 1,024 × 1,024 cells at once


@dataclass
class Kept:
    """One layer's queries and keys after positions were applied, and how it scores."""

    q: torch.Tensor | OnDisk  # (H, n, Dh) float32 or float16, or float32 on disk (spill.py)
    k: torch.Tensor | OnDisk  # (G, n, Dh)
    rule: Rule
    lse: np.ndarray  # float32 (H, n): log-sum-exp of each query's visible scores


@dataclass
class LongTrace:
    """The long capture of one text (see the table above)."""

    tokens: list[str]
    ids: np.ndarray  # int64 (n,)
    pixels: int
    qk_dtype: str  # "float32": block() exact; "float16": within about 1e-3
    qk_store: str = "memory"  # "disk": Q and K in an unlinked temporary file (spill.py)
    pooled: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    stats: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    top: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    summary: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    kv_groups: np.ndarray | None = None  # int (H,)
    kept: dict[str, list[Kept]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.ids)

    @property
    def kinds(self) -> list[str]:
        """Attention kinds captured (self-attention only: one text)."""
        return list(self.pooled)

    def shape(self, kind: str) -> tuple[int, int]:
        """(layers, heads) of one kind."""
        return self.pooled[kind]["mean"].shape[:2]

    def block(self, kind: str, layer: int, head: int, q0: int, q1: int, k0: int,
              k1: int) -> np.ndarray:
        """float32 (q1-q0, k1-k0): the exact probabilities of that block (blocked cells 0)."""
        n = self.n
        if not (0 <= q0 < q1 <= n and 0 <= k0 < k1 <= n):
            raise ValueError(f"block {q0}:{q1} × {k0}:{k1} is outside 0..{n}")
        if q1 - q0 > MAX_BLOCK or k1 - k0 > MAX_BLOCK:
            raise ValueError(f"a block is at most {MAX_BLOCK} × {MAX_BLOCK} cells")
        kept = self.kept[kind][layer]
        groups = kept.k.size(0)
        g = head // (kept.q.size(0) // groups)
        q, k = _rows(kept.q, head, q0, q1), _rows(kept.k, g, k0, k1)
        s = kept.rule.scores(grouped(q, 1), k)[0]  # (c, w)
        s.sub_(torch.from_numpy(kept.lse[head, q0:q1])[:, None]).exp_()
        blocked = kept.rule.block_mask(q0, q1, k0, k1)
        if blocked is not None:
            s.masked_fill_(blocked, 0.0)
        return s.numpy()

    def positional(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """Heads that attend by position: for each (layer, head), the distance most queries'
        strongest key lies at, and the share of queries whose strongest key lies there
        (float32 [L, H], int [L, H]). 1.0 at distance 1 is a previous-piece head; a sink on
        the first piece is not positional (its distance grows with the query)."""
        keys = self.top[kind]["keys"][..., 0].astype(np.int64)  # (L, H, n): each argmax
        offset = np.arange(self.n) - keys  # ≥ 0 for causal heads; shifted below otherwise
        flat = (offset + self.n - 1).reshape(-1, self.n)  # 0..2n-2 per head
        share = np.empty(len(flat), np.float32)
        best = np.empty(len(flat), np.int64)
        for i, row in enumerate(flat):
            counts = np.bincount(row, minlength=2 * self.n - 1)
            best[i] = int(counts.argmax())
            share[i] = counts[best[i]] / self.n
        shape = keys.shape[:2]
        return share.reshape(shape), (best - (self.n - 1)).reshape(shape)

    def nbytes(self) -> int:
        """Bytes held in memory (maps, statistics, queries and keys unless on disk)."""
        total = sum(a.nbytes for d in (self.pooled, self.stats, self.top, self.summary)
                    for part in d.values() for a in part.values())
        for layers in self.kept.values():
            for kept in layers:
                total += kept.lse.nbytes + sum(t.nbytes for t in (kept.q, kept.k)
                                               if isinstance(t, torch.Tensor))
        return int(total)

    def disk_bytes(self) -> int:
        """Bytes of queries and keys written to disk (0 when they are in memory)."""
        return int(sum(t.shape[0] * t.shape[1] * t.shape[2] * 4 for layers in self.kept.values()
                       for kept in layers for t in (kept.q, kept.k) if isinstance(t, OnDisk)))


class LongRecorder:
    """Collects each (kind, layer)'s reducer and kept Q/K while a backend runs the model."""

    def __init__(self, n: int, pixels: int, specials: np.ndarray, qk_dtype: str,
                 qk_store: str = "memory") -> None:
        self.n, self.pixels, self.specials = n, pixels, specials
        self.dtype = getattr(torch, qk_dtype)
        self.qk_dtype, self.qk_store = qk_dtype, qk_store
        if qk_store == "disk" and qk_dtype != "float32":
            raise ValueError("queries and keys go to disk in float32 only")
        self.file = QKFile() if qk_store == "disk" else None
        self.layers: dict[str, dict[int, tuple[LayerReducer, Kept]]] = {}

    def layer(self, kind: str, layer: int, q: torch.Tensor, k: torch.Tensor,
              rule: Rule) -> LayerReducer:
        """Start (kind, layer): keep q (H, n, Dh) and k (G, n, Dh); return its reducer."""
        reducer = LayerReducer(q.size(0), self.n, self.pixels, self.specials)
        if self.file is not None:  # written now: the layer's q and k are freed after it runs
            kept = Kept(self.file.put(q), self.file.put(k), rule, reducer.lse)
        else:
            kept = Kept(q.detach().to(self.dtype, copy=True),
                        k.detach().to(self.dtype, copy=True), rule, reducer.lse)
        self.layers.setdefault(kind, {})[layer] = (reducer, kept)
        return reducer

    def finish(self, tokens: list[str], ids: np.ndarray, kv_groups: np.ndarray) -> LongTrace:
        """Stack every layer's reductions into a LongTrace."""
        out = LongTrace(tokens=tokens, ids=ids, pixels=min(self.pixels, self.n),
                        qk_dtype=self.qk_dtype, qk_store=self.qk_store, kv_groups=kv_groups)
        for kind, by_layer in self.layers.items():
            reds = [by_layer[i][0] for i in sorted(by_layer)]
            out.kept[kind] = [by_layer[i][1] for i in sorted(by_layer)]
            for r in reds:
                r.pooled_mean()  # sums become means, in place
            out.pooled[kind] = {"mean": _moved(reds, "sum"), "max": _moved(reds, "max")}
            out.stats[kind] = {name: _moved(reds, "stats", name) for name in PER_KEY_STATS}
            out.top[kind] = {"keys": _moved(reds, "top_keys"),
                             "weights": _moved(reds, "top_weights")}
            received = out.stats[kind]["received"]  # (L, H, n)
            out.summary[kind] = {
                "bands": np.stack([r.band_shares() for r in reds]),
                "sink": out.stats[kind]["first"].mean(-1),
                "sink_key": received.argmax(-1),
                "sink_share": received.max(-1) / self.n,
            }
        return out


PER_KEY_STATS = (*PER_QUERY, "received")


def _rows(x: torch.Tensor | OnDisk, head: int, r0: int, r1: int) -> torch.Tensor:
    """float32 (1, r1-r0, Dh): one head's rows r0..r1-1, from memory or from disk."""
    if isinstance(x, OnDisk):
        return x.rows(head, r0, r1)
    return x[head:head + 1, r0:r1].float()


def _moved(reds: list[LayerReducer], attr: str, key: str | None = None) -> np.ndarray:
    """Each reducer's array (attr, or attr[key]) stacked into one (L, ...) array, each layer's
    own released as soon as it is copied: np.stack held every layer twice at the end of a
    capture (the pooled maps alone are 2·L·H·P² floats: 537 MB for 16 × 16 heads at P = 512)."""
    def take(r: LayerReducer) -> np.ndarray:
        if key is None:
            a = getattr(r, attr)
            setattr(r, attr, None)
        else:
            a = getattr(r, attr).pop(key)
        return a

    first = take(reds[0])
    out = np.empty((len(reds), *first.shape), first.dtype)
    out[0] = first
    del first
    for i, r in enumerate(reds[1:], 1):
        out[i] = take(r)
    return out
