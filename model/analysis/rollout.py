"""Attention rollout (Abnar & Zuidema, 2020): how much of each output traces back to each input.

Shape legend
    L  layers    B  sentences    H  heads    S  source positions    T  target positions
"""

from __future__ import annotations

import numpy as np

from ..capture import Trace, query_side


def _mean_heads(trace: Trace, kind: str, layer: int, b: int, n_q: int, n_k: int) -> np.ndarray:
    """Layer's attention averaged over heads for sentence b, unpadded: (n_q, n_k) float64."""
    return trace.attn[kind][layer, b, :, :n_q, :n_k].astype(np.float64).mean(0)


def _rows_to_one(a: np.ndarray) -> np.ndarray:
    total = a.sum(-1, keepdims=True)
    return np.divide(a, total, out=np.zeros_like(a), where=total > 0)


def _mixed(a: np.ndarray, residual: bool) -> np.ndarray:
    """0.5·A + 0.5·I (the residual stream) if asked, rows renormalised."""
    if residual:
        a = 0.5 * a + 0.5 * np.eye(a.shape[0])
    return _rows_to_one(a)


def rollout(trace: Trace, b: int, kind: str = "enc_self", residual: bool = True) -> np.ndarray:
    """Attention rollout of a self-attention stack for sentence b: (n, n), rows sum to 1.

    Per layer l: A_l = mean over heads, A'_l = 0.5·A_l + 0.5·I if residual, rows renormalised;
    R = A'_L ··· A'_2 · A'_1 over the unpadded tokens. R[i, j] = how much of output token i
    traces back to input token j.
    """
    if kind not in ("enc_self", "dec_self"):
        raise ValueError(f"rollout needs a self-attention kind, got {kind!r}; "
                         "use cross_rollout for the decoder → source view")
    if kind not in trace.attn:
        raise ValueError(f"the trace has no {kind!r} attention")
    n = trace.length(query_side(kind), b)
    r = np.eye(n)
    for layer in range(trace.attn[kind].shape[0]):
        r = _mixed(_mean_heads(trace, kind, layer, b, n, n), residual) @ r
    return r


def cross_rollout(trace: Trace, b: int, residual: bool = True) -> np.ndarray:
    """Decoder → source rollout for sentence b: (T, S), rows sum to 1.

    Layer by layer, each decoder position t is tracked as a mixture of decoder inputs D (T, T)
    and source tokens X (T, S), starting from D = I, X = 0; rows of [D | X] always sum to 1.
    In decoder layer l, with heads averaged:
      self-attention   A'_l = 0.5·A_l + 0.5·I (residual), rows renormalised:
                       D ← A'_l D,  X ← A'_l X
      cross attention  C_l (T, S) attends to the encoder output, whose tokens are the mixture
                       R_enc = rollout(trace, b, "enc_self") of source tokens:
                       D ← 0.5·D,  X ← 0.5·X + 0.5·C_l R_enc   (without residual: D ← 0,
                       X ← C_l R_enc)
    The result is X with rows renormalised: the share of each source token in what position t
    took from the source.
    """
    for kind in ("dec_self", "cross", "enc_self"):
        if kind not in trace.attn:
            raise ValueError(f"cross_rollout needs {kind!r} attention in the trace")
    n_t, n_s = trace.length("tgt", b), trace.length("src", b)
    r_enc = rollout(trace, b, "enc_self", residual)
    d, x = np.eye(n_t), np.zeros((n_t, n_s))
    keep = 0.5 if residual else 0.0
    for layer in range(trace.attn["dec_self"].shape[0]):
        a = _mixed(_mean_heads(trace, "dec_self", layer, b, n_t, n_t), residual)
        d, x = a @ d, a @ x
        c = _rows_to_one(_mean_heads(trace, "cross", layer, b, n_t, n_s))
        d, x = keep * d, keep * x + (1.0 - keep) * (c @ r_enc)
    return _rows_to_one(x)


def pooled_rollout(r: np.ndarray, pooling: str) -> np.ndarray | None:
    """Where a pooled sentence vector's information comes from: (n,), sums to 1; None for a
    model that pools nothing (or pools in a way rollout cannot follow, such as "max").

    r is rollout()'s (n, n) map over the unpadded pieces. Mean pooling averages every real
    piece's last vector, and a mean is linear, so the pooled vector is made of the rows'
    mean (each piece weighted 1/n); "cls" pooling takes the first piece's vector, row 0.
    """
    r = np.asarray(r, dtype=np.float64)
    if r.ndim != 2 or r.shape[0] == 0:
        raise ValueError(f"a rollout map of shape {r.shape} has no rows to pool")
    if pooling == "mean":
        return r.mean(axis=0)
    if pooling == "cls":
        return r[0].copy()
    return None
