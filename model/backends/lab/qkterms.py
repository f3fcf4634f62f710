"""The query–key decomposition on the lab's own model (sinusoidal or learned positions): the
residual at the attention's input read at its hooks and split into token, position and layers
(model/qkparts.py), through the block's pre-LN norms and the head's W_Q / W_K.

Shape legend: D model size, Dh head size, n positions.
"""

from __future__ import annotations

import numpy as np
import torch

from ...capture import Trace
from ...hooks import ablation_hooks, hooks
from ...qkparts import Parts, frozen_parts, products, project_parts, split_parts


def lab_run(bundle, trace: Trace, batch: int, names: list[str]) -> dict[str, np.ndarray]:
    """The named hook tensors of sentence `batch` (its padded row, ablation as in the trace)."""
    got: dict[str, np.ndarray] = {}

    def keep(x: torch.Tensor, name: str) -> None:
        got[name] = x[0].detach().double().cpu().numpy()

    model = bundle.model
    src = torch.tensor(np.asarray(trace.src_ids[batch:batch + 1]))  # a copy: Traces are frozen
    tgt = torch.tensor(np.asarray(trace.tgt_ids[batch:batch + 1]))
    with torch.inference_mode(), hooks(ablation_hooks(trace.ablate)), \
            hooks(dict.fromkeys(names, keep)):
        model(src if model.encoder is not None else None,
              tgt if model.decoder is not None else None)
    return got


def _lab_parts(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
               batch: int) -> tuple[Parts, Parts, float]:
    model, cfg = bundle.model, bundle.config
    q_stack = "encoder" if kind == "enc_self" else "decoder"
    k_stack = "decoder" if kind == "dec_self" else "encoder"
    q_in = (f"decoder.layers.{layer}.hook_resid_mid" if kind == "cross"
            else f"{q_stack}.layers.{layer}.hook_resid_pre")
    n_enc = len(model.encoder.layers) if model.encoder is not None else 0
    k_in = (f"encoder.layers.{n_enc - 1}.hook_resid_post" if kind == "cross" else q_in)
    names = [q_in, k_in, f"{q_stack}.hook_tok", f"{q_stack}.hook_pos", f"{k_stack}.hook_tok",
             f"{k_stack}.hook_pos"]
    acts = lab_run(bundle, trace, batch, sorted(set(names)))
    block = getattr(model, q_stack).layers[layer]
    attn = {"enc_self": "self_attn", "dec_self": "self_attn", "cross": "cross_attn"}[kind]
    module = getattr(block, attn)
    norm = {"enc_self": "attn_block", "dec_self": "self_block", "cross": "cross_block"}[kind]
    pre = cfg.norm == "pre"

    def resid(name: str, stack: str, i: int) -> Parts:
        return split_parts(acts[name][i], acts[f"{stack}.hook_tok"][i],
                           acts[f"{stack}.hook_pos"][i])

    q_parts = resid(q_in, q_stack, query)
    k_parts = resid(k_in, k_stack, key)
    if kind == "cross" and pre:  # the memory is the encoder's output after its final norm
        k_parts = frozen_parts(k_parts, model.encoder.final_norm)
    if pre:  # the block normalises its query input (and, in self-attention, its keys)
        q_parts = frozen_parts(q_parts, getattr(block, norm).norm)
        if kind != "cross":
            k_parts = frozen_parts(k_parts, getattr(block, norm).norm)
    dh = cfg.d_model // cfg.n_heads
    cut = slice(head * dh, (head + 1) * dh)

    def proj(linear):
        w = linear.weight.detach().double()[cut]
        b = linear.bias.detach().double()[cut]
        return lambda t: t @ w.T + b

    return (project_parts(q_parts, proj(module.w_q)), project_parts(k_parts, proj(module.w_k)),
            1.0 / np.sqrt(dh))


def qk_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int) -> dict[str, float]:
    positional = bundle.config.pos_encoding
    if positional not in ("sinusoidal", "learned"):
        raise ValueError(f"no query–key decomposition for {positional!r} positions")
    return products(*_lab_parts(bundle, trace, kind, layer, head, query, key, batch))
