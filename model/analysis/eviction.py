"""Cache eviction what-ifs: what a decoder-only model would lose with a smaller key/value cache.

A policy is an attention mask over the positions, never a re-numbering: the kept keys keep the
positions (and rotary angles or position embeddings) they had in the full cache, so a query
reads exactly the keys a real evicting cache would still hold, at their original positions
(StreamingLLM, Xiao et al. 2024, re-numbers the positions inside its rolling cache; we do not).
Row i of a mask is what query i may read; True = kept. Every row keeps its own position.

    window   the last `budget` positions up to and including the query
    sinks    the first SINKS (4) positions plus the last budget − 4 (StreamingLLM)
    heavy    H2O (Zhang et al. 2023): the last budget // 2 positions plus the keys with the
             most accumulated attention, evicted greedily for good, one per step once the
             cache is full, per layer and query head, scored by what the queries read under
             the policy itself (model/analysis/heavy.py, stepping through the cache).
    no_sink  every position but the first (the budget plays no part; query 0 keeps itself)

`eviction(bundle, text, policy, budget)` re-scores `text` teacher-forced with every layer's
queries masked by the policy (through each layer's `hook_scores`, the recorder's hook point,
before the model's own causal mask) and returns the per-piece loss beside the full cache's.

Shape legend
    n  pieces of the text   L  layers   H  query heads
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..backends import backend_for
from ..checkpoint import Bundle
from ..decode import checked_heads
from ..hooks import Head, ablation_hooks, attn_prefix, hooks
from .heavy import heavy_keep, heavy_mask

POLICIES = ("window", "sinks", "heavy", "no_sink")
SINKS = 4  # StreamingLLM's four initial tokens


def least_budget(policy: str) -> int:
    """The smallest budget a policy can keep: a window of one, the sinks and one more, one
    recent key and one heavy hitter; no_sink has no budget."""
    return {"window": 1, "sinks": SINKS + 1, "heavy": 2, "no_sink": 0}[policy]


def _check(policy: str, budget: int) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown eviction policy {policy!r}; the policies are "
                         f"{', '.join(POLICIES)}")
    least = least_budget(policy)
    if int(budget) < least:
        raise ValueError(f"the {policy} policy needs a budget of at least {least} positions "
                         f"(got {budget})")


def window_mask(n: int, budget: int) -> np.ndarray:
    """bool (n, n): query i keeps positions max(0, i − budget + 1) … i."""
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return (j <= i) & (j > i - budget)


def sinks_mask(n: int, budget: int, sinks: int = SINKS) -> np.ndarray:
    """bool (n, n): the first `sinks` positions and the last budget − sinks, causally."""
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return window_mask(n, budget - sinks) | ((j < sinks) & (j <= i))


def no_sink_mask(n: int) -> np.ndarray:
    """bool (n, n): every earlier position but the first; query 0 keeps itself."""
    keep = np.tril(np.ones((n, n), bool))
    keep[1:, 0] = False
    return keep


def policy_mask(policy: str, n: int, budget: int, attn: np.ndarray | None = None
                ) -> np.ndarray:
    """The policy's keep mask: bool (n, n); for `heavy` (L, H, n, n) on attention given
    beforehand (L, H, n, n) (heavy.heavy_mask; a model's own is heavy.heavy_keep)."""
    _check(policy, budget)
    if policy == "window":
        return window_mask(n, budget)
    if policy == "sinks":
        return sinks_mask(n, budget)
    if policy == "no_sink":
        return no_sink_mask(n)
    if attn is None:
        raise ValueError("the heavy policy needs the attention its queries read")
    return heavy_mask(attn, budget)


@dataclass(frozen=True)
class Eviction:
    """Teacher-forced loss of a text under one policy, beside the full cache."""

    policy: str
    budget: int
    ids: list[int]
    loss: np.ndarray  # float64 (n − 1,): −log p(piece t + 1) with the policy
    full_loss: np.ndarray  # float64 (n − 1,): the same with the full cache
    top1: np.ndarray  # int64 (n − 1,): the most likely next piece with the policy
    full_top1: np.ndarray  # int64 (n − 1,): with the full cache

    def first_change(self, start: int = 0) -> int | None:
        """The first prediction at or after `start` whose top-1 piece differs; None if none."""
        diff = np.flatnonzero(self.top1[start:] != self.full_top1[start:])
        return int(diff[0]) + start if diff.size else None

    def agreement(self, start: int = 0) -> float:
        """Share of predictions from `start` on whose top-1 piece is the full cache's."""
        part = self.top1[start:] == self.full_top1[start:]
        return float(part.mean()) if part.size else 1.0


@dataclass(frozen=True)
class FullRun:
    """One teacher-forced forward with the whole cache: what every policy is compared to."""

    ids: list[int]
    loss: np.ndarray  # float64 (n − 1,)
    top1: np.ndarray  # int64 (n − 1,)


def _forward(bundle: Bundle, ids: Sequence[int], fns: dict, ablate: frozenset[Head]
             ) -> tuple[np.ndarray, np.ndarray]:
    """Per-piece loss and top-1 of one teacher-forced forward under the hooks fns."""
    backend = backend_for(bundle)
    device = next(bundle.model.parameters()).device
    x = torch.tensor([list(ids)], device=device)  # (1, n)
    with torch.inference_mode(), hooks(ablation_hooks(ablate)), hooks(fns):
        logits = backend.forward(None, None, x, torch.ones_like(x)).logits[0]  # (n, V)
    logp = torch.log_softmax(logits.double(), dim=-1)[:-1]  # (n − 1, V)
    nxt = torch.tensor(list(ids)[1:], device=logp.device)
    loss = -logp.gather(1, nxt[:, None])[:, 0]
    return loss.cpu().numpy(), logp.argmax(-1).cpu().numpy().astype(np.int64)


def pieces_of(bundle: Bundle, text: str) -> list[int]:
    """The text's ids as the model reads it (its own specials included), refused if empty."""
    batch = backend_for(bundle).encode([text], None, None)
    return list(batch.src_lists[0])


def heavy_bytes(bundle: Bundle, n: int) -> int:
    """What the heavy policy holds beyond the forward for n pieces: its keep mask, bool
    (L, H, n, n)."""
    return bundle.n_layers("dec_self") * bundle.config.n_heads * n * n


def full_run(bundle: Bundle, ids: Sequence[int], ablate: Iterable[Head] | str = ()) -> FullRun:
    """The full cache's loss and top-1 of `ids`."""
    if not backend_for(bundle).caps.generates:
        raise ValueError("cache eviction applies to decoder-only models, which keep a "
                         "key/value cache while they generate")
    if len(ids) < 2:
        raise ValueError("the text needs at least two pieces to score one")
    loss, top1 = _forward(bundle, ids, {}, checked_heads(bundle, ablate))
    return FullRun(list(ids), loss, top1)


def rescore(bundle: Bundle, full: FullRun, policy: str, budget: int,
            ablate: Iterable[Head] | str = ()) -> Eviction:
    """The text of `full` re-scored with each query reading only what the policy keeps."""
    n = len(full.ids)
    _check(policy, budget)
    keep = (heavy_keep(bundle, full.ids, int(budget), ablate) if policy == "heavy"
            else policy_mask(policy, n, int(budget)))
    layers = bundle.n_layers("dec_self")
    device = next(bundle.model.parameters()).device
    per_layer = [torch.from_numpy(keep[i] if keep.ndim == 4 else keep).to(device)
                 for i in range(layers)]  # (H, n, n) or (n, n)

    def block(layer: int):
        def fn(scores: torch.Tensor, name: str) -> torch.Tensor:  # (1, H, n, n)
            return scores.masked_fill(~per_layer[layer], torch.finfo(scores.dtype).min)
        return fn

    fns = {f"{attn_prefix('dec_self', i)}.hook_scores": block(i) for i in range(layers)}
    loss, top1 = _forward(bundle, full.ids, fns, checked_heads(bundle, ablate))
    return Eviction(policy, int(budget), list(full.ids), loss, full.loss, top1, full.top1)


def eviction(bundle: Bundle, text: str | Sequence[int], policy: str, budget: int, *,
             ablate: Iterable[Head] | str = ()) -> Eviction:
    """Per-piece loss of `text` itself (a string, or the model's ids), teacher-forced, each
    query seeing only what `policy` keeps within `budget` positions; with the full cache's."""
    _check(policy, budget)
    ids = pieces_of(bundle, text) if isinstance(text, str) else list(text)
    return rescore(bundle, full_run(bundle, ids, ablate), policy, budget, ablate)


def sweep(bundle: Bundle, ids: Sequence[int], budgets: Sequence[int], start: int = 0,
          policies: Sequence[str] = POLICIES, ablate: Iterable[Head] | str = ()
          ) -> dict[str, list[float | None]]:
    """Mean loss over predictions start … n − 2 per policy and budget (None where the budget
    is too small for the policy); one full run shared by all."""
    full = full_run(bundle, ids, ablate)
    out: dict[str, list[float | None]] = {}
    for policy in policies:
        row: list[float | None] = []
        for budget in budgets:
            try:
                _check(policy, budget)
            except ValueError:
                row.append(None)
                continue
            if policy == "no_sink" and row:  # the budget plays no part: one run is enough
                row.append(row[-1])
                continue
            row.append(float(rescore(bundle, full, policy, budget, ablate).loss[start:].mean()))
        out[policy] = row
    return out
