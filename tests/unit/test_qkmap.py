"""The global query–key map: the shift/scale keeps each head's attention, PCA is PCA, caching."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from model import capture
from model.analysis import qkmap
from training.corpus import generate
from viz.qkmap import COLOUR_BY, qkmap_figure


@pytest.fixture(scope="module")
def sentences():
    return qkmap.corpus_sentences(generate(12, seed=7), n=12)


@pytest.fixture(scope="module")
def cache(bundle, sentences):
    return qkmap.QKMapCache(bundle, sentences, batch=5)


@pytest.mark.parametrize("kind", ["enc_self", "dec_self", "cross"])
def test_shifted_scaled_vectors_give_the_models_attention(cache, bundle, sentences, kind):
    """softmax(q'·k'/√Dh) over one sentence's keys equals the recorded attention."""
    layer, head = 1, 2
    q_all, k_all, qs, ks = qkmap.head_vectors(cache.data(), kind, layer, head)
    s = 3
    q0 = sum(len(x) for x in qs[:s])
    k0 = sum(len(x) for x in ks[:s])
    q, k = q_all[q0:q0 + len(qs[s])], k_all[k0:k0 + len(ks[s])]
    sent = sentences[s]
    tr = capture(bundle, [sent.source], [sent.target], target_lang=sent.target_lang,
                 names=["attn"])
    scores = q @ k.T / np.sqrt(q.shape[1])
    if kind == "dec_self":
        scores = np.where(np.triu(np.ones_like(scores, bool), 1), -np.inf, scores)
    probs = np.exp(scores - scores.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    n_q, n_k = probs.shape
    np.testing.assert_allclose(probs, tr.attn[kind][layer, 0, head, :n_q, :n_k], atol=1e-5)
    np.testing.assert_allclose(q_all.mean(0), k_all.mean(0), atol=1e-9)  # keys shifted


def test_pca_map_is_the_first_two_principal_axes(cache):
    pts = cache.get("cross", 0, 1, "pca")
    q_all, k_all, _, _ = qkmap.head_vectors(cache.data(), "cross", 0, 1)
    x = np.concatenate([q_all, k_all])
    x = x - x.mean(0)
    # oracle: the covariance's eigendecomposition (the map itself uses an SVD)
    values, vectors = np.linalg.eigh(x.T @ x)
    top = np.argsort(values)[::-1][:2]
    expect = x @ vectors[:, top]
    np.testing.assert_allclose(np.abs(pts.xy), np.abs(expect), rtol=1e-4, atol=1e-4)
    assert pts.explained == pytest.approx(tuple(values[top] / values.sum()), rel=1e-6)
    n_q, n_k = len(q_all), len(k_all)
    assert pts.is_query.sum() == n_q and (~pts.is_query).sum() == n_k
    assert len(pts.token) == len(pts.position) == len(pts.lang) == n_q + n_k
    assert set(pts.lang) == {"en", "ko"}


def test_each_head_is_computed_once_from_one_capture(bundle, sentences, monkeypatch):
    calls = []
    real = qkmap.capture
    monkeypatch.setattr(qkmap, "capture", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    c = qkmap.QKMapCache(bundle, sentences[:4], batch=64)
    first = c.get("enc_self", 0, 0)
    n = len(calls)
    assert n == 2  # one per target language in the batch
    assert c.get("enc_self", 0, 0) is first
    c.get("dec_self", 1, 3)
    assert len(calls) == n
    t = c.get("enc_self", 0, 0, "tsne")
    assert t.xy.shape == first.xy.shape and np.isfinite(t.xy).all()
    with pytest.raises(ValueError, match="layer"):
        c.get("enc_self", 5, 0)
    with pytest.raises(ValueError, match="method"):
        c.get("enc_self", 0, 0, "umap")


@pytest.mark.parametrize("colour_by", COLOUR_BY)
def test_figure_escapes_tokens_and_sentences(cache, colour_by):
    pts = cache.get("enc_self", 0, 0)
    pts = qkmap.QKPoints(**{**vars(pts), "token": ["<b>x</b>"] * len(pts.token),
                            "texts": ["</script><img src=x>"] * len(pts.texts)})
    fig = qkmap_figure(pts, "enc_self", 0, 0, colour_by)
    go.Figure(fig.to_dict())  # plotly validates every property
    assert sum(len(t.x) for t in fig.data) == len(pts.token)
    hover = " ".join(" ".join(t.text) for t in fig.data)
    assert "<b>" not in hover and "<img" not in hover and "&lt;img" in hover
