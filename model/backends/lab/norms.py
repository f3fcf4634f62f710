"""Norm-based attention (model/norms.py) read off the lab's own Transformer: its output
projections, and a capture's norms[kind]."""

from __future__ import annotations

import numpy as np
import torch

from ...hooks import Head, attn_prefix
from ...norms import Weighing, projection_grams, stack_norms


def native_projections(model: torch.nn.Module, kind: str, n_layers: int
                       ) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """(w_o (D, H·Dh), bias (D,)) of each layer's attention block of one kind, as float32."""
    out = []
    for layer in range(n_layers):
        lin = model.get_submodule(attn_prefix(kind, layer)).w_o
        bias = None if lin.bias is None else lin.bias.detach().float().cpu().numpy()
        out.append((lin.weight.detach().float().cpu().numpy(), bias))
    return out


def native_norms(model: torch.nn.Module, kind: str, attn: np.ndarray, v: np.ndarray,
                 ablate: frozenset[Head] = frozenset(), lazy: bool = False
                 ) -> np.ndarray | Weighing:
    """norms[kind] (L, B, H, Q, K) for the lab's Transformer from a capture's attn and v
    (lazy: a Weighing, as stack_norms)."""
    n_heads = attn.shape[2]
    grams = []
    for layer in range(attn.shape[0]):
        weight = model.get_submodule(attn_prefix(kind, layer)).w_o.weight
        grams.append(projection_grams(weight, n_heads,
                                      lambda w=weight: w.detach().float().cpu().numpy()))
    gone = [(layer, h) for k, layer, h in ablate if k == kind]
    return stack_norms(attn, v, None, ablated_heads=gone, lazy=lazy, grams=grams)
