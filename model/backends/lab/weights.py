"""One attention block's weights of the lab's own Transformer, as numpy (the steps view)."""

from __future__ import annotations

import numpy as np

from ...hooks import attn_prefix


def head_weights(bundle, kind: str, layer: int) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O as (D, D) in the x @ W convention, and biases b_Q … b_O as (D,).

    Q = X @ W_Q + b_Q, then head h is columns h·Dh … (h+1)·Dh; the block's output is
    concat(heads) @ W_O + b_O. Arrays are float32 copies: nothing points into the model.
    """
    if kind not in bundle.kinds:
        raise ValueError(f"no attention kind {kind!r} here; this model has {bundle.kinds}")
    if not 0 <= layer < bundle.n_layers(kind):
        raise ValueError(f"{kind} has layers 0..{bundle.n_layers(kind) - 1}, not {layer}")
    block = bundle.model.get_submodule(attn_prefix(kind, layer))
    out: dict[str, np.ndarray] = {}
    for name, linear in (("Q", block.w_q), ("K", block.w_k), ("V", block.w_v), ("O", block.w_o)):
        weight = linear.weight.detach().to("cpu").float().numpy()  # (out, in): y = x Wᵀ + b
        out[f"W_{name}"] = np.ascontiguousarray(weight.T).copy()
        bias = linear.bias
        out[f"b_{name}"] = (bias.detach().to("cpu").float().numpy().copy() if bias is not None
                            else np.zeros(weight.shape[0], np.float32))
    return out
