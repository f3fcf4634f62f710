"""Per-head W_Q, W_K, W_V, W_O of the lab's own Transformer, for circuit analyses
(model/analysis/composition.py): weights.head_weights split by head, float64.

Shape legend: D model size, H heads, Dh head size.

Pre-LN models read each attention block through its Sublayer's LayerNorm; cross-attention's
keys and values read the encoder's output after its final LayerNorm. Post-LN models normalise
after the residual add, so no norm sits between the stream and a head's projections.
"""

from __future__ import annotations

import numpy as np

from .weights import head_weights

_BLOCK = {"enc_self": "attn_block", "dec_self": "self_block", "cross": "cross_block"}


def circuit_weights(bundle, kind: str, layer: int) -> dict:
    """Backend.circuit_weights for the lab's model (see base.py)."""
    w = head_weights(bundle, kind, layer)  # checks kind and layer; (D, D) x @ W form
    cfg, model = bundle.config, bundle.model
    d, n_heads, dh = cfg.d_model, cfg.n_heads, cfg.d_head

    def heads(m: np.ndarray) -> np.ndarray:  # (D, H·Dh) -> (H, D, Dh)
        return m.astype(np.float64).reshape(d, n_heads, dh).transpose(1, 0, 2).copy()

    out = {"W_Q": heads(w["W_Q"]), "W_K": heads(w["W_K"]), "W_V": heads(w["W_V"]),
           "W_O": w["W_O"].astype(np.float64).reshape(n_heads, dh, d).copy(),
           "b_Q": w["b_Q"].astype(np.float64).reshape(n_heads, dh),
           "b_K": w["b_K"].astype(np.float64).reshape(n_heads, dh),
           "b_V": w["b_V"].astype(np.float64).reshape(n_heads, dh),
           "b_O": w["b_O"].astype(np.float64), "kv_groups": np.arange(n_heads)}
    if cfg.norm != "pre":
        out.update(norm_q=None, norm_k=None, norm_v=None, centred=False)
        return out
    stack = model.encoder if kind == "enc_self" else model.decoder
    norm = getattr(stack.layers[layer], _BLOCK[kind]).norm
    q = norm.weight.detach().double().cpu().numpy().copy()
    kv = q
    if kind == "cross":
        kv = model.encoder.final_norm.weight.detach().double().cpu().numpy().copy()
    out.update(norm_q=q, norm_k=kv, norm_v=kv, centred=True)
    return out
