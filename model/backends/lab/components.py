"""One head's query and key on the lab's own model split by upstream component (issue 37):
the residual stream at the attention's input rebuilt as the sum of what each component wrote,
every LayerNorm frozen at its actual scale (model/qkparts.py), then projected by the head.

Components of a stack's stream: "embedding" (token embedding × √D), "position", "L{l}H{h}"
(head h of layer l's self-attention: its context · W_O^h), "L{l}H{h} cross" (a decoder
layer's cross-attention head), "MLP {l}" (the FFN's output, its biases included) and "bias"
(the attention output biases b_O, the LayerNorms' β, and after projection the head's b_Q/b_K).
Post-LN layers normalise the whole sum after each sublayer: every part is centred and scaled
by the frozen norm. Cross-attention keys read the encoder's output (after its final norm in
pre-LN models).

Shape legend: D model size, Dh head size, H heads, F FFN width.
"""

from __future__ import annotations

import numpy as np
import torch

from ...capture import Trace
from ...qkparts import Parts, frozen_parts, project_parts
from .circuits import circuit_weights
from .qkterms import lab_run

_ATTN = {"self": "self_attn", "cross": "cross_attn"}
_BLOCK = {("encoder", "self"): "attn_block", ("decoder", "self"): "self_block",
          ("decoder", "cross"): "cross_block"}


def _add(parts: Parts, writes: Parts) -> Parts:
    out = dict(parts)
    for name, v in writes.items():
        out[name] = out.get(name, 0.0) + v
    return out


def _stream(bundle, acts: dict, stack: str, pos: int, stop: tuple[int, str] | None,
            ablate: set) -> Parts:
    """Parts of `stack`'s residual at position `pos` just before sublayer `stop` (layer, "self"
    | "cross" | "ffn") reads it (before its pre-norm), or (None) what leaves the stack."""
    model, pre = bundle.model, bundle.config.norm == "pre"
    mod = getattr(model, stack)
    kind_of = {("encoder", "self"): "enc_self", ("decoder", "self"): "dec_self",
               ("decoder", "cross"): "cross"}
    parts: Parts = {"embedding": acts[f"{stack}.hook_tok"][pos],
                    "position": acts[f"{stack}.hook_pos"][pos]}
    subs = ("self", "ffn") if stack == "encoder" else (
        ("self", "cross", "ffn") if model.encoder is not None else ("self", "ffn"))
    for i, layer in enumerate(mod.layers):
        for sub in subs:
            if stop == (i, sub):
                return parts
            if sub == "ffn":
                lin2 = layer.ffn.lin2
                hidden = acts[f"{stack}.layers.{i}.ffn.hook_hidden"][pos]
                writes = {f"MLP {i}": hidden @ lin2.weight.detach().double().numpy().T
                          + lin2.bias.detach().double().numpy()}
                norm = layer.ffn_block.norm
            else:
                attn = getattr(layer, _ATTN[sub])
                ctx = acts[f"{stack}.layers.{i}.{_ATTN[sub]}.hook_context"][:, pos]  # (H, Dh)
                w_o = attn.w_o.weight.detach().double().numpy()  # (D, H·Dh)
                h_n, dh = ctx.shape
                suffix = " cross" if sub == "cross" else ""
                writes = {}
                for h in range(h_n):
                    out = ctx[h] @ w_o[:, h * dh:(h + 1) * dh].T
                    if (kind_of[stack, sub], i, h) in ablate:
                        out = np.zeros_like(out)
                    writes[f"L{i}H{h}{suffix}"] = out
                writes["bias"] = attn.w_o.bias.detach().double().numpy()
                norm = getattr(layer, _BLOCK[stack, sub]).norm
            parts = _add(parts, writes)
            if not pre:
                parts = frozen_parts(parts, norm)
    if stop is not None:
        raise ValueError(f"no sublayer {stop} in the {stack}")
    return frozen_parts(parts, mod.final_norm) if pre else parts


def qk_parts(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int) -> tuple[Parts, Parts, float, float]:
    """Backend.qk_parts for the lab's model (see base.py)."""
    model, cfg = bundle.model, bundle.config
    q_stack = "encoder" if kind == "enc_self" else "decoder"
    sub = "cross" if kind == "cross" else "self"
    names = [n for n in model.hook_names()
             if n.endswith((".hook_tok", ".hook_pos", ".hook_context", "ffn.hook_hidden"))]
    acts = lab_run(bundle, trace, batch, names)
    ablate = set(trace.ablate or ())
    q_in = _stream(bundle, acts, q_stack, query, (layer, sub), ablate)
    if kind == "cross":
        k_in = _stream(bundle, acts, "encoder", key, None, ablate)
    else:
        k_in = _stream(bundle, acts, q_stack, key, (layer, sub), ablate)
    block = getattr(model, q_stack).layers[layer]
    if cfg.norm == "pre":  # the block normalises its queries (and, in self-attention, keys)
        norm = getattr(block, _BLOCK[q_stack, sub]).norm
        q_in = frozen_parts(q_in, norm)
        if kind != "cross":
            k_in = frozen_parts(k_in, norm)
    w = circuit_weights(bundle, kind, layer)
    wq, bq = torch.from_numpy(w["W_Q"][head]), torch.from_numpy(w["b_Q"][head])
    wk, bk = torch.from_numpy(w["W_K"][head]), torch.from_numpy(w["b_K"][head])
    return (project_parts(q_in, lambda t: t @ wq + bq),
            project_parts(k_in, lambda t: t @ wk + bk), 1.0 / np.sqrt(cfg.d_head), 0.0)
