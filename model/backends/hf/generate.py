"""Continuation of a decoder-only Hugging Face model through its own key/value cache.

One forward over the prompt, then one forward per new piece that feeds only that piece and the
model's cache (`past_key_values`), as transformers' own `generate` does. Greedy, or top-k
sampling with a seeded generator. Each step's top-k pieces and the chosen piece's probability
go in a Translation-like `Generation`; with `record=True`, each layer's `hook_probs` (the
recorder's hook point, through `model.hooks`) hands over the new query's row: what every head
of the new piece read from every cached position. Knocked-out heads stay knocked out at every
step (the same ablation hooks as capture, on the context of every call).

Shape legend
    S  steps   H  query heads   P  cached positions   V  vocabulary
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

import numpy as np
import torch

from ...batch import Batch
from ...checkpoint import Bundle
from ...decode import checked_heads
from ...generation import Generation
from ...hooks import Head, ablation_hooks, attn_prefix, hooks
from .cache import cache_bytes, cache_length
from .pieces import piece_names
from .recorder import sites

MAX_NEW = 24


class Rows:
    """Per layer, the last query's attention row of every call: (H, P) float32 on the CPU."""

    def __init__(self, layers: int) -> None:
        self.rows: list[list[torch.Tensor]] = [[] for _ in range(layers)]

    def hooks(self) -> dict:
        def keep(layer: int):
            def fn(probs: torch.Tensor, name: str) -> None:
                self.rows[layer].append(probs[0, :, -1].to("cpu", torch.float32))  # (H, P)
            return fn
        return {f"{attn_prefix('dec_self', i)}.hook_probs": keep(i)
                for i in range(len(self.rows))}

    def stacked(self) -> list[np.ndarray]:
        """Per layer (S, H, P), row s zero beyond the P_s positions step s could see."""
        out = []
        for rows in self.rows:
            width = max((r.shape[-1] for r in rows), default=0)
            a = np.zeros((len(rows), rows[0].shape[0] if rows else 0, width), np.float32)
            for s, r in enumerate(rows):
                a[s, :, : r.shape[-1]] = r.numpy()
            out.append(a)
        return out


def _choose(p: torch.Tensor, sample: int, gen: torch.Generator | None) -> int:
    """Greedy (sample 0) or one draw among the `sample` most likely pieces, renormalised."""
    if sample <= 0:
        return int(torch.argmax(p))
    top = torch.topk(p, min(sample, p.numel()))
    pick = torch.multinomial(top.values / top.values.sum(), 1, generator=gen)
    return int(top.indices[pick])


def continue_text(bundle: Bundle, batch: Batch, *, max_new: int = MAX_NEW, top_k: int = 5,
                  ablate: Iterable[Head] | str = (), record: bool = False, sample: int = 0,
                  seed: int = 0, logits: bool = False) -> list[Generation]:
    """Up to max_new pieces after each source line, stopping at the end-of-text id or at the
    model's last position; `sample` > 0 draws among that many top pieces (seeded by `seed`)."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    heads = checked_heads(bundle, ablate)
    found = sites(model, cfg.family)
    if (heads or record) and found is None:
        raise ValueError("knocking out heads and recording attention during generation need "
                         "the model's attention to go through transformers' "
                         "AttentionInterface, and this model's does not")
    eos = tok.eos_token_id
    device = next(model.parameters()).device
    keep = ({"logits_to_keep": 1}  # the unembedding of the last position only
            if "logits_to_keep" in inspect.signature(model.forward).parameters else {})
    out = []
    for source, row in zip(batch.sources, batch.src_lists, strict=True):
        ids, gen, steps, probs, kept, finished = list(row), [], [], [], [], False
        rows = Rows(found.layers.get("dec_self", 0) if record and found else 0)
        draw = torch.Generator().manual_seed(seed) if sample > 0 else None
        past, feed = None, list(row)
        with torch.inference_mode(), hooks({**ablation_hooks(heads), **rows.hooks()}):
            for _ in range(max_new):
                if len(ids) >= cfg.max_len or not ids:
                    break
                x = torch.tensor([feed], device=device)  # (1, new pieces)
                res = model(input_ids=x, past_key_values=past, use_cache=True, **keep)
                past = res.past_key_values
                last = res.logits[0, -1].float()  # (V,)
                p = torch.softmax(last, dim=-1)
                if logits:
                    kept.append(last.cpu().numpy().copy())
                top = torch.topk(p, min(top_k, p.numel()))
                pieces = piece_names(tok, top.indices.tolist())
                steps.append([(s, float(v)) for s, v in zip(pieces, top.values.tolist())])
                chosen = _choose(p, sample, draw)
                probs.append(float(p[chosen]))
                if eos is not None and chosen == eos:
                    finished = True
                    break
                gen.append(chosen)
                ids.append(chosen)
                feed = [chosen]
        out.append(Generation(
            source=source, target_lang=None, text=tok.decode(gen, skip_special_tokens=True),
            ids=gen, pieces=piece_names(tok, gen), steps=steps,
            probs=probs, finished=finished,
            prompt=[str(p) for p in tok.convert_ids_to_tokens(list(row))], prompt_ids=list(row),
            attn=rows.stacked() if record else [],
            cache_bytes=cache_bytes(past) if record and past is not None else [],
            cache_positions=cache_length(past) if past is not None else 0,
            logits=np.stack(kept) if kept else None, sample=sample, seed=seed))
    return out


def stepped_logits(bundle: Bundle, ids: list[int]) -> torch.Tensor:
    """float32 (n, V): `ids` fed one piece per forward through the model's own cache,
    teacher-forced, under the caller's hooks (each layer's hook points run once per piece, the
    query (1, H, 1, Dh) over every position so far): what the cache-eviction analysis steps
    through when a policy depends on what earlier queries read."""
    model = bundle.model
    device = next(model.parameters()).device
    past, rows = None, []
    with torch.inference_mode():
        for t in ids:
            res = model(input_ids=torch.tensor([[t]], device=device), past_key_values=past,
                        use_cache=True)
            past = res.past_key_values
            rows.append(res.logits[0, -1].float())
    return torch.stack(rows)
