"""Direct logit attribution for the lab's pre-LN encoder–decoder (model.forced.StepAttribution).

The decoder's final residual stream x is a sum of parts (embedding, each head's output, each
block's output bias, each FFN). With the final LayerNorm's scale frozen at its value on x,
LN(x) = Σ_c γ ⊙ (c − mean c)/σ + β is linear in the parts, so
logit_v = Σ_c [γ ⊙ (c − mean c)/σ] · w_v + β · w_v exactly.

Shape legend: L layers, H heads, T decoder positions, D model size, V vocabulary.
"""

from __future__ import annotations

import numpy as np
import torch

from ...forced import StepAttribution, top_tokens
from ...hooks import Head
from ...norms import head_outputs
from .norms import native_projections


def _resid_names(n_layers: int) -> list[str]:
    return ["decoder.hook_embed"] + [f"decoder.layers.{i}.hook_resid_{p}"
                                     for i in range(n_layers) for p in ("cross", "post")]


def _unembedding(model) -> torch.Tensor:
    """(V, D) rows w_v with logit_v = h · w_v."""
    return (model.tok_embed.weight if model.out_proj is None else model.out_proj.weight).detach()


def _direct(bundle, tr, step: int, token_id: int, k: int):
    """DLA per head, the other terms, and each head's top tokens through the frozen final LN."""
    model = bundle.model
    norm = model.decoder.final_norm
    n_layers = bundle.n_layers("dec_self")
    acts = tr.acts
    x = acts[f"decoder.layers.{n_layers - 1}.hook_resid_post"][0, step].astype(np.float64)
    sigma = np.sqrt(x.var() + norm.eps)
    gamma = norm.weight.detach().double().numpy()
    beta = norm.bias.detach().double().numpy()
    w_u = _unembedding(model).double().numpy()  # (V, D)
    w_v = w_u[token_id]

    def through(c: np.ndarray) -> np.ndarray:
        """Part(s) (..., D) -> what they add after the frozen final LN, (..., D)."""
        return (c - c.mean(-1, keepdims=True)) * gamma / sigma

    other = {"embedding": float(through(acts["decoder.hook_embed"][0, step]) @ w_v),
             "final LayerNorm bias": float(beta @ w_v)}
    dla: dict[str, np.ndarray] = {}
    tops: dict[Head, dict] = {}
    pieces = bundle.tokenizer.ids_to_pieces(list(range(w_u.shape[0])))
    for kind in ("dec_self", "cross"):
        if kind not in tr.attn:
            continue
        proj = native_projections(model, kind, n_layers)
        table = np.zeros((n_layers, bundle.config.n_heads))
        for layer, (w_o, bias) in enumerate(proj):
            attn = tr.attn[kind][layer, :1, :, step:step + 1]  # (1, H, 1, K)
            out = head_outputs(attn, tr.v[kind][layer, :1], w_o)[0, :, 0]  # (H, D)
            moved = through(out)  # (H, D)
            table[layer] = moved @ w_v
            if bias is not None:
                other[f"{kind} layer {layer} output bias"] = float(through(bias) @ w_v)
            for h in range(out.shape[0]):
                tops[(kind, layer, h)] = top_tokens(moved[h] @ w_u.T, pieces, k)
        dla[kind] = table
    for i in range(n_layers):
        ffn = acts[f"decoder.layers.{i}.hook_resid_post"][0, step] - \
            acts[f"decoder.layers.{i}.hook_resid_cross"][0, step]
        other[f"FFN layer {i}"] = float(through(ffn.astype(np.float64)) @ w_v)
    return dla, other, tops


def attribution(backend, source: str, target: str | None, target_lang: str | None,
                step: int | None, token_id: int | None, k: int) -> StepAttribution:
    """The step's logits from one capture, and the DLA where the model is pre-LN."""
    bundle = backend.bundle
    model, cfg = bundle.model, bundle.config
    n_dec = bundle.n_layers("dec_self")
    batch = backend.encode([source], None if target is None else [target], target_lang)
    tr = backend.record(batch, ["attn", "v", "logits", *_resid_names(n_dec)])
    n_t = tr.length("tgt", 0)
    step = n_t - 1 if step is None else int(step)
    if not 0 <= step < n_t:
        raise ValueError(f"step must be between 0 and {n_t - 1}")
    logits = tr.logits[0, step].astype(np.float64)  # (V,)
    if token_id is None:
        token_id = int(logits.argmax())
    if not 0 <= token_id < logits.shape[0]:
        raise ValueError(f"token id must be between 0 and {logits.shape[0] - 1}")
    pieces = bundle.tokenizer.ids_to_pieces(list(range(logits.shape[0])))
    out = StepAttribution(step=step, token_id=token_id, logits=logits, pieces=pieces,
                          inputs={"src": torch.from_numpy(tr.src_ids[:1]),
                                  "tgt": torch.from_numpy(tr.tgt_ids[:1, :n_t])},
                          tgt_tokens=tr.tgt_tokens[0], src_tokens=tr.src_tokens[0])
    if cfg.norm == "pre" and model.decoder.final_norm is not None:
        out.dla, out.other, out.dla_top = _direct(bundle, tr, step, token_id, k)
    return out
