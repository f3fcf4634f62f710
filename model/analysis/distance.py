"""Mean attention score by query-key distance, for any model's recorded scores."""

from __future__ import annotations

import numpy as np


def score_by_distance(scores: np.ndarray, blocked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean score of one head for each relative distance key − query over unblocked cells:
    scores (Q, K), blocked bool (Q, K) -> (distances, means)."""
    q_idx, k_idx = np.nonzero(~blocked)
    if not len(q_idx):
        return np.zeros(0, np.int64), np.zeros(0)
    dist = k_idx - q_idx
    values = scores[q_idx, k_idx].astype(np.float64)
    found = np.unique(dist)
    means = np.array([values[dist == d].mean() for d in found])
    return found, means
