"""Analyses built on a Trace or on runs of the model: head statistics, alignment, ablation,
rollout, logit lens, the per-head weights the steps view shows, head detectors, the
query–key decomposition and composition scores between heads."""

from .components import QKComponents, qk_components
from .composition import composition_scores
from .detectors import detect_heads
from .ovparts import OVComponents, ov_components
from .qkterms import qk_terms
from .similarity import HeadSimilarity, SimilarityTerms, head_similarity, similarity_terms

__all__ = ["HeadSimilarity", "OVComponents", "QKComponents", "SimilarityTerms",
           "composition_scores", "detect_heads", "head_similarity", "ov_components",
           "qk_components", "qk_terms", "similarity_terms"]
