"""The shapes (model/budget.py Dims) of a capture on the lab's own model."""

from __future__ import annotations

from ...budget import Dims
from .decode import default_max_steps


def native_dims(bundle, batch) -> Dims:
    """Dims of capture(...) on the lab's own model, from a model.batch.Batch (already
    tokenized; allocates nothing big). Without targets, T is the longest translation greedy
    decoding may produce."""
    cfg, model = bundle.config, bundle.model
    src = max(len(x) for x in batch.src_lists) if model.encoder is not None else 0
    steps = 0
    if model.decoder is None:
        tgt = 0
    elif batch.tgt_lists is not None:  # given targets, or a decoder-only model's own text
        tgt = max(len(t) for t in batch.tgt_lists)
    else:
        steps = default_max_steps(bundle, src)  # the longest row's room, any rows
        tgt = min(cfg.max_len - 1, 1 + steps)
    return Dims(batch=len(batch.sources), src=src, tgt=tgt,
                layers={k: bundle.n_layers(k) for k in bundle.kinds}, heads=cfg.n_heads,
                d_head=cfg.d_model // cfg.n_heads, d_model=cfg.d_model, d_ff=cfg.d_ff,
                vocab=cfg.vocab_size, max_len=cfg.max_len, decode_steps=steps)
