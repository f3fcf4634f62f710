"""model.analysis.pca.principal_axes against the covariance's eigendecomposition."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from model.analysis.pca import principal_axes


def test_axes_are_the_covariances_top_eigenvectors():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6)) @ rng.normal(size=(6, 6)) + 3.0  # (N, D), off-centre
    mean, axes, shares = principal_axes(x, k=3)
    np.testing.assert_allclose(mean, x.mean(0), atol=1e-12)
    centred = x - x.mean(0)
    values, vectors = np.linalg.eigh(centred.T @ centred)
    top = np.argsort(values)[::-1][:3]
    for axis, vec in zip(axes, vectors[:, top].T, strict=True):
        assert abs(float(axis @ vec)) == pytest.approx(1.0, abs=1e-9)  # same line
        assert axis[np.argmax(np.abs(axis))] > 0  # the sign convention
    np.testing.assert_allclose(shares, values[top] / values.sum(), rtol=1e-9)


def test_fewer_points_than_axes_gives_zero_rows():
    mean, axes, shares = principal_axes(np.array([[1.0, 2.0, 3.0]]), k=2)
    assert axes.shape == (2, 3) and not axes.any() and not shares.any()
    mean, axes, shares = principal_axes(np.array([[0.0, 0.0], [2.0, 0.0]]), k=2)
    np.testing.assert_allclose(axes[0], [1.0, 0.0])
    assert shares.tolist() == [1.0, 0.0]


def test_the_pca_map_does_not_import_scikit_learn():
    """The point of pca.py: scikit-learn (and scipy.stats) stay out of a server that only
    draws PCA planes. Checked in a fresh interpreter, since the suite imports sklearn."""
    import subprocess

    code = ("import sys, numpy as np\n"
            "from model.analysis.qkmap import embed\n"
            "embed(np.random.default_rng(0).normal(size=(50, 8)), 'pca', 0)\n"
            "import viz.embeddings\n"
            "print('sklearn' in sys.modules, 'scipy.stats' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(__import__("tests.conftest").conftest.ROOT))
    assert out.stdout.split() == ["False", "False"]


# ---- t-SNE (model.analysis.qkmap): neighbours kept, not just the output's shape ------------


def _planted(rng: np.random.Generator, sizes=(15, 30, 45), dim: int = 16):
    """Tight clusters far apart in `dim` dimensions, of different sizes (so no reordering of
    the rows can keep every cluster whole by renaming them), in a random order."""
    centres = rng.normal(size=(len(sizes), dim)) * 10.0
    labels = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    return centres[labels] + rng.normal(size=(len(labels), dim)) * 0.3, labels


def _kept_apart(xy: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(share of points whose nearest 2-D neighbour has their label, smallest ratio of the
    distance between two clusters' centres to the larger cluster's mean radius)."""
    dist = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
    np.fill_diagonal(dist, np.inf)
    same = float(np.mean(labels[dist.argmin(1)] == labels))
    groups = np.unique(labels)
    centre = {g: xy[labels == g].mean(0) for g in groups}
    radius = {g: np.linalg.norm(xy[labels == g] - centre[g], axis=1).mean() for g in groups}
    ratio = min(np.linalg.norm(centre[a] - centre[b]) / max(radius[a], radius[b])
                for a in groups for b in groups if a < b)
    return same, ratio


def test_tsne_keeps_planted_clusters_apart_in_the_input_order():
    """Each 2-D row is its own input row's image: clusters stay clusters with their labels.
    A map whose rows were shuffled against the input (or that mixed clusters) fails."""
    from model.analysis.qkmap import embed

    x, labels = _planted(np.random.default_rng(1))
    xy, explained = embed(x, "tsne", seed=0)
    assert xy.shape == (len(x), 2) and explained == ()
    same, ratio = _kept_apart(xy, labels)
    assert same == 1.0, same  # every nearest neighbour in the map is from its own cluster
    assert ratio > 3, ratio  # clusters several of their own radii apart
    # the check itself can fail: the same map with its rows shuffled against the labels
    shuffled = xy[np.random.default_rng(2).permutation(len(xy))]
    assert _kept_apart(shuffled, labels)[0] < 0.7


def test_tsne_map_of_a_head_keeps_each_sentences_points_with_their_tokens():
    """Through head_points: the planted per-sentence clusters of queries and keys come back
    with their sentence and token metadata attached to the right rows."""
    from types import SimpleNamespace

    from model.analysis.qkmap import head_points

    rng = np.random.default_rng(3)
    lengths, d_h = (8, 12, 16), 8  # unequal: a mix-up of sentences cannot pass unseen
    n_sent, n_pts = len(lengths), sum(lengths)
    centres = rng.normal(size=(n_sent, d_h)) * 10.0
    q = [(centres[s] + rng.normal(size=(1, 1, n, d_h)) * 0.3).astype(np.float32)
         for s, n in enumerate(lengths)]  # per sentence (L=1, H=1, n, Dh)
    k = [(centres[s] + rng.normal(size=(1, 1, n, d_h)) * 0.3).astype(np.float32)
         for s, n in enumerate(lengths)]
    tokens = [[f"s{s}t{i}" for i in range(n)] for s, n in enumerate(lengths)]
    data = SimpleNamespace(q={"enc_self": q}, k={"enc_self": k}, kv_groups=None,
                           tokens={"src": tokens, "tgt": tokens},
                           langs={"src": ["en"] * n_sent, "tgt": ["ko"] * n_sent},
                           texts={"src": [f"sentence {s}" for s in range(n_sent)],
                                  "tgt": [""] * n_sent})
    pts = head_points(data, "enc_self", 0, 0, method="tsne", seed=0)
    assert pts.xy.shape == (2 * n_pts, 2) and pts.is_query.sum() == n_pts
    assert [int(t[1]) for t in pts.token] == pts.sentence.tolist()  # "s{s}t{i}" rows agree
    same, ratio = _kept_apart(pts.xy.astype(np.float64), pts.sentence)
    assert same >= 0.95 and ratio > 2, (same, ratio)
