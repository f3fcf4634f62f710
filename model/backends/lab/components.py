"""One head's query and key on the lab's own model split by upstream component (issue 37):
the residual stream at the attention's input rebuilt as the sum of what each component wrote,
every LayerNorm frozen at its actual scale (model/qkparts.py), then projected by the head.

Components of a stack's stream: "embedding" (token embedding × √D), "position", "L{l}H{h}"
(head h of layer l's self-attention: its context · W_O^h), "L{l}H{h} cross" (a decoder
layer's cross-attention head), "MLP {l}" (the FFN's output, its biases included) and "bias"
(the attention output biases b_O, the LayerNorms' β, and after projection the head's b_Q/b_K).
Post-LN layers normalise the whole sum after each sublayer: every part is centred and scaled
by the frozen norm. Cross-attention keys read the encoder's output (after its final norm in
pre-LN models). Values read what keys read (ov_parts). A write followed to the logits
(direct_logits) is a "probe" part carried through every later norm frozen at the scale of the
stream without it, then the unembedding.

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
PROBE = "probe"  # a write carried along the direct path; no norm's scale counts it
_BLOCK = {("encoder", "self"): "attn_block", ("decoder", "self"): "self_block",
          ("decoder", "cross"): "cross_block"}


def _add(parts: Parts, writes: Parts) -> Parts:
    out = dict(parts)
    for name, v in writes.items():
        out[name] = out.get(name, 0.0) + v
    return out


def _freeze(parts: Parts, norm: torch.nn.Module) -> Parts:
    """frozen_parts on every part but the probe; the probe ((n, D) rows) scaled alike."""
    rest = {p: v for p, v in parts.items() if p != PROBE}
    out = frozen_parts(rest, norm)
    if PROBE in parts:
        sigma = np.sqrt(sum(rest.values()).var() + float(norm.eps))
        v = parts[PROBE]
        out[PROBE] = (v - v.mean(-1, keepdims=True)) * norm.weight.detach().double().numpy() \
            / sigma
    return out


def _stream(bundle, acts: dict, stack: str, pos: int, stop: tuple[int, str] | None,
            ablate: set, probe: tuple[tuple[int, str], np.ndarray] | None = None) -> Parts:
    """Parts of `stack`'s residual at position `pos` just before sublayer `stop` (layer, "self"
    | "cross" | "ffn") reads it (before its pre-norm), or (None) what leaves the stack;
    probe ((layer, sub), rows (n, D)): rows added after that sublayer's writes."""
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
            if probe is not None and probe[0] == (i, sub):
                parts[PROBE] = probe[1]
            if not pre:
                parts = _freeze(parts, norm)
    if stop is not None:
        raise ValueError(f"no sublayer {stop} in the {stack}")
    return _freeze(parts, mod.final_norm) if pre else parts


_NAMES = (".hook_tok", ".hook_pos", ".hook_context", "ffn.hook_hidden")


def _acts(bundle, trace: Trace, batch: int) -> dict:
    names = [n for n in bundle.model.hook_names() if n.endswith(_NAMES)]
    return lab_run(bundle, trace, batch, names)


def _read(bundle, acts: dict, kind: str, layer: int, pos: int, side: str, ablate: set) -> Parts:
    """The stream parts the head's query (side "q") or key and value ("k") read at `pos`,
    through the block's pre-norm (pre-LN models)."""
    q_stack = "encoder" if kind == "enc_self" else "decoder"
    sub = "cross" if kind == "cross" else "self"
    if kind == "cross" and side == "k":  # the encoder's output, its final norm included
        return _stream(bundle, acts, "encoder", pos, None, ablate)
    parts = _stream(bundle, acts, q_stack, pos, (layer, sub), ablate)
    if bundle.config.norm == "pre":
        parts = frozen_parts(parts, getattr(getattr(bundle.model, q_stack).layers[layer],
                                            _BLOCK[q_stack, sub]).norm)
    return parts


def qk_parts(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int) -> tuple[Parts, Parts, float, float]:
    """Backend.qk_parts for the lab's model (see base.py)."""
    acts, ablate = _acts(bundle, trace, batch), set(trace.ablate or ())
    q_in = _read(bundle, acts, kind, layer, query, "q", ablate)
    k_in = _read(bundle, acts, kind, layer, key, "k", ablate)
    w = circuit_weights(bundle, kind, layer)
    wq, bq = torch.from_numpy(w["W_Q"][head]), torch.from_numpy(w["b_Q"][head])
    wk, bk = torch.from_numpy(w["W_K"][head]), torch.from_numpy(w["b_K"][head])
    return (project_parts(q_in, lambda t: t @ wq + bq),
            project_parts(k_in, lambda t: t @ wk + bk), 1.0 / np.sqrt(bundle.config.d_head),
            0.0)


def ov_parts(bundle, trace: Trace, kind: str, layer: int, head: int, keys, batch: int) -> Parts:
    """Backend.ov_parts for the lab's model (see base.py)."""
    acts, ablate = _acts(bundle, trace, batch), set(trace.ablate or ())
    w = circuit_weights(bundle, kind, layer)
    wv, bv = torch.from_numpy(w["W_V"][head]), torch.from_numpy(w["b_V"][head])
    rows = [project_parts(_read(bundle, acts, kind, layer, int(p), "k", ablate),
                          lambda t: t @ wv + bv) for p in keys]
    return stack_rows(rows)


def stack_rows(rows: list[Parts]) -> Parts:
    """Per-position parts -> {name: (n, Dh)}, a name missing at a position counting 0."""
    names = list(dict.fromkeys(n for r in rows for n in r))
    zero = np.zeros_like(next(iter(rows[0].values())))
    return {n: np.stack([r.get(n, zero) for r in rows]) for n in names}


def direct_logits(bundle, trace: Trace, kind: str, layer: int, query: int, write,
                  batch: int) -> np.ndarray:
    """Backend.direct_logits for the lab's model (see base.py)."""
    if kind == "enc_self" or bundle.model.decoder is None:
        raise ValueError("an encoder head writes into the encoder's stream, which the "
                         "logits read only through cross-attention")
    rows = np.atleast_2d(np.asarray(write, np.float64))  # (n, D)
    acts = _acts(bundle, trace, batch)
    sub = "cross" if kind == "cross" else "self"
    final = _stream(bundle, acts, "decoder", query, None, set(trace.ablate or ()),
                    probe=((layer, sub), rows))
    model = bundle.model
    w_u = (model.tok_embed.weight if model.out_proj is None else model.out_proj.weight)
    out = final[PROBE] @ w_u.detach().double().cpu().numpy().T  # (n, V)
    return out if np.ndim(write) == 2 else out[0]
