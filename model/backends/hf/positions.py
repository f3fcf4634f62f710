"""How a Hugging Face model knows positions, for the positional view.

    learned   a position embedding table (GPT-2 wpe, BERT position_embeddings): Trace.pos_table
    rotary    q and k rotated per dimension pair by angle position × θ_i (Llama, Mistral, Qwen…):
              θ_i from the model's rotary embedding module (inv_freq)
    t5        a learned bias per head and relative-distance bucket, added to the scores
    none      none of these found
"""

from __future__ import annotations

import numpy as np
import torch


def rotary_frequencies(model: torch.nn.Module) -> np.ndarray | None:
    """θ_i (radians per position) of each rotated dimension pair, (Dh/2,), or None."""
    for _, module in model.named_modules():
        inv = getattr(module, "inv_freq", None)
        if isinstance(inv, torch.Tensor) and inv.dim() == 1:
            return inv.detach().to("cpu", torch.float64).numpy().copy()
    return None


def t5_bias(model: torch.nn.Module, n: int) -> dict[str, np.ndarray]:
    """{'encoder'|'decoder': float32 (H, n, n) relative position bias for n positions}."""
    out = {}
    for side in ("encoder", "decoder"):
        stack = getattr(model, side, None)
        block = getattr(stack, "block", None)
        if not block:
            continue
        attn = block[0].layer[0].SelfAttention
        if not getattr(attn, "has_relative_attention_bias", False):
            continue
        with torch.inference_mode():
            bias = attn.compute_bias(n, n, device=attn.relative_attention_bias.weight.device)
        out[side] = bias[0].to("cpu", torch.float32).numpy().copy()  # (H, n, n)
    return out


def position_kind(bundle, pos_table: np.ndarray) -> str:
    """'learned', 'rotary', 't5' or 'none' for a Hugging Face bundle."""
    model = bundle.model
    if pos_table.shape[0] > 1 and np.any(pos_table):
        return "learned"
    if rotary_frequencies(model) is not None:
        return "rotary"
    if t5_bias(model, 2):
        return "t5"
    return "none"
