"""Backends: the one place that knows which kind a model is.

Everyone else asks `capabilities(bundle)` (or `backend_for(bundle)`, once the backend
interface lands) and never compares `bundle.kind`. A third model kind is one module here
plus one registry line.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checkpoint import Bundle


@dataclass(frozen=True)
class Capabilities:
    """What a loaded model can do, so views and analyses branch on abilities, not kinds."""

    lab: bool  # one of this project's own Transformers (checkpoints/ or save_checkpoint)
    translates: bool  # greedy translation through model.translate (the lab's encoder–decoders)
    kinds: tuple[str, ...]  # attention kinds present: enc_self, dec_self, cross
    family: str  # "seq2seq", "decoder" (decoder-only) or "encoder" (encoder-only)
    positional: str  # "sinusoidal" | "learned" | "rotary" | "relative_bias" | "none"
    norm: str  # "pre" or "post" LayerNorm: logit attribution is exact only for "pre"
    grouped_kv: bool  # query heads share key/value heads (GQA/MQA)
    head_outputs: bool  # per-head context and W_O are known (norms, contributions, patching)
    ablates: bool  # heads can be knocked out through the recorder
    logit_attribution: bool  # direct logit attribution is possible (pre-LN with a final norm)


def capabilities(bundle: Bundle) -> Capabilities:
    """Capabilities of a loaded bundle (cheap; no model run)."""
    if bundle.kind == "native":
        cfg = bundle.config
        family = ("seq2seq" if cfg.n_enc_layers and cfg.n_dec_layers
                  else "decoder" if cfg.n_dec_layers else "encoder")
        return Capabilities(
            lab=True, translates="cross" in bundle.kinds, kinds=bundle.kinds, family=family,
            positional=cfg.pos_encoding, norm=cfg.norm, grouped_kv=False, head_outputs=True,
            ablates="cross" in bundle.kinds,
            logit_attribution=cfg.norm == "pre" and cfg.n_dec_layers > 0)
    from ..hf.capabilities import hf_capabilities

    return hf_capabilities(bundle)


__all__ = ["Capabilities", "capabilities"]
