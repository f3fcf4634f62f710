"""Capabilities of a Hugging Face bundle, read from its config and modules (no model run)."""

from __future__ import annotations

from ...checkpoint import Bundle
from ..base import Capabilities


def hf_capabilities(bundle: Bundle):
    """model.backends.Capabilities for a Hugging Face bundle."""
    from .positions import rotary_frequencies, t5_bias
    from .projections import projection_modules
    from .recorder import instrumented

    cfg = bundle.config
    hf = cfg.hf
    model = bundle.model
    names = (n for n, _ in model.named_parameters())
    if rotary_frequencies(model) is not None:
        positional = "rotary"
    elif t5_bias(model, 2):
        positional = "relative_bias"
    elif any(n.endswith(("wpe.weight", "position_embeddings.weight", "embed_positions.weight"))
             for n in names):
        positional = "learned"
    else:
        positional = "none"  # or sinusoidal computed on the fly (Marian): no table to show
    n_kv = getattr(hf, "num_key_value_heads", None)
    grouped = bool(n_kv) and int(n_kv) != cfg.n_heads
    recorded = instrumented(bundle)
    try:  # the output projections the weighted norms (and the flow graph) need
        projections = projection_modules(model, cfg.family)
    except ValueError:  # layers not numbered 0..n-1: a layout the lab does not know
        projections = {}
    # Post-LN families (BERT, Marian, BART…) normalise after each block, so a logit is not a
    # sum of per-head terms; decoder-only pre-LN families (GPT-2, Llama, Mistral, Qwen…) are.
    post_ln = cfg.model_type in {"bert", "roberta", "distilbert", "marian", "bart", "electra"}
    return Capabilities(
        lab=False, translates=False, kinds=bundle.kinds, family=cfg.family,
        positional=positional, norm="post" if post_ln else "pre", grouped_kv=grouped,
        head_outputs=recorded, ablates=recorded,
        logit_attribution=recorded and cfg.family == "decoder" and not post_ln,
        logit_lens=cfg.family == "decoder" and bundle.model.get_output_embeddings() is not None,
        generates=cfg.family == "decoder" and bundle.model.get_output_embeddings() is not None,
        weighted_norms=bool(projections),
        long_context=recorded and cfg.family in ("decoder", "encoder")
        and positional != "relative_bias",
        components=bool(projections) and positional in ("learned", "rotary", "relative_bias"),
        # a sentence-transformers encoder with a pooling the lab computes (hf/embed.py)
        embeds=cfg.family == "encoder" and bundle.sentence is not None
        and bundle.sentence.pooling != "none",
        d_ff=int(getattr(hf, "intermediate_size", None) or getattr(hf, "n_inner", None)
                 or getattr(hf, "d_ff", None) or getattr(hf, "encoder_ffn_dim", None) or 0))
