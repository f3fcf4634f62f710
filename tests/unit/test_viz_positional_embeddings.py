"""viz.positional and viz.embeddings: figure data equals the numbers in the Trace."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from model import capture
from model.backends.lab.positional import sinusoid_table
from model.capture import GROUPS
from viz import embeddings, positional
from viz.common import DIVERGING

EXTRA = ["encoder.hook_tok", "encoder.hook_pos", "decoder.hook_tok", "decoder.hook_pos"]
NASTY = "</script><b>x</b>"


@pytest.fixture(scope="module")
def trace(bundle):
    # teacher-forced targets keep the decoder side short and fixed (a random model's own
    # greedy output can run to max length)
    return capture(bundle, ["Winter is cold.", "The big dog eats fish."],
                   ["겨울은 추워요.", "큰 개가 생선을 먹어요."], target_lang="ko",
                   names=list(GROUPS) + EXTRA)


def _check_style(fig: go.Figure) -> None:
    layout = fig.layout
    assert layout.title.text
    assert layout.template.layout.paper_bgcolor == "white"  # plotly_white
    for trace_ in fig.data:
        scale = getattr(trace_, "colorscale", None)
        if scale is not None:  # the shared DIVERGING scale or Viridis, as colour lists
            assert scale[0][1] in (DIVERGING[0][1], "#440154")
            if scale[0][1] == DIVERGING[0][1]:  # red on top, as every diverging chart
                assert scale[-1][1] == "rgb(103,0,31)"


def _unpadded(trace, side, b):
    tokens = trace.src_tokens[b] if side == "enc" else trace.tgt_tokens[b]
    return trace.hidden[side][:, b, : len(tokens)].astype(np.float64), tokens


# --- positional ---------------------------------------------------------------------------

def test_table_heatmap_rows_and_axes(trace):
    fig = positional.table_heatmap(trace.pos_table, n_positions=20)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), trace.pos_table[:20])
    assert fig.layout.xaxis.title.text == "Depth (dimension)"
    assert fig.layout.yaxis.title.text == "Position"
    assert fig.data[0].zmin == -fig.data[0].zmax and fig.data[0].zmid == 0
    assert "pad" in fig.layout.title.text
    _check_style(fig)
    full = positional.table_heatmap(trace.pos_table)
    assert np.asarray(full.data[0].z).shape == trace.pos_table.shape


def test_dimension_curves_sin_cos_names_and_values():
    table = sinusoid_table(50, 16).numpy()
    fig = positional.dimension_curves(table, [4, 5], n_positions=30)
    assert [t.name for t in fig.data] == ["dim 4 (sin)", "dim 5 (cos)"]
    np.testing.assert_array_equal(np.asarray(fig.data[0].y), table[:30, 4])
    np.testing.assert_array_equal(np.asarray(fig.data[1].x), np.arange(30))
    learned = np.random.default_rng(0).normal(size=(50, 16)).astype(np.float32)
    fig = positional.dimension_curves(learned, [3], n_positions=30)
    assert fig.data[0].name == "dim 3"
    np.testing.assert_array_equal(np.asarray(fig.data[0].y), learned[:30, 3])
    _check_style(fig)
    with pytest.raises(ValueError):
        positional.dimension_curves(learned, [16], n_positions=30)


def test_position_similarity_dot_and_cosine(trace):
    rows = trace.pos_table[:25].astype(np.float64)
    fig = positional.position_similarity(trace.pos_table, 25)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), rows @ rows.T, rtol=1e-10)
    _check_style(fig)
    cos = np.asarray(positional.position_similarity(trace.pos_table, 25, "cosine").data[0].z)
    np.testing.assert_allclose(np.diag(cos), 1.0, atol=1e-9)
    with pytest.raises(ValueError):
        positional.position_similarity(trace.pos_table, 25, "euclid")


@pytest.mark.parametrize("side", ["enc", "dec"])
def test_term_sizes_equal_numpy_norms(trace, side):
    stack = "encoder" if side == "enc" else "decoder"
    for b in range(2):
        tokens = trace.src_tokens[b] if side == "enc" else trace.tgt_tokens[b]
        n = len(tokens)
        fig = positional.term_sizes(trace, b, side)
        tok, pos = fig.data
        np.testing.assert_allclose(
            tok.y, np.linalg.norm(trace.acts[f"{stack}.hook_tok"][b, :n], axis=-1), rtol=1e-6)
        np.testing.assert_allclose(
            pos.y, np.linalg.norm(trace.acts[f"{stack}.hook_pos"][b, :n], axis=-1), rtol=1e-6)
        assert len(set(tok.x)) == n and tok.x[0].startswith("1:")
        assert fig.layout.barmode == "group"
        _check_style(fig)


def test_term_sizes_without_acts_raises(trace):
    bare = SimpleNamespace(acts={}, src_tokens=trace.src_tokens, tgt_tokens=trace.tgt_tokens)
    with pytest.raises(ValueError, match="hook_tok"):
        positional.term_sizes(bare, 0)


def test_compare_tables_share_symmetric_range():
    a = sinusoid_table(40, 16).numpy()
    b = 3 * np.random.default_rng(1).normal(size=(40, 16))
    fig = positional.compare_tables(a, b, ("paper", "seed001"), n_positions=30)
    left, right = fig.data
    assert left.zmin == right.zmin == -np.abs(b[:30]).max()
    assert left.zmax == right.zmax == -left.zmin
    np.testing.assert_array_equal(np.asarray(right.z), b[:30])
    _check_style(fig)


# --- embeddings ---------------------------------------------------------------------------

def _pca_by_eigh(hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Oracle: the top-2 principal axes from the eigenvectors of the covariance matrix (not an
    SVD of the data), each signed so its largest-magnitude entry is positive, and the share of
    variance they explain."""
    x = hidden.reshape(-1, hidden.shape[-1])
    mean = x.sum(axis=0) / len(x)
    cov = (x - mean).T @ (x - mean)
    values, vectors = np.linalg.eigh(cov)  # ascending
    top = vectors[:, ::-1][:, :2].T.copy()  # (2, D)
    for c in top:
        c *= np.sign(c[np.argmax(np.abs(c))])
    return mean, top, float(values[::-1][:2].sum() / values.sum())


@pytest.mark.parametrize("side", ["enc", "dec"])
def test_pca_projection_against_an_eigendecomposition(trace, side):
    b = 1
    hidden, tokens = _unpadded(trace, side, b)
    mean, axes, share = _pca_by_eigh(hidden)
    for layer in (None, 0, hidden.shape[0] - 1):
        fig = embeddings.pca_trajectories(trace, side, b, layer=layer)
        points = fig.data[1:]  # fig.data[0] draws the paths
        assert len(points) == hidden.shape[0]
        for i, pts in enumerate(points):  # layer i: every token in the one shared plane
            want = (hidden[i] - mean) @ axes.T
            np.testing.assert_allclose(pts.x, want[:, 0], atol=1e-6)
            np.testing.assert_allclose(pts.y, want[:, 1], atol=1e-6)
        path = np.asarray(fig.data[0].x, dtype=np.float64)  # token 0's path through layers
        np.testing.assert_allclose(path[: hidden.shape[0]],
                                   (hidden[:, 0] - mean) @ axes[0], atol=1e-6)
    assert f"explained variance {share * 100:.1f}%" in fig.layout.title.text
    shown = [t.replace("<", "&lt;").replace(">", "&gt;") for t in tokens]  # "<s>", "</s>"
    assert list(points[-1].text) == [f"{i}:{t}" for i, t in enumerate(shown, 1)]
    _check_style(fig)


def test_cosine_by_layer_diagonal_and_labels(trace):
    hidden, tokens = _unpadded(trace, "enc", 1)
    fig = embeddings.cosine_by_layer(trace, "enc", 1, layer=2)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (len(tokens), len(tokens))
    np.testing.assert_allclose(np.diag(z), 1.0, atol=1e-9)
    unit = hidden[2] / np.linalg.norm(hidden[2], axis=-1, keepdims=True)
    np.testing.assert_allclose(z, unit @ unit.T, atol=1e-9)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1, 1)
    assert len(set(fig.data[0].x)) == len(tokens)
    _check_style(fig)
    with pytest.raises(ValueError):
        embeddings.cosine_by_layer(trace, "enc", 1, layer=3)


def test_norms_and_layer_change(trace):
    hidden, tokens = _unpadded(trace, "dec", 0)
    fig = embeddings.norms_by_layer(trace, "dec", 0)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), np.linalg.norm(hidden, axis=-1),
                               rtol=1e-12)
    _check_style(fig)
    fig = embeddings.layer_change(trace, "dec", 0)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (hidden.shape[0] - 1, len(tokens))
    a, b = hidden[1], hidden[0]
    cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    np.testing.assert_allclose(z[0], 1 - cos, atol=1e-9)
    rel = np.asarray(embeddings.layer_change(trace, "dec", 0, metric="relative").data[0].z)
    np.testing.assert_allclose(rel[0], np.linalg.norm(a - b, axis=-1) / np.linalg.norm(b, axis=-1))
    _check_style(fig)


def test_logit_lens_figure():
    lens = {"layers": [0, 1, 2], "tokens": ["<s>", "▁겨울", "은"],
            "top": [[[("은", 0.5), ("는", 0.2)], [("▁a", 0.1)], [(NASTY, 0.9), ("x", 0.05)]]
                    for _ in range(3)]}
    fig = embeddings.logit_lens_figure(lens)
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z), [[0.5, 0.1, 0.9]] * 3)
    assert heat.text[0][0] == "은"
    assert "는" in heat.customdata[0][0]
    assert "<b>" not in fig.to_json()
    _check_style(fig)
    with pytest.raises(ValueError):
        embeddings.logit_lens_figure({**lens, "layers": [0, 1]})


def test_labels_are_escaped_unique_and_show_pieces():
    tokens = ["▁the", NASTY, "▁the", "a&b"]
    rng = np.random.default_rng(2)
    fake = SimpleNamespace(
        src_tokens=[tokens], tgt_tokens=[tokens],
        hidden={"enc": rng.normal(size=(3, 1, 6, 8)).astype(np.float32)},
        acts={"encoder.hook_tok": rng.normal(size=(1, 6, 8)),
              "encoder.hook_pos": rng.normal(size=(1, 6, 8))})
    figs = [positional.term_sizes(fake, 0), embeddings.pca_trajectories(fake, "enc", 0, 1),
            embeddings.cosine_by_layer(fake, "enc", 0, 0),
            embeddings.norms_by_layer(fake, "enc", 0), embeddings.layer_change(fake, "enc", 0),
            positional.compare_tables(np.ones((3, 2)), np.zeros((3, 2)), (NASTY, "b"), 3)]
    for fig in figs:
        text = fig.to_json()
        assert "<b>" not in text and "<script" not in text and "</script" not in text
    labels = list(figs[2].data[0].x)
    assert labels == ["1:▁the", "2:&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;", "3:▁the", "4:a&amp;b"]


def test_long_input_draws_without_cell_text():
    n, rng = 300, np.random.default_rng(3)
    tokens = [f"▁w{i % 17}" for i in range(n)]
    fake = SimpleNamespace(
        src_tokens=[tokens], tgt_tokens=[tokens],
        hidden={"enc": rng.normal(size=(4, 1, n + 5, 16)).astype(np.float32)},
        acts={"encoder.hook_tok": rng.normal(size=(1, n, 16)),
              "encoder.hook_pos": rng.normal(size=(1, n, 16))})
    for fig in (embeddings.cosine_by_layer(fake, "enc", 0, 3),
                embeddings.norms_by_layer(fake, "enc", 0),
                embeddings.layer_change(fake, "enc", 0)):
        heat = fig.data[0]
        assert np.asarray(heat.z).shape[-1] == n
        assert heat.texttemplate is None and heat.text is None
    fig = embeddings.pca_trajectories(fake, "enc", 0, layer=2)
    assert all(t.text is None for t in fig.data) and len(fig.data) == 5
    lens = {"layers": [0, 1], "tokens": tokens, "top": [[[("a", 0.5)]] * n] * 2}
    heat = embeddings.logit_lens_figure(lens).data[0]
    assert heat.text is None and heat.texttemplate is None
    fig = positional.table_heatmap(sinusoid_table(520, 128).numpy())
    assert fig.data[0].text is None
