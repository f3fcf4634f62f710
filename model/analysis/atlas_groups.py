"""Heads grouped by behaviour, for the head atlas: agglomerative clustering with average
linkage (scipy's `linkage` / `fcluster`) on the Jensen–Shannon distance matrix, as Clark et al.
2019 (§6) embed BERT's heads by it. The number of groups is the k in 2..8 (at most heads − 1)
with the best mean silhouette on the same distances (computed here in numpy); two heads or
fewer, or heads that all attend alike (every distance under SAME_BELOW), make one group.
scikit-learn is not imported: its first import costs a server ~80 MB that the soak's bound has
no room for.

Each group is named by what sets it apart: of the atlas's per-head metric means, the one whose
group mean stands furthest from the other heads' mean, in standard deviations of that metric
over all the kind's heads (a z-score); "high" or "low" says which way.

Shape legend: N heads of one kind, layer-major (index = layer · H + head); M metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

K_RANGE = (2, 8)  # the numbers of groups tried
SAME_BELOW = 1e-3  # a distance this small is float32's rounding: the heads attend alike


@dataclass(frozen=True)
class Group:
    """One group of heads: its members as (layer, head), and the metric that sets it apart."""

    members: tuple[tuple[int, int], ...]
    metric: str  # the metric with the largest |z| ("" when the group is every head)
    direction: str  # "high" or "low" ("" likewise)
    z: float  # the group's mean minus the others', over the metric's std across heads
    silhouette: float  # the clustering's mean silhouette at the chosen k (NaN: not clustered)

    @property
    def label(self) -> str:
        """The group's name in words (English; the view translates the parts)."""
        if not self.metric:
            return "all heads"
        return f"{self.direction} {self.metric.replace('_', '-')} (z = {self.z:+.1f})"


def choose_groups(dist: np.ndarray) -> tuple[np.ndarray, float]:
    """(group of each head (N,) numbered 0.., the mean silhouette) for a symmetric (N, N)
    distance matrix: the k in K_RANGE with the best silhouette (NaN when not clustered)."""
    n = dist.shape[0]
    off = dist[~np.eye(n, dtype=bool)]
    if n < 3 or not np.isfinite(dist).all() or off.max(initial=0.0) < SAME_BELOW:
        return np.zeros(n, dtype=int), float("nan")
    from scipy.cluster.hierarchy import fcluster, linkage  # ~25 MB: only when asked
    from scipy.spatial.distance import squareform

    d = 0.5 * (dist + dist.T)
    np.fill_diagonal(d, 0.0)
    tree = linkage(squareform(d, checks=False), method="average")
    best, best_score = np.zeros(n, dtype=int), -np.inf
    for k in range(K_RANGE[0], min(K_RANGE[1], n - 1) + 1):
        labels = fcluster(tree, k, criterion="maxclust")
        # tied merge heights can leave fewer than k groups; one group has no silhouette
        if not 2 <= len(np.unique(labels)) <= n - 1:
            continue
        score = silhouette(d, labels)
        if score > best_score + 1e-12:  # ties keep the smaller k
            best, best_score = labels, score
    if not np.isfinite(best_score):
        return np.zeros(n, dtype=int), float("nan")
    return _renumber(best), best_score


def silhouette(dist: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of labels (N,) on a precomputed distance matrix (N, N): per head,
    a = mean distance to the rest of its own group, b = the smallest mean distance to another
    group, s = (b − a) / max(a, b); s = 0 for a head alone in its group (and where a = b = 0)."""
    groups, idx = np.unique(labels, return_inverse=True)
    member = idx[None, :] == np.arange(len(groups))[:, None]  # (G, N)
    sums = dist @ member.T.astype(float)  # (N, G): each head's summed distance to each group
    sizes = member.sum(1)  # (G,)
    own = sizes[idx]  # (N,)
    rows = np.arange(len(idx))
    a = sums[rows, idx] / np.maximum(own - 1, 1)  # the diagonal is 0: itself adds nothing
    other = sums / sizes[None, :]
    other[rows, idx] = np.inf
    b = other.min(1)
    top = np.maximum(a, b)
    s = np.where((own > 1) & (top > 0), (b - a) / np.where(top > 0, top, 1.0), 0.0)
    return float(s.mean())


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Groups numbered in order of their first head (layer-major), so names are stable."""
    order = {}
    for g in labels:
        order.setdefault(int(g), len(order))
    return np.array([order[int(g)] for g in labels], dtype=int)


def name_group(inside: np.ndarray, means: np.ndarray, metrics: Sequence[str]
               ) -> tuple[str, str, float]:
    """(metric, 'high'|'low', z) that sets the heads `inside` (bool (N,)) apart, from per-head
    metric means (N, M); metrics with a NaN head or no spread are not used."""
    best = ("", "", 0.0)
    if inside.all() or not inside.any():
        return best
    for j, name in enumerate(metrics):
        col = means[:, j]
        if not np.isfinite(col).all():
            continue
        spread = float(col.std())
        if spread < 1e-9:
            continue
        z = float((col[inside].mean() - col[~inside].mean()) / spread)
        if abs(z) > abs(best[2]):
            best = (name, "high" if z > 0 else "low", z)
    return best


def group_heads(dist: np.ndarray, means: np.ndarray, metrics: Sequence[str],
                n_heads: int) -> list[Group]:
    """The groups of one kind's heads: dist (N, N) layer-major, means (N, M) of `metrics`."""
    labels, score = choose_groups(dist)
    out = []
    for g in range(int(labels.max(initial=0)) + 1):
        inside = labels == g
        if not inside.any():
            continue
        metric, direction, z = name_group(inside, means, metrics)
        members = tuple((int(i) // n_heads, int(i) % n_heads) for i in np.flatnonzero(inside))
        out.append(Group(members, metric, direction, z, score))
    return out


def mds_xy(dist: np.ndarray) -> np.ndarray:
    """(N, 2) points whose distances follow dist (N, N): classical (Torgerson) MDS. Clark et
    al. draw their heads by MDS; the classical kind is an eigendecomposition, so the same
    distances always give the same points (no random start): the squared distances are
    double-centred, and the top two eigenvectors, scaled by the square roots of their
    (non-negative) eigenvalues, are the axes. Each axis's sign is fixed so that its largest
    |coordinate| is positive. Fewer than three heads, or non-finite distances, lie on a line."""
    n = dist.shape[0]
    if n < 3 or not np.isfinite(dist).all():
        return np.stack([np.arange(n, dtype=float), np.zeros(n)], axis=1)
    d = 0.5 * (dist + dist.T).astype(float)
    np.fill_diagonal(d, 0.0)
    centre = np.eye(n) - 1.0 / n  # (N, N)
    gram = -0.5 * centre @ (d * d) @ centre  # (N, N), symmetric
    values, vectors = np.linalg.eigh(0.5 * (gram + gram.T))  # ascending
    top = np.argsort(values)[::-1][:2]
    xy = vectors[:, top] * np.sqrt(np.clip(values[top], 0.0, None))  # (N, 2)
    for j in range(2):
        if xy[np.argmax(np.abs(xy[:, j])), j] < 0:
            xy[:, j] = -xy[:, j]
    return xy
