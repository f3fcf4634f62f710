"""Heavy-hitter cache eviction (H2O, Zhang et al. 2023) per layer and query head.

Once the cache holds `budget` keys, each new piece makes room by evicting, for good, the old key
with the least attention accumulated so far; the `budget // 2` most recent positions are never
evicted. The accumulated attention is what the queries before read *under the policy itself*,
so the keep mask of a text is found by stepping through it one piece per forward through the
model's own cache (`Backend.stepped`), each layer's `hook_scores` masking with the keys held
and its `hook_probs` adding what the query read. The mask is then a plain attention mask: a
teacher-forced forward with it gives the same logits (tests/unit/test_kv_cache.py).

With grouped key/value heads a real cache would have to keep the union over a group's query
heads; here each query head keeps its own.

Shape legend
    L  layers   H  query heads   n  pieces
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import torch

from ..backends import backend_for
from ..checkpoint import Bundle
from ..decode import checked_heads
from ..hooks import Head, ablation_hooks, attn_prefix, hooks


class HeavyHitters:
    """The keys held per (layer, head) while queries arrive one at a time."""

    def __init__(self, layers: int, heads: int, n: int, budget: int) -> None:
        self.budget, self.recent = budget, max(1, budget // 2)
        self.held = np.zeros((layers, heads, n), bool)
        self.acc = np.zeros((layers, heads, n), np.float64)  # attention each key received
        self.keep = np.zeros((layers, heads, n, n), bool)

    def admit(self, layer: int, i: int) -> np.ndarray:
        """Query i arrives at `layer`: hold it, evict one old key if over budget; returns the
        keys it may read, bool (H, n)."""
        held = self.held[layer]
        held[:, i] = True
        if i + 1 > self.budget:
            old = held.copy()
            old[:, max(0, i - self.recent + 1):] = False
            drop = np.where(old, self.acc[layer], np.inf).argmin(axis=1)  # (H,)
            held[np.arange(held.shape[0]), drop] = False
        self.keep[layer, :, i] = held
        return held

    def read(self, layer: int, probs: np.ndarray) -> None:
        """What the query read (H, positions so far), added to the keys' scores."""
        self.acc[layer, :, : probs.shape[-1]] += probs


def heavy_mask(attn: np.ndarray, budget: int) -> np.ndarray:
    """bool (L, H, n, n) for attention given beforehand (L, H, n, n), each query's row read
    after its keys are chosen: the rule on a fixed attention (hand-made cases, tests)."""
    n_l, n_h, n, _ = attn.shape
    hh = HeavyHitters(n_l, n_h, n, budget)
    for i in range(n):
        for layer in range(n_l):
            hh.admit(layer, i)
            hh.read(layer, attn[layer, :, i, : i + 1])
    return hh.keep


def heavy_keep(bundle: Bundle, ids: Sequence[int], budget: int,
               ablate: Iterable[Head] | str = ()) -> np.ndarray:
    """bool (L, H, n, n): the heavy-hitter keep mask of `ids`, found by stepping through the
    cache with the policy in force (see the module's docstring)."""
    backend = backend_for(bundle)
    layers, n = bundle.n_layers("dec_self"), len(ids)
    hh = HeavyHitters(layers, bundle.config.n_heads, n, int(budget))
    step = [0] * layers

    def scores(layer: int):
        def fn(x: torch.Tensor, name: str) -> torch.Tensor:  # (1, H, 1, i + 1)
            i = step[layer]
            held = torch.from_numpy(hh.admit(layer, i)[:, : i + 1]).to(x.device)
            return x.masked_fill(~held[None, :, None, :], torch.finfo(x.dtype).min)
        return fn

    def probs(layer: int):
        def fn(x: torch.Tensor, name: str) -> None:  # (1, H, 1, i + 1)
            hh.read(layer, x[0, :, -1].to("cpu", torch.float64).numpy())
            step[layer] += 1
        return fn

    fns = {}
    for i in range(layers):
        fns[f"{attn_prefix('dec_self', i)}.hook_scores"] = scores(i)
        fns[f"{attn_prefix('dec_self', i)}.hook_probs"] = probs(i)
    with hooks(ablation_hooks(checked_heads(bundle, ablate))), hooks(fns):
        backend.stepped(list(ids))
    return hh.keep
