"""Greedy continuation of a decoder-only Hugging Face model, step by step with top-k.

The counterpart of the translators' greedy decoding (model/decode.py): each step's top-k
pieces and the chosen piece's probability, in a Translation (target_lang None). Knocked-out
heads stay knocked out at every step (the same ablation hooks as capture).

Shape legend
    n  pieces so far   V  vocabulary
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

import torch

from ...batch import Batch
from ...checkpoint import Bundle
from ...decode import Translation, checked_heads
from ...hooks import Head, ablation_hooks, hooks
from .recorder import sites

MAX_NEW = 24


def continue_text(bundle: Bundle, batch: Batch, *, max_new: int = MAX_NEW, top_k: int = 5,
                  ablate: Iterable[Head] | str = ()) -> list[Translation]:
    """Up to max_new greedy pieces after each source line, stopping at the end-of-text id."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    heads = checked_heads(bundle, ablate)
    if heads and sites(model, cfg.family) is None:
        raise ValueError("head ablation is not supported for this model: its attention does "
                         "not go through transformers' AttentionInterface")
    eos = tok.eos_token_id
    device = next(model.parameters()).device
    keep = ({"logits_to_keep": 1}  # the unembedding of the last position only
            if "logits_to_keep" in inspect.signature(model.forward).parameters else {})
    out = []
    for source, row in zip(batch.sources, batch.src_lists, strict=True):
        ids, gen, steps, probs, finished = list(row), [], [], [], False
        with torch.inference_mode(), hooks(ablation_hooks(heads)):
            for _ in range(max_new):
                if len(ids) >= cfg.max_len or not ids:
                    break
                x = torch.tensor([ids], device=device)
                logits = model(input_ids=x, use_cache=False, **keep).logits[0, -1]
                p = torch.softmax(logits.float(), dim=-1)  # (V,)
                top = torch.topk(p, min(top_k, p.numel()))
                pieces = tok.convert_ids_to_tokens(top.indices.tolist())
                steps.append([(str(s), float(v)) for s, v in zip(pieces, top.values.tolist())])
                chosen = int(top.indices[0])
                probs.append(float(top.values[0]))
                if eos is not None and chosen == eos:
                    finished = True
                    break
                gen.append(chosen)
                ids.append(chosen)
        out.append(Translation(source=source, target_lang=None,
                               text=tok.decode(gen, skip_special_tokens=True),
                               ids=gen, pieces=[str(p) for p in tok.convert_ids_to_tokens(gen)],
                               steps=steps, probs=probs, finished=finished))
    return out
