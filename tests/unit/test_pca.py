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
            "from model.analysis.qkmap import _embed\n"
            "_embed(np.random.default_rng(0).normal(size=(50, 8)), 'pca', 0)\n"
            "import viz.embeddings\n"
            "print('sklearn' in sys.modules, 'scipy.stats' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(__import__("tests.conftest").conftest.ROOT))
    assert out.stdout.split() == ["False", "False"]
