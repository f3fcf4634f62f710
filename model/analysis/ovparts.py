"""What one head writes, component by component (issue 37): the output–value side of
qk_components.

The head's output at a query is Σ_k α_k · v_k · W_O (α its recorded attention over the keys,
v_k the value at key k). With every norm frozen at its actual scale each v_k is a sum of one
vector per upstream component of the key's stream (the same names as qk_components: token
embedding, position, earlier heads, earlier MLPs, "bias" with b_V), so the output splits:

    writes[c]       = Σ_k α_k · v_k[c] · W_O            (D,) per component
    writes.sum(0)  == output                            (the recorded α · v · W_O, within 1e-4)
    share[c, k]     = (α_k · v_k[c] · W_O) · output / ‖output‖²   (all cells add up to 1)

The direct effect on the logits carries the output to the logits at the query with every
later norm frozen at its actual scale (as the logit lens and the head contributions do):
Backend.direct_logits. Models whose head writes reach no logits (encoder heads, encoder-only
models) get `logits` None and the reason.

Shape legend: n_c components, n_k keys read (α > 0), D model size, Dh head size, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends import backend_for
from ..capture import Trace, key_side, query_side
from .lens import piece_name

TOP = 10  # promoted / suppressed tokens kept


@dataclass(frozen=True)
class OVComponents:
    """One head's output at one query split over upstream components of its keys."""

    parts: list[str]  # component names, "bias" last
    keys: list[int]  # key positions the head reads (α > 0)
    weights: np.ndarray  # float64 (n_k,) the head's attention on those keys
    writes: np.ndarray  # float64 (n_c, D): each component's share of the output
    share: np.ndarray  # float64 (n_c, n_k): projection of each cell on the output, sums to 1
    output: np.ndarray  # float64 (D,): the recorded α · v · W_O
    logits: np.ndarray | None  # float64 (V,): the output's direct effect on the logits
    promoted: list[tuple[str, float]]  # top pieces the output raises, largest first
    suppressed: list[tuple[str, float]]  # top pieces it lowers, most lowered first
    no_logits: str  # why logits is None ("" when it is not)

    def top(self, n: int = 5) -> list[tuple[str, int, float]]:
        """The n largest (component, key position, share) cells by size."""
        flat = np.argsort(-np.abs(self.share), axis=None)[:n]
        rows, cols = np.unravel_index(flat, self.share.shape)
        return [(self.parts[i], self.keys[j], float(self.share[i, j]))
                for i, j in zip(rows, cols, strict=True)]


def _check(trace: Trace, kind: str, layer: int, head: int, query: int, batch: int) -> None:
    if kind not in trace.attn or kind not in trace.v:
        raise ValueError(f"this Trace holds no {kind} attention and values")
    n_l, n_b, n_h = trace.attn[kind].shape[:3]
    for name, value, top in (("layer", layer, n_l), ("sentence", batch, n_b),
                             ("head", head, n_h)):
        if not 0 <= int(value) < top:
            raise ValueError(f"{name} must be between 0 and {top - 1}, not {value}")
    n_q = trace.length(query_side(kind), batch)
    if not 0 <= int(query) < n_q:
        raise ValueError(f"query must be between 0 and {n_q - 1}, not {query}")


def _values(trace: Trace, kind: str, layer: int, head: int, batch: int) -> np.ndarray:
    """(n, Dh) the values this head reads (its key/value head's, with grouped kv heads)."""
    v = trace.v[kind][layer, batch]  # (H or G, n, Dh)
    if v.shape[0] != trace.attn[kind].shape[2] and trace.kv_groups is not None:
        return v[int(np.asarray(trace.kv_groups)[head])].astype(np.float64)
    return v[head].astype(np.float64)


def ov_components(bundle, trace: Trace, kind: str, layer: int, head: int, query: int,
                  batch: int = 0, top: int = TOP) -> OVComponents:
    """OVComponents of head (kind, layer, head) at `query` (module docstring); ValueError
    where the address is out of range or the backend cannot split this model's stream."""
    _check(trace, kind, layer, head, query, batch)
    backend = backend_for(bundle)
    n_k = trace.length(key_side(kind), batch)
    alpha = trace.attn[kind][layer, batch, head, query, :n_k].astype(np.float64)
    keys = [int(k) for k in np.nonzero(alpha > 0)[0]]
    w_o = backend.circuit_weights(kind, layer)["W_O"][head]  # (Dh, D)
    output = (alpha[keys] @ _values(trace, kind, layer, head, batch)[keys]) @ w_o
    got = backend.ov_parts(trace, kind, layer, head, keys, batch)
    parts = [p for p in got if p != "bias"] + ["bias"]
    zero = np.zeros((len(keys), w_o.shape[0]))
    vals = np.stack([np.asarray(got.get(p, zero), np.float64) for p in parts])  # (n_c, n_k, Dh)
    cells = np.einsum("k,ckd,de->cke", alpha[keys], vals, w_o)  # (n_c, n_k, D)
    writes = cells.sum(axis=1)
    norm2 = float(output @ output) or 1.0
    share = cells @ output / norm2
    logits = None
    promoted: list[tuple[str, float]] = []
    suppressed: list[tuple[str, float]] = []
    reason = ""
    try:
        logits = np.asarray(backend.direct_logits(trace, kind, layer, query, output, batch),
                            np.float64)
    except ValueError as err:
        reason = str(err)
    if logits is not None:
        vocab = backend.vocabulary()
        order = np.argsort(-logits)
        promoted = [(piece_name(vocab, int(i)), float(logits[i])) for i in order[:top]]
        suppressed = [(piece_name(vocab, int(i)), float(logits[i])) for i in order[::-1][:top]]
    return OVComponents(parts, keys, alpha[keys], writes, share, output, logits, promoted,
                        suppressed, reason)
