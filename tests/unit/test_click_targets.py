"""viz/click.py: the invisible markers that let a click on a heatmap's head name it (issue 39
item 9): one per panel of a tiled grid at the panel's middle, one per cell of a layers × heads
map carrying the map's hover, plain lists (a typed array reaches a selection as a dict), and
the selection read back."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from tests.unit.test_tiles import synthetic
from viz import attention, heads
from viz.click import TARGET, cell_targets, panel_targets, picked, picked_head


def test_one_marker_in_the_middle_of_each_panel():
    fig = panel_targets(attention.grid_figure(synthetic(3, 4, 10), "dec_self", 0), "h")
    heat, marks = fig.data
    assert marks.name == TARGET and len(marks.x) == 12 and fig.layout.hoverdistance == -1
    spans = fig.layout.meta["tiles"]
    for (layer, head), x, y in zip(marks.customdata, marks.x, marks.y):
        (c0, c1), (r0, r1) = spans["col_spans"][head], spans["row_spans"][layer]
        assert c0 <= list(heat.x).index(x) <= c1 and r0 <= list(heat.y).index(y) <= r1
    assert isinstance(marks.customdata, tuple | list) and isinstance(marks.customdata[0], list)
    assert marks.marker.color == "rgba(0,0,0,0)"  # unseen: the heatmap is what shows


def test_a_map_cell_marker_says_what_the_heatmap_said():
    z = np.arange(6, dtype=float).reshape(2, 3)
    fig = cell_targets(heads.stats_heatmaps({"entropy": z}, "enc_self")[0], "click")
    marks = fig.data[1]
    assert [(d[0], d[1]) for d in marks.customdata] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1),
                                                        (1, 2)]
    assert marks.customdata[5][2] == 5.0 and (marks.x[5], marks.y[5]) == (2, 1)
    assert "%{customdata[2]:.4f}" in marks.hovertemplate and "%{z" not in marks.hovertemplate
    assert marks.hovertemplate.endswith("<br>click<extra></extra>")


def test_picked_reads_a_selection():
    assert picked({"selection": {"points": [{"customdata": [2, 3]}]}}) == (2, 3)
    assert picked({"selection": {"points": [{"customdata": {"0": 1, "1": 0}}]}}) == (1, 0)
    assert picked({"selection": {"points": [{"x": 1}]}}) is None
    assert picked({"selection": {"points": []}}) is None and picked(None) is None


def test_a_map_per_kind_names_its_kind():
    """The importance scan draws one map per kind: each marker carries its kind, which a
    selection reads back before the chart's default kind."""
    scan = {"enc_self": np.zeros((2, 3)), "cross": np.ones((2, 3))}
    fig = heads.importance_figure(scan)
    for i, kind in enumerate(scan):
        cell_targets(fig, "click", trace=i, kind=kind)
    marks = fig.data[2:]
    assert [m.customdata[4][3] for m in marks] == ["enc_self", "cross"]
    assert [m.xaxis for m in marks] == [fig.data[0].xaxis, fig.data[1].xaxis]
    point = {"selection": {"points": [{"customdata": marks[1].customdata[4]}]}}
    assert picked_head(point, "enc_self") == ("cross", 1, 1)
    assert picked_head({"selection": {"points": [{"customdata": [2, 3]}]}}, "dec_self") == (
        "dec_self", 2, 3)


def test_a_layers_heads_in_rows_each_name_their_head():
    """The attention view's layer chart wraps a layer's heads into rows of at most 8: panel
    (r, c) is head 8r + c of that layer, and the empty panels after the last head get none."""
    fig = attention.layer_figure(synthetic(2, 10, 6), "dec_self", 1, 0)
    meta = fig.layout.meta["tiles"]
    assert len(meta["row_spans"]) * len(meta["col_spans"]) > 10  # empty panels exist
    marks = panel_targets(fig, "h", layer=1, n_heads=10).data[1]
    assert [tuple(d) for d in marks.customdata] == [(1, h) for h in range(10)]


def test_cell_markers_leave_the_axes_at_the_cells_edges():
    # plotly pads an autorange for markers by their size: a 12-head map drew ticks -1 and 12
    # beside empty strips (seen in Chromium on a 12 x 12 GPT-2); the range is pinned to cells
    fig = cell_targets(heads.stats_heatmaps({"entropy": np.zeros((12, 12))}, "dec_self")[0])
    assert list(fig.layout.xaxis.range) == [-0.5, 11.5] and fig.layout.xaxis.autorange is False
    assert list(fig.layout.yaxis.range) == [11.5, -0.5]  # first layer on top, as before
    two = go.Figure(heads.stats_heatmaps({"entropy": np.zeros((2, 3))}, "enc_self")[0])
    two.add_trace(go.Heatmap(z=np.zeros((4, 5)), xaxis="x2", yaxis="y2"))
    cell_targets(two, trace=1)  # a second map on its own axes gets its own range
    assert list(two.layout.xaxis2.range) == [-0.5, 4.5] and two.layout.xaxis.range is None
