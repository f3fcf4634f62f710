"""Teacher-forced scoring of the lab's encoder–decoder (model.forced): log-probabilities of
its translation's ids (or of a given target text), with hooks attached.

Shape legend: B sentences, S source / T target positions, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ...forced import Forced
from ...hooks import HookFn, hooks
from .decode import source_batch
from .langs import target_langs


def _forced(bundle, ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """Decoder input [bos] + ids and output ids + [eos], within the position table."""
    limit = bundle.config.max_len - 1
    body = list(ids)[: limit - 1]
    return [bundle.tokenizer.bos_id, *body], [*body, bundle.tokenizer.eos_id]


def forced_batch(backend, sources: Sequence[str], target_lang: str | None,
                 outputs: Sequence[Sequence[int]] | None = None,
                 target: str | None = None) -> Forced:
    """The batch to score: the translation ids `outputs` (eos excluded; None: the model's own
    greedy translation), or `target` a text to force instead (one sentence)."""
    bundle = backend.bundle
    tok = bundle.tokenizer
    langs = target_langs(bundle, sources, target_lang)
    src, _, _ = source_batch(bundle, sources, langs)
    if target is not None:
        pairs = [tok.target_ids(target, bundle.config.max_len - 1)]
    else:
        if outputs is None:
            done = backend.translate(backend.encode(sources, None, target_lang))
            outputs = [t.ids for t in done]
        pairs = [_forced(bundle, ids) for ids in outputs]
    tgt_in = torch.from_numpy(tok.pad([p[0] for p in pairs]))
    tgt_out = torch.from_numpy(tok.pad([p[1] for p in pairs]))
    return Forced({"src": src, "tgt": tgt_in}, tgt_out, tgt_out.ne(bundle.config.pad_id),
                  [tok.ids_to_pieces(p[1]) for p in pairs], "logp")


def forced_values(bundle, forced: Forced, fns: dict[str, HookFn]) -> torch.Tensor:
    """(B, T) float64 log-probability of each output id (0 at pad), with hooks attached."""
    model = bundle.model
    model.eval()  # idempotent; the cached model is always in eval mode
    with torch.inference_mode(), hooks(fns):
        logits = model(forced.inputs["src"], forced.inputs["tgt"])  # (B, T, V)
    logp = torch.log_softmax(logits.double(), dim=-1)
    tgt_out = forced.out_ids
    picked = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return picked.masked_fill(tgt_out.eq(bundle.config.pad_id), 0.0)
