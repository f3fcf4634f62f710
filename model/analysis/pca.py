"""Principal axes by one SVD: the 2-D planes of the embeddings view and the query–key map.

Not scikit-learn's PCA: importing sklearn imports scipy.stats, ~120 MB that a server then keeps
for good, and a plane needs only the SVD. (The map's t-SNE still comes from scikit-learn.)

Shape legend: N points, D features, K axes.
"""

from __future__ import annotations

import numpy as np


def principal_axes(x: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean (D,), the top-k principal axes (K, D) and each axis's share of the variance (K,).

    Each axis is signed so that its largest-magnitude entry is positive; axes beyond the rank of
    the centred data (fewer distinct points than k + 1) are zero rows with a zero share.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])  # (N, D)
    mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
    _, s, vt = np.linalg.svd(x - mean, full_matrices=False)  # s (min(N, D),), vt (., D)
    rank = int(np.sum(s > (s[0] if len(s) else 0.0) * 1e-12)) if len(s) and s[0] > 0 else 0
    m = min(k, rank)
    axes = np.zeros((k, x.shape[1]))
    axes[:m] = vt[:m]
    for axis in axes[:m]:
        if axis[np.argmax(np.abs(axis))] < 0:
            axis *= -1
    total = float(np.sum(s**2))
    shares = np.zeros(k)
    if total > 0:
        shares[:m] = s[:m] ** 2 / total
    return mean, axes, shares
