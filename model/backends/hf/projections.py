"""Each Hugging Face family's attention output projection W_O, found by module path.

Norm-based attention (model/norms.py) needs the slice of W_O that each head's context meets.
transformers names that layer differently per family:

    GPT-2             transformer.h.<i>.attn.c_proj               Conv1D, weight (in, out)!
    Llama/Mistral/Qwen/Gemma/Phi-3   model.layers.<i>.self_attn.o_proj
    BART/Marian       model.{encoder,decoder}.layers.<i>.{self_attn,encoder_attn}.out_proj
    BERT/RoBERTa/ViT  encoder.layer.<i>.attention.output.dense
    DistilBERT        transformer.layer.<i>.attention.out_lin
    T5                {encoder,decoder}.block.<i>.layer.<j>.{SelfAttention,EncDecAttention}.o

Every weight comes back as nn.Linear stores it, (D_out, H·Dh), so `merged @ w_oᵀ + b`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import torch

from ...hooks import Head
from ...norms import LazyNorms, projection_grams, stack_norms

# module path suffix of an attention output projection; group 1 names the attention module
_PATTERNS = (
    re.compile(r"\.(attn|crossattention)\.c_proj$"),
    re.compile(r"\.(self_attn|attention|attn)\.o_proj$"),
    re.compile(r"\.(self_attn|encoder_attn|attention|attn)\.out_proj$"),
    re.compile(r"\.(attention)\.output\.dense$"),
    re.compile(r"\.(attention)\.out_lin$"),
    re.compile(r"\.(SelfAttention|EncDecAttention)\.o$"),
    re.compile(r"\.(self_attn)\.dense$"),
)
_CROSS = {"encoder_attn", "EncDecAttention", "crossattention"}


def _kind(name: str, attn_name: str, family: str) -> str:
    if attn_name in _CROSS:
        return "cross"
    if family == "seq2seq":
        return "enc_self" if ".encoder." in f".{name}." else "dec_self"
    return "enc_self" if family == "encoder" else "dec_self"


def _layer(name: str) -> int | None:
    """The first all-digit component of a module path: the block's index in its stack."""
    return next((int(p) for p in name.split(".") if p.isdigit()), None)


def projection_weight(module: torch.nn.Module) -> tuple[np.ndarray, np.ndarray | None]:
    """(w_o (D_out, D_in) float32, bias (D_out,) or None) of a Linear or GPT-2 Conv1D."""
    weight = module.weight.detach().float().cpu()
    if type(module).__name__ == "Conv1D":  # GPT-2 stores (in, out): x @ weight + bias
        weight = weight.t()
    bias = getattr(module, "bias", None)
    return (weight.contiguous().numpy(),
            None if bias is None else bias.detach().float().cpu().numpy())


def projection_modules(model: torch.nn.Module, family: str
                       ) -> dict[str, list[torch.nn.Module]]:
    """{kind: [output projection of layer 0, 1, …]} for the families above; {} if none found.

    Raises ValueError when a kind's layers are not numbered 0..n-1 (an unknown layout).
    """
    found: dict[str, dict[int, torch.nn.Module]] = {}
    for name, module in model.named_modules():
        for pattern in _PATTERNS:
            m = pattern.search(name)
            if m is None or not hasattr(module, "weight"):
                continue
            layer = _layer(name)
            if layer is None:
                continue
            kind = _kind(name, m.group(1), family)
            if kind == "cross" and family != "seq2seq":
                continue  # GPT-2's optional cross-attention: never run by the lab
            found.setdefault(kind, {})[layer] = module
            break
    out = {}
    for kind, by_layer in found.items():
        if sorted(by_layer) != list(range(len(by_layer))):
            raise ValueError(f"{kind} output projections found for layers {sorted(by_layer)}")
        out[kind] = [by_layer[i] for i in range(len(by_layer))]
    return out


def output_projections(bundle) -> dict[str, list[tuple[np.ndarray, np.ndarray | None]]]:
    """{kind: [(w_o (D, H·Dh), bias), …] per layer} of a Hugging Face bundle."""
    mods = projection_modules(bundle.model, bundle.config.family)
    return {kind: [projection_weight(m) for m in layers] for kind, layers in mods.items()}


def hf_norms(bundle, attn: Mapping[str, np.ndarray], v: Mapping[str, np.ndarray],
             kv_groups: np.ndarray | None = None, ablate: frozenset[Head] = frozenset()
             ) -> LazyNorms:
    """norms[kind] (L, B, H, Q, K) from a capture's attn (L, B, H, Q, K) and v (L, B, G, K, Dh).

    Kinds whose output projection is unknown, or whose attn or v is missing, are left out.
    kv_groups[h]: the key/value head query head h reads (None: one each). The quadratic
    product is made when a kind is first read (LazyNorms): attn is the Trace's own array.
    """
    try:
        modules = projection_modules(bundle.model, bundle.config.family)
    except ValueError:
        return LazyNorms({})
    out = {}
    for kind, layers in modules.items():
        if kind not in attn or kind not in v or len(layers) != attn[kind].shape[0]:
            continue
        n_heads = attn[kind].shape[2]
        groups = (None if kv_groups is None or len(kv_groups) != n_heads
                  else [int(g) for g in kv_groups])
        gone = [(layer, h) for k, layer, h in ablate if k == kind]
        grams = [projection_grams(m.weight, n_heads, lambda m=m: projection_weight(m)[0])
                 for m in layers]  # made once per weight, not per capture
        out[kind] = stack_norms(attn[kind], v[kind], None, groups, gone, lazy=True,
                                grams=grams)
    return LazyNorms(out)
