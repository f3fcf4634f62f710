"""Heads grouped by behaviour, for the head atlas: scikit-learn's agglomerative clustering
(average linkage) on the Jensen–Shannon distance matrix, as Clark et al. 2019 (§6) embed BERT's
heads by it. The number of groups is the k in 2..8 (at most heads − 1) with the best mean
silhouette on the same distances; two heads or fewer, or heads that all attend alike (every
distance under SAME_BELOW), make one group.

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
    from sklearn.cluster import AgglomerativeClustering  # ~1 s and ~100 MB: only when asked
    from sklearn.metrics import silhouette_score

    d = 0.5 * (dist + dist.T)
    np.fill_diagonal(d, 0.0)
    best, best_score = np.zeros(n, dtype=int), -np.inf
    for k in range(K_RANGE[0], min(K_RANGE[1], n - 1) + 1):
        labels = AgglomerativeClustering(n_clusters=k, metric="precomputed",
                                         linkage="average").fit_predict(d)
        score = float(silhouette_score(d, labels, metric="precomputed"))
        if score > best_score + 1e-12:  # ties keep the smaller k
            best, best_score = labels, score
    return _renumber(best), best_score


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


def mds_xy(dist: np.ndarray, seed: int = 0) -> np.ndarray:
    """(N, 2) points whose distances follow dist (N, N): metric MDS on the precomputed
    distances (scikit-learn, fixed random_state, one start from classical MDS where the
    version has it), as Clark et al. draw their
    heads. Fewer than three heads, or non-finite distances, lie on a line."""
    n = dist.shape[0]
    if n < 3 or not np.isfinite(dist).all():
        return np.stack([np.arange(n, dtype=float), np.zeros(n)], axis=1)
    from sklearn.manifold import MDS

    d = 0.5 * (dist + dist.T)
    np.fill_diagonal(d, 0.0)
    import inspect

    params = inspect.signature(MDS).parameters
    kwargs = {"n_components": 2, "random_state": seed, "n_init": 1}
    if "metric_mds" in params:  # scikit-learn 1.8: `metric` names the distance, `init` set
        kwargs.update(metric="precomputed", init="classical_mds")
    else:
        kwargs.update(dissimilarity="precomputed")
    return np.asarray(MDS(**kwargs).fit_transform(d), dtype=float)
