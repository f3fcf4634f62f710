"""The rest of a Hugging Face layer beside its attention: the two norms and the FFN, read from
the parameters (float64), so the tour can compute steps 14 and 15 from the weights.

Each layout's block is found from its attention output projection (projections.py) up to the
stack's entry (the module path's last number); inside it, by architecture:

    BERT/RoBERTa      attention.output.LayerNorm (post), intermediate.dense, its
                      intermediate_act_fn, output.dense, output.LayerNorm (post)
    DistilBERT        sa_layer_norm (post), ffn.lin1, ffn.activation, ffn.lin2,
                      output_layer_norm (post)
    GPT-2             ln_1 (pre, before attention), mlp.c_fc, mlp.act, mlp.c_proj, ln_2 (pre,
                      before the FFN)
    BART/Marian       self_attn_layer_norm, fc1, activation_fn, fc2, final_layer_norm (post or
                      pre, as the model's norm placement says)

Gated FFNs (Llama's gate/up/down) and RMSNorm (T5, Llama) are not one Linear–activation–Linear
with a LayerNorm: they raise ValueError, and the tour says it cannot rebuild them.

Shape legend: D model width, F the FFN's width.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .capabilities import hf_capabilities
from .projections import projection_modules, projection_weight

# (norm after/before attention, FFN in, activation, FFN out, norm after/before the FFN)
LAYOUTS = (
    ("attention.output.LayerNorm", "intermediate.dense", "intermediate.intermediate_act_fn",
     "output.dense", "output.LayerNorm"),
    ("sa_layer_norm", "ffn.lin1", "ffn.activation", "ffn.lin2", "output_layer_norm"),
    ("ln_1", "mlp.c_fc", "mlp.act", "mlp.c_proj", "ln_2"),
    ("self_attn_layer_norm", "fc1", "activation_fn", "fc2", "final_layer_norm"),
)


def _attr(module: Any, path: str) -> Any:
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def _norm(module: Any) -> dict[str, Any]:
    if not isinstance(module, torch.nn.LayerNorm):
        raise ValueError(f"{type(module).__name__} is not a LayerNorm (RMSNorm and others are "
                         "not rebuilt here)")
    gamma = module.weight.detach().double().cpu().numpy()
    beta = (module.bias.detach().double().cpu().numpy() if module.bias is not None
            else np.zeros_like(gamma))
    return {"gamma": gamma, "beta": beta, "eps": float(module.eps)}


def _linear(module: Any) -> tuple[np.ndarray, np.ndarray]:
    """(W (in, out), b (out,)) in the x @ W + b form, float64."""
    w, b = projection_weight(module)
    w = w.astype(np.float64).T
    return w, np.zeros(w.shape[1]) if b is None else b.astype(np.float64)


def _activation(fn: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The model's own activation (its module or function) on float64 numpy arrays."""
    def apply(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return fn(torch.from_numpy(np.asarray(x, np.float64))).numpy()
    return apply


def block_weights(bundle, kind: str, layer: int) -> dict[str, Any]:
    """Backend.block_weights for a Hugging Face bundle: {"norm": "post"|"pre", "ln_attn" and
    "ln_ffn": {gamma, beta, eps} (post: after each residual add; pre: before the attention
    and before the FFN), "W_in" (D, F), "b_in" (F,), "W_out" (F, D), "b_out" (D,),
    "activation": its name from the config, "act": the model's own function on numpy}."""
    if kind not in bundle.kinds:
        raise ValueError(f"no attention kind {kind!r} here; this model has {bundle.kinds}")
    if kind == "cross":
        raise ValueError("the block walk follows a self-attention layer")
    if not 0 <= layer < bundle.n_layers(kind):
        raise ValueError(f"{kind} has layers 0..{bundle.n_layers(kind) - 1}, not {layer}")
    model = bundle.model
    mods = projection_modules(model, bundle.config.family).get(kind)
    if not mods or len(mods) != bundle.n_layers(kind):
        raise ValueError(f"no per-layer weights for this model's {kind} layout")
    named = {m: n for n, m in model.named_modules()}
    path = named[mods[layer]].split(".")
    at = max(i for i, p in enumerate(path) if p.isdigit())  # the block: the stack's entry
    block = model.get_submodule(".".join(path[: at + 1]))
    for ln_attn, fc_in, act, fc_out, ln_ffn in LAYOUTS:
        parts = [_attr(block, p) for p in (ln_attn, fc_in, act, fc_out, ln_ffn)]
        if all(p is not None for p in parts):
            break
    else:
        raise ValueError(f"{type(block).__name__}: no Linear–activation–Linear FFN with two "
                         "LayerNorms found (a gated FFN or RMSNorm is not rebuilt here)")
    w_in, b_in = _linear(parts[1])
    w_out, b_out = _linear(parts[3])
    hf = bundle.config.hf
    name = str(getattr(hf, "hidden_act", None) or getattr(hf, "activation_function", None)
               or getattr(hf, "activation", None) or "")
    return {"norm": hf_capabilities(bundle).norm, "ln_attn": _norm(parts[0]),
            "ln_ffn": _norm(parts[4]), "W_in": w_in, "b_in": b_in, "W_out": w_out,
            "b_out": b_out, "activation": name, "act": _activation(parts[2])}
