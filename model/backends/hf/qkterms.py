"""The query–key decomposition on Hugging Face models: added positions (GPT-2's wte + wpe and
ln_1, BERT's embedding LayerNorm) split into parts (model/qkparts.py); rotary models by
frequency band of the recorded (rotated) q and k; T5 as content q·k plus its relative bias.

Shape legend: D model size, Dh head size, H heads, n positions.
"""

from __future__ import annotations

import numpy as np
import torch

from ...capture import SIDE_STACK, Trace, query_side
from ...qkparts import BANDS, Parts, frozen_parts, products, project_parts, split_parts
from .positions import rotary_frequencies, t5_bias
from .recorder import site_of, sites
from .segments import row_types


def _attention_module(bundle, kind: str, layer: int) -> tuple[str, torch.nn.Module]:
    """(path, module) of the attention that calls the lab's recorder for (kind, layer)."""
    if sites(bundle.model, bundle.config.family) is None:
        raise ValueError("this model's attention does not run through the lab's recorder")
    for name, module in bundle.model.named_modules():
        site = site_of(module)
        if site is not None and site.kind == kind and site.layer == layer:
            return name, module
    raise ValueError(f"no attention module found for {kind} layer {layer}")


def _hidden(backend, trace: Trace, side: str, batch: int) -> tuple[np.ndarray, int]:
    """(hidden (L+1, n, D) of the sentence, row): the trace's, or a capture of that sentence."""
    if side in trace.hidden:
        return trace.hidden[side][:, batch], batch
    again = backend.record(backend.encode([trace.sources[batch]]), ["hidden"], trace.ablate)
    return again.hidden[side][:, 0], batch


def _hf_added_parts(backend, trace: Trace, kind: str, layer: int, head: int, query: int,
                    key: int, batch: int) -> tuple[Parts, Parts, float]:
    bundle = backend.bundle
    model = bundle.model
    if kind == "cross":
        raise ValueError("the decomposition covers self-attention of added-position models")
    side = SIDE_STACK[query_side(kind)]
    ids = trace.ids(side)[batch]
    positions = np.asarray(trace.positions[side][batch])
    # a Trace saved before issue 54 holds -1 for pads; the model ran them at their index
    positions = np.where(positions >= 0, positions,
                         np.arange(len(positions)) + max(int(positions[0]), 0))
    hidden, _ = _hidden(backend, trace, side, batch)
    path, attn = _attention_module(bundle, kind, layer)
    scale = float(getattr(attn, "scaling", attn.head_dim ** -0.5 if hasattr(attn, "head_dim")
                          else 1.0))
    modules = dict(model.named_modules())
    emb = next((m for m in modules.values() if hasattr(m, "word_embeddings")
                and hasattr(m, "position_embeddings")), None)

    def table(mod: torch.nn.Module, rows) -> np.ndarray:
        return mod.weight.detach().double().cpu().numpy()[np.asarray(rows)]

    if emb is not None:  # BERT: LN(word + token type + position), then post-LN blocks
        tok = table(emb.word_embeddings, ids)
        types = getattr(emb, "token_type_embeddings", None)
        if types is not None:
            tok = tok + table(types, row_types(bundle, ids))  # 1 for a pair's B half
        pos = table(emb.position_embeddings, positions)

        def resid(i: int) -> Parts:
            parts = frozen_parts({"token": tok[i], "position": pos[i]}, emb.LayerNorm)
            rest = hidden[layer, i].astype(np.float64) - hidden[0, i]
            if layer > 0:  # at layer 0 the residual is the embedding's output itself
                parts["layers"] = rest
            return parts

        q_parts, k_parts = resid(query), resid(key)
        dh = attn.attention_head_size
        cut = slice(head * dh, (head + 1) * dh)
        q_fn, k_fn = _linear(attn.query, cut), _linear(attn.key, cut)
    elif hasattr(attn, "c_attn"):  # GPT-2: wte + wpe, pre-LN blocks with ln_1
        wte = model.get_input_embeddings()
        wpe = next(m for n, m in modules.items() if n.endswith("wpe"))
        tok, pos = table(wte, ids), table(wpe, positions)
        block = modules[path.rsplit(".", 1)[0]]

        def resid(i: int) -> Parts:
            return frozen_parts(split_parts(hidden[layer, i], tok[i], pos[i]), block.ln_1)

        q_parts, k_parts = resid(query), resid(key)
        d, dh = attn.split_size, attn.head_dim
        q_fn = _conv1d(attn.c_attn, slice(head * dh, (head + 1) * dh))
        k_fn = _conv1d(attn.c_attn, slice(d + head * dh, d + (head + 1) * dh))
    else:
        raise ValueError("no query–key decomposition for this family's layout")
    return project_parts(q_parts, q_fn), project_parts(k_parts, k_fn), scale


def _linear(linear: torch.nn.Module, cut: slice):
    """x -> (W x + b)[cut] of an nn.Linear in float64, the shared module left as it is."""
    w = linear.weight.detach().double().cpu()[cut]
    b = linear.bias.detach().double().cpu()[cut]
    return lambda t: t @ w.T + b


def _conv1d(conv: torch.nn.Module, cut: slice):
    """x -> (x W + b)[cut] of GPT-2's Conv1D (weight stored (in, out)), in float64."""
    w = conv.weight.detach().double().cpu()[:, cut]
    b = conv.bias.detach().double().cpu()[cut]
    return lambda t: t @ w + b


def _rotary_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
                  batch: int) -> dict[str, float]:
    theta = rotary_frequencies(bundle.model)
    if getattr(bundle.config.hf, "attn_logit_softcapping", None):
        raise ValueError("a softcapped score is not a sum over dimensions")
    _, attn = _attention_module(bundle, kind, layer)
    scale = float(getattr(attn, "scaling", trace.q[kind].shape[-1] ** -0.5))
    q = trace.q[kind][layer, batch, head, query].astype(np.float64)
    kv = int(trace.kv_groups[head]) if trace.kv_groups is not None else head
    k = trace.k[kind][layer, batch, kv, key].astype(np.float64)
    half = len(theta)
    prod = q * k * scale
    per_freq = prod[:half] + prod[half:2 * half]  # pair i with i + r/2 (rotate-half layout)
    n_bands = min(BANDS, half)
    terms = {}
    for idx in np.array_split(np.arange(half), n_bands):
        lo, hi = 2 * np.pi / theta[idx[0]], 2 * np.pi / theta[idx[-1]]
        terms[f"θ{idx[0]}–{idx[-1]} (λ {lo:,.0f}–{hi:,.0f})"] = float(per_freq[idx].sum())
    if 2 * half < len(q):
        terms["not rotated"] = float(prod[2 * half:].sum())
    return terms


def _t5_terms(bundle, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
              batch: int) -> dict[str, float]:
    _, attn = _attention_module(bundle, kind, layer)
    scale = float(getattr(attn, "scaling", 1.0))
    q = trace.q[kind][layer, batch, head, query].astype(np.float64)
    kv = int(trace.kv_groups[head]) if trace.kv_groups is not None else head
    k = trace.k[kind][layer, batch, kv, key].astype(np.float64)
    terms = {"content q·k": float(q @ k) * scale}
    if kind != "cross":  # encoder–decoder attention has no relative bias
        side = "encoder" if kind == "enc_self" else "decoder"
        n = max(query, key) + 1
        bias = t5_bias(bundle.model, n).get(side)
        terms["relative-position bias"] = float(bias[head, query, key]) if bias is not None \
            else 0.0
    return terms


def qk_terms(backend, trace: Trace, kind: str, layer: int, head: int, query: int, key: int,
             batch: int) -> dict[str, float]:
    positional = backend.caps.positional
    where = (trace, kind, layer, head, query, key, batch)
    if positional == "rotary":
        return _rotary_terms(backend.bundle, *where)
    if positional == "relative_bias":
        return _t5_terms(backend.bundle, *where)
    if positional == "learned":
        return products(*_hf_added_parts(backend, *where))
    raise ValueError(f"no query–key decomposition for {positional!r} positions")
