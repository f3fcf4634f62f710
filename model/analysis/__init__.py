"""Analyses built on a Trace or on runs of the model: head statistics, alignment, ablation,
rollout, logit lens, the per-head weights the steps view shows, head detectors and the
query–key decomposition."""

from .detectors import detect_heads
from .qkterms import qk_terms

__all__ = ["detect_heads", "qk_terms"]
