"""Analyses built on a Trace or on runs of the model: head statistics, alignment, ablation,
rollout, logit lens, the per-head weights the steps view shows, head detectors, the
query–key decomposition and composition scores between heads, and the key/value cache's
eviction what-ifs (`eviction(bundle, text, policy, budget)`; the module of the same name keeps
the masks and the sweep), and the head atlas over a corpus (`head_atlas(bundle, lines=None)`)."""

from .atlas import Atlas, head_atlas
from .components import QKComponents, qk_components
from .composition import composition_scores
from .detectors import detect_heads
from .eviction import Eviction, eviction
from .ovparts import OVComponents, ov_components
from .qkterms import qk_terms
from .similarity import HeadSimilarity, SimilarityTerms, head_similarity, similarity_terms

__all__ = ["Atlas", "Eviction", "HeadSimilarity", "OVComponents", "QKComponents",
           "SimilarityTerms", "composition_scores", "detect_heads", "eviction", "head_atlas",
           "head_similarity", "ov_components", "qk_components", "qk_terms", "similarity_terms"]
