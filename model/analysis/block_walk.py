"""One layer after its attention, rebuilt from the weights: the residual add, the norm, the FFN
with its activation and the layer's output, for one sentence (the tour's steps 14 and 15 on a
model whose recorder keeps no such intermediates, a Hugging Face one).

Written against the backend: circuit_weights (W_O, b_O, kv_groups) for the attention's output
and block_weights (the two norms, the FFN and the model's own activation). The attention
output is rebuilt from the recorded probabilities and values, context_h = A_h · V_kv(h), then
· W_O + b_O. Post-LN (BERT): h = LN₁(x + attention), out = LN₂(h + FFN(h)); pre-norm (GPT-2,
Llama, T5): h = x + attention, out = h + FFN(Norm₂(h)). `out` is the layer's output, which the
Trace also holds (hidden[layer + 1]): the walk checks itself against it.

A norm is a LayerNorm, (x − mean) / √(var + eps) · γ + β, or an RMS norm (Llama, T5), which
removes no mean and has no β: x / √(mean(x²) + eps) · γ. An FFN is act(x · W_in + b_in)
· W_out + b_out, or gated (Llama's gate/up/down, T5's wi_0/wi_1/wo): act(x · W_gate + b_gate)
× (x · W_in + b_in), then · W_out + b_out.

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
    activation: str  # the config's name for it ("gelu", "gelu_new", "relu", "silu"…)
    x: np.ndarray  # (m, D) the layer's input (the residual stream)
    attention: np.ndarray  # (m, D) the attention block's output, · W_O + b_O
    added: np.ndarray  # (m, D) x + attention
    normed: np.ndarray  # (m, D) post: LN₁(x + attention), the FFN's input; pre: = added
    ffn_in: np.ndarray  # (m, D) what the FFN reads: normed (post) or LN₂(added) (pre)
    pre_activation: np.ndarray  # (m, F) what the activation reads: ffn_in · W_in + b_in,
    # or gated ffn_in · W_gate + b_gate
    hidden: np.ndarray  # (m, F) after the activation (gated: gate × up)
    ffn_out: np.ndarray  # (m, D) hidden · W_out + b_out
    out: np.ndarray  # (m, D) the layer's output
    norm_kind: str = "layer"  # "layer" (LayerNorm) or "rms" (RMS norm: no mean, no β)
    gate: np.ndarray | None = None  # (m, F) gated: act(pre_activation); None ungated
    up: np.ndarray | None = None  # (m, F) gated: ffn_in · W_in + b_in; None ungated
    parts: tuple[str, str, str] = ("", "", "")  # the model's names of the FFN's Linears:
    # (in or up, out or down, gate or "")

    @property
    def gated(self) -> bool:
        return self.gate is not None


def layer_norm(x: np.ndarray, p: dict) -> np.ndarray:
    """(x − mean) / √(var + eps) · γ + β over the last axis (var without Bessel's correction)."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + p["eps"]) * p["gamma"] + p["beta"]


def rms_norm(x: np.ndarray, p: dict) -> np.ndarray:
    """x / √(mean(x²) + eps) · γ over the last axis: no mean removed, no β (Llama, T5)."""
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + p["eps"]) * p["gamma"]


def normalise(x: np.ndarray, p: dict) -> np.ndarray:
    """The norm `p` describes (block_weights' "kind": "layer", the default, or "rms")."""
    return rms_norm(x, p) if p.get("kind") == "rms" else layer_norm(x, p)


def mean_rms(x: np.ndarray) -> float:
    """Mean over pieces of each vector's root mean square (what an RMS norm sets to 1)."""
    a = np.asarray(x, np.float64)
    return float(np.sqrt((a ** 2).mean(-1)).mean()) if a.size else 0.0


def block_walk(bundle, trace: Trace, kind: str, layer: int, b: int) -> BlockWalk:
    """Sentence b's walk through layer `layer` of a self-attention `kind`, after attention.
    Needs the Trace's attn, v and hidden groups; ValueError where the backend cannot give the
    weights (no block_weights, or a layout it cannot rebuild)."""
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
    normed = normalise(added, block["ln_attn"]) if post else added
    ffn_in = normed if post else normalise(added, block["ln_ffn"])
    gate = up = None
    if block.get("W_gate") is None:
        pre_act = ffn_in @ block["W_in"] + block["b_in"]  # (m, F)
        hidden = block["act"](pre_act)
    else:  # gated: the activated gate scales the "up" projection unit by unit
        pre_act = ffn_in @ block["W_gate"] + block["b_gate"]  # (m, F)
        gate = block["act"](pre_act)
        up = ffn_in @ block["W_in"] + block["b_in"]  # (m, F)
        hidden = gate * up
    ffn_out = hidden @ block["W_out"] + block["b_out"]  # (m, D)
    out = normalise(normed + ffn_out, block["ln_ffn"]) if post else added + ffn_out
    names = block.get("parts") or {}
    return BlockWalk(norm=block["norm"], activation=block["activation"], x=x,
                     attention=attention, added=added, normed=normed, ffn_in=ffn_in,
                     pre_activation=pre_act, hidden=hidden, ffn_out=ffn_out, out=out,
                     norm_kind=block.get("norm_kind", "layer"), gate=gate, up=up,
                     parts=(names.get("in", ""), names.get("out", ""), names.get("gate", "")))
