"""Many-panel figures at real sizes (issue 30), on synthetic decoder traces (random
attention rows, no model): one heatmap trace, square panels that wrap at 8 a row, payload within the
10 MB budget at 32 × 32 heads and 256 tokens, numbers only on cells of 18 px or more, every
k-th label on long token axes, and a hover that names layer, head, query and key."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from model import Trace
from viz import attention, common, tiles

MB = 1e6


def synthetic(layers: int, heads: int, n: int, kv: int | None = None, seed: int = 0) -> Trace:
    """One sentence of n pieces; attention rows are random distributions over the past."""
    rng = np.random.default_rng(seed)
    w = rng.random(size=(layers, 1, heads, n, n), dtype=np.float32)
    w *= np.tril(np.ones((n, n), np.float32))  # causal: no weight on later pieces
    attn = {"dec_self": w / w.sum(-1, keepdims=True)}
    tokens = [f"▁w{i % 50}" for i in range(n)]
    ids = np.ones((1, n), np.int64)
    groups = np.repeat(np.arange(kv or heads), heads // (kv or heads))
    return Trace(src_tokens=[[]], tgt_tokens=[tokens], src_ids=np.ones((1, 0), np.int64),
                 tgt_ids=ids, masks={"dec_self": np.zeros((1, n, n), bool)}, scores={},
                 attn=attn, q={}, k={}, v={}, hidden={}, pos_table=np.zeros((1, 8), np.float32),
                 logits=None, kv_groups=groups)


@pytest.fixture(scope="module")
def llama_8b():
    return synthetic(32, 32, 256, kv=8)


def test_the_32_by_32_grid_is_one_pooled_trace_within_budget(llama_8b):
    grid = attention.grid_figure(llama_8b, "dec_self", 0, selected=(31, 31))
    layer = attention.layer_figure(llama_8b, "dec_self", 31, 0)
    head = attention.head_figure(llama_8b, "dec_self", 31, 0, 31, numbers=True)
    sizes = [len(f.to_json()) for f in (head, layer, grid)]
    assert sum(sizes) <= 10 * MB, sizes
    assert len(grid.data) == 1 and len(layer.data) == 1
    meta = grid.layout.meta["tiles"]
    assert (meta["rows"], meta["cols"]) == (32, 32) and meta["pooled"]
    side = meta["col_spans"][0][1] - meta["col_spans"][0][0] + 1
    assert side * tiles.CELL_MIN_PX <= common.SCREEN_W / 32  # no more cells than pixels
    # each pooled cell is the mean of its block of the real weights
    z = llama_8b.attn["dec_self"][7, 0, 5]
    small, _r, _c = common.block_mean(z, side)
    np.testing.assert_allclose(tiles.panel(grid, 7, 5), small, rtol=1e-5)
    assert "pooled" in grid.data[0].hovertemplate
    # hover: the categories name layer + query (rows) and head + kv + key (columns)
    r0 = meta["row_spans"][7][0]
    c0 = meta["col_spans"][5][0]
    assert grid.data[0].y[r0].startswith("layer 7 · query 0–")
    assert grid.data[0].x[c0].startswith("head 5 · kv 1 · key 0–")
    assert len(set(grid.data[0].x)) == len(grid.data[0].x)  # plotly would merge equal ones
    assert len(set(grid.data[0].y)) == len(grid.data[0].y)
    # the layer's heads: 4 rows of 8 square panels (two kv groups a row), head in customdata
    lm = layer.layout.meta["tiles"]
    assert (lm["rows"], lm["cols"]) == (4, 8)
    spans = lm["col_spans"] + lm["row_spans"]
    assert len({b - a for a, b in spans}) == 1  # square
    data = np.asarray(layer.data[0].customdata)
    assert data[lm["row_spans"][3][0], lm["col_spans"][7][0]].tolist() == [31, 7]
    # the one head: 256 pieces, too small for numbers, every k-th piece named
    assert head.data[0].text is None
    x = list(head.data[0].x)
    shown = list(head.layout.xaxis.tickvals)
    k = x.index(shown[1])
    assert k > 1 and shown == x[::k]  # every k-th piece, from the first
    assert len(shown) * common.TICK_MIN_PX <= common.SCREEN_W - 150 < (len(x) // (k - 1)) * 14


def test_80_layers_by_64_heads_fit_and_stay_valid():
    trace = synthetic(80, 64, 24, kv=8)
    grid = attention.grid_figure(trace, "dec_self", 0, selected=(79, 63))
    go.Figure(grid.to_dict())  # plotly's validation of every property
    meta = grid.layout.meta["tiles"]
    assert (meta["rows"], meta["cols"]) == (80, 64)
    assert len(grid.to_json()) <= 10 * MB
    assert len([s for s in grid.layout.shapes if s.fillcolor and "120" in s.fillcolor]) == 8
    # 64 panels ~10 px apart: every 2nd head named (labels would overlap), every layer named
    assert list(grid.layout.xaxis.ticktext) == [f"head {h} · kv {h // 8}" for h in range(0, 64, 2)]
    assert len(grid.layout.yaxis.ticktext) == 80
    layer = attention.layer_figure(trace, "dec_self", 0, 0)
    assert (layer.layout.meta["tiles"]["rows"], layer.layout.meta["tiles"]["cols"]) == (8, 8)


@pytest.mark.parametrize("heads,kv,per_row", [(12, None, 8), (9, 3, 6), (32, 8, 8),
                                              (64, 8, 8), (6, None, 6), (16, 1, 8)])
def test_the_layer_heads_wrap_at_eight_in_whole_kv_groups(heads, kv, per_row):
    trace = synthetic(1, heads, 6, kv=kv)
    fig = attention.layer_figure(trace, "dec_self", 0, 0)
    meta = fig.layout.meta["tiles"]
    assert meta["cols"] == per_row and meta["rows"] == -(-heads // per_row)
    titles = [a.text for a in fig.layout.annotations]
    assert len(titles) == heads  # every head named once above its panel, none for empty slots


def test_numbers_only_on_cells_of_18_px_or_more():
    assert common.numbers_fit(30, 30, 740, 700) and not common.numbers_fit(40, 40, 740, 700)
    for n, shown in ((12, True), (30, True), (40, False)):
        fig = attention.head_figure(synthetic(1, 2, n), "dec_self", 0, 0, 1, numbers=True)
        assert (fig.data[0].text is not None) == shown, n
    # layers × heads maps (heads statistics, scan, contributions): 12 heads yes, 32 no
    row = common.layer_row_px(32)
    assert common.fitting_numbers(np.zeros((12, 12)), "+.2f", row, 700) is not None
    assert common.fitting_numbers(np.zeros((32, 32)), "+.2f", row, 700) is None
    assert common.fitting_numbers(np.zeros((80, 8)), ".2f", common.layer_row_px(80), 700) is None
    assert common.thin_ticks([str(i) for i in range(20)], 700) == {}
    picked = common.thin_ticks([str(i) for i in range(512)], 700)
    assert picked["tickvals"][:3] == ["0", "11", "22"]  # 512 × 14 px / 700 px -> every 11th


def test_tiles_refuse_panels_of_different_shapes():
    with pytest.raises(ValueError, match="one shape"):
        tiles.tile([[np.zeros((3, 3)), np.zeros((3, 4))]], x_cells=list("abc"),
                   y_cells=list("abc"), max_cells=8)
