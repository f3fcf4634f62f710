"""The shapes a Hugging Face capture will have, for model/budget.py's estimate (from a Batch)."""

from __future__ import annotations

from ...budget import Dims
from .record import skips_logits  # logits_to_keep: one logit row when none are recorded

# how a recorded Hugging Face forward spends memory beyond the Trace (budget.Dims): the
# recorder's softmax output is one (B, H, Q, K) unless a slab takes it; the family's 4D float
# mask per kind; output_hidden_states returns every layer's hidden state, stacked into the
# Trace afterwards (two copies at the end); the LM head runs whether logits are recorded or not
FORWARD_COSTS = {"attn_copies": 1, "float_masks": True, "hidden_copies": 2, "lm_head": True}


def hf_dims(bundle, batch) -> Dims:
    """Dims of capture_hf on a model.batch.Batch (tokenized by the recorder's own encode_ids, so
    the lengths agree): text on the source side for encoder-only models, on the target side
    for decoder-only ones; without targets an encoder–decoder model may generate up to
    min(max_len - 1, 2 × source + 10) pieces (record.target_lists)."""
    cfg, hf = bundle.config, bundle.config.hf
    texts, targets = batch.src_lists, batch.extra.get("targets")
    n = max(len(t) for t in texts)
    if cfg.family == "seq2seq":
        if targets is not None:
            tgt = max(len(t) for t in targets)
        else:
            tgt = min(cfg.max_len, 1 + max(1, min(cfg.max_len - 1, 2 * n + 10)))
        src = n
    else:
        src, tgt = (n, 0) if cfg.family == "encoder" else (0, n)
    d_ff = (getattr(hf, "intermediate_size", None) or getattr(hf, "n_inner", None)
            or getattr(hf, "d_ff", None) or getattr(hf, "encoder_ffn_dim", None)
            or 4 * cfg.d_model)
    d_head = getattr(hf, "head_dim", None) or cfg.d_model // cfg.n_heads
    kv = getattr(hf, "num_key_value_heads", None) or cfg.n_heads
    # an encoder-only model has logits only with a language-model head (e.g. BertForMaskedLM)
    lm = type(bundle.model).__name__.endswith(("LM", "LMHeadModel", "Generation"))
    rows = (src if lm else 0) if cfg.family == "encoder" else -1
    return Dims(batch=len(texts), src=src, tgt=tgt,
                layers={k: bundle.n_layers(k) for k in bundle.kinds}, heads=cfg.n_heads,
                d_head=int(d_head), d_model=cfg.d_model, d_ff=int(d_ff), vocab=cfg.vocab_size,
                kv_heads=int(kv), max_len=cfg.max_len, logit_rows=rows, **FORWARD_COSTS,
                lm_trim=skips_logits(bundle.model),
                # BART/Marian add final_logits_bias after the LM head: two (B, n, V) at once
                logit_copies=1 + (getattr(bundle.model, "final_logits_bias", None) is not None))
