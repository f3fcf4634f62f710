"""chrF and exact match written from their definitions, for tests that recompute a card's
figures without calling training.evaluate (the code that wrote them).

chrF: character 1..6-grams with spaces removed, matched counts clipped per n-gram, precision
and recall each summed over the whole corpus per order and averaged over the orders, then
F-beta with beta = 2 (recall weighted), 0-100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

ORDERS, BETA = 6, 2.0


def counts(hyp: str, ref: str) -> np.ndarray:
    """(3, ORDERS): matched, hypothesis and reference character n-grams of one sentence."""
    hyp, ref = hyp.replace(" ", ""), ref.replace(" ", "")
    out = np.zeros((3, ORDERS))
    for n in range(1, ORDERS + 1):
        h = Counter(hyp[i:i + n] for i in range(len(hyp) - n + 1))
        r = Counter(ref[i:i + n] for i in range(len(ref) - n + 1))
        out[:, n - 1] = sum(min(c, r[g]) for g, c in h.items()), sum(h.values()), sum(r.values())
    return out


def from_counts(total: np.ndarray) -> float:
    """Corpus chrF (0-100) from (3, ORDERS) counts summed over the sentences."""
    hit, hyp, ref = total
    prec = float(np.mean([m / h if h else 0.0 for m, h in zip(hit, hyp, strict=True)]))
    rec = float(np.mean([m / r if r else 0.0 for m, r in zip(hit, ref, strict=True)]))
    if prec + rec == 0:
        return 0.0
    return 100 * (1 + BETA**2) * prec * rec / (BETA**2 * prec + rec)


def chrf(hyps: Sequence[str], refs: Sequence[str]) -> float:
    """Corpus chrF of outputs against references."""
    per = [counts(h, r) for h, r in zip(hyps, refs, strict=True)]
    return from_counts(np.sum(per, axis=0)) if per else 0.0


def exact(hyps: Sequence[str], refs: Sequence[str]) -> int:
    """How many outputs equal their reference, outer spaces ignored."""
    return sum(h.strip() == r.strip() for h, r in zip(hyps, refs, strict=True))
