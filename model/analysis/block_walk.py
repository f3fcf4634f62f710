"""One layer after its attention, rebuilt from the weights: the residual add, the norm, the FFN
with its activation and the layer's output, for one sentence (the tour's steps 14 and 15 on a
model whose recorder keeps no such intermediates, a Hugging Face one).

Written against the backend: circuit_weights (W_O, b_O, kv_groups) for the attention's output
and block_weights (the two LayerNorms, the FFN and the model's own activation). The attention
output is rebuilt from the recorded probabilities and values, context_h = A_h · V_kv(h), then
· W_O + b_O. Post-LN (BERT): h = LN₁(x + attention), out = LN₂(h + FFN(h)); pre-LN (GPT-2):
h = x + attention, out = h + FFN(LN₂(h)). `out` is the layer's output, which the Trace also
holds (hidden[layer + 1]): the walk checks itself against it.

Shape legend: m real pieces of the sentence, D model width, F the FFN's width, H heads, Dh
head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends import backend_for
from ..capture import SIDE_STACK, Trace, query_side


@dataclass(frozen=True)
class BlockWalk:
    """One layer's second half for one sentence, float64 (m, ·) arrays."""

    norm: str  # "post" or "pre"
    activation: str  # the config's name for it ("gelu", "gelu_new", "relu"…)
    x: np.ndarray  # (m, D) the layer's input (the residual stream)
    attention: np.ndarray  # (m, D) the attention block's output, · W_O + b_O
    added: np.ndarray  # (m, D) x + attention
    normed: np.ndarray  # (m, D) post: LN₁(x + attention), the FFN's input; pre: = added
    ffn_in: np.ndarray  # (m, D) what the FFN reads: normed (post) or LN₂(added) (pre)
    pre_activation: np.ndarray  # (m, F) ffn_in · W_in + b_in
    hidden: np.ndarray  # (m, F) after the activation
    ffn_out: np.ndarray  # (m, D) hidden · W_out + b_out
    out: np.ndarray  # (m, D) the layer's output


def layer_norm(x: np.ndarray, p: dict) -> np.ndarray:
    """(x − mean) / √(var + eps) · γ + β over the last axis (var without Bessel's correction)."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + p["eps"]) * p["gamma"] + p["beta"]


def block_walk(bundle, trace: Trace, kind: str, layer: int, b: int) -> BlockWalk:
    """Sentence b's walk through layer `layer` of a self-attention `kind`, after attention.
    Needs the Trace's attn, v and hidden groups; ValueError where the backend cannot give the
    weights (no block_weights, a gated FFN, RMSNorm)."""
    backend = backend_for(bundle)
    read = getattr(backend, "block_weights", None)
    if read is None or not hasattr(backend, "circuit_weights"):
        raise ValueError("this backend does not expose its layers' norms and FFN weights")
    side = query_side(kind)
    stack = SIDE_STACK[side]
    for group, held in (("attn", trace.attn), ("v", trace.v), ("hidden", trace.hidden)):
        if (stack if group == "hidden" else kind) not in held:
            raise ValueError(f"the Trace holds no {group!r} for {kind}: capture it")
    block = read(kind, layer)
    heads = backend.circuit_weights(kind, layer)
    m = trace.length(side, b)
    probs = trace.attn[kind][layer, b, :, :m, :m].astype(np.float64)  # (H, m, m)
    v = trace.v[kind][layer, b, :, :m].astype(np.float64)  # (H_kv, m, Dh)
    context = probs @ v[np.asarray(heads["kv_groups"])]  # (H, m, Dh)
    w_o = np.asarray(heads["W_O"], np.float64)  # (H, Dh, D)
    attention = np.einsum("hmd,hde->me", context, w_o) + heads["b_O"]  # (m, D)
    x = trace.hidden[stack][layer, b, :m].astype(np.float64)  # (m, D)
    added = x + attention
    post = block["norm"] == "post"
    normed = layer_norm(added, block["ln_attn"]) if post else added
    ffn_in = normed if post else layer_norm(added, block["ln_ffn"])
    pre_act = ffn_in @ block["W_in"] + block["b_in"]  # (m, F)
    hidden = block["act"](pre_act)
    ffn_out = hidden @ block["W_out"] + block["b_out"]  # (m, D)
    out = layer_norm(normed + ffn_out, block["ln_ffn"]) if post else added + ffn_out
    return BlockWalk(norm=block["norm"], activation=block["activation"], x=x,
                     attention=attention, added=added, normed=normed, ffn_in=ffn_in,
                     pre_activation=pre_act, hidden=hidden, ffn_out=ffn_out, out=out)
