"""Charts that drew text over text (issue 39, item 5), read from the figures: compare's right
panel had its own "query" title drawn over the left panel, and the query–key map's legend sat
under its colour bar's title."""

from __future__ import annotations

import numpy as np

from model.analysis.qkmap import QKPoints
from viz.heads import compare_figure
from viz.qkmap import qkmap_figure


def test_compare_names_the_query_axis_once_and_tilts_the_tokens():
    toks = ["▁The", "▁cat", "▁eats", "▁fish", "."]
    for other in (toks, toks[:4]):  # with and without the difference map
        fig = compare_figure(np.eye(5), np.eye(len(other)), toks, toks, other, other,
                             ("left", "right"))
        layout = fig.layout
        assert layout.yaxis.title.text == "query"
        assert not layout.yaxis2.title.text  # would sit between the panels, over the left one
        assert all(ax.tickangle == -45 for ax in (layout.xaxis, layout.xaxis2))


def test_query_key_map_legend_clears_the_colour_bar():
    rng = np.random.default_rng(2)
    points = QKPoints(xy=rng.normal(size=(8, 2)).astype(np.float32),
                      is_query=np.array([1, 1, 1, 1, 0, 0, 0, 0], bool),
                      token=["a", "b", "a", "c"] * 2, position=np.array([1, 2, 3, 1] * 2),
                      sentence=np.array([0, 0, 0, 1] * 2), lang=["en", "en", "en", "ko"] * 2,
                      texts=["one", "two"], method="pca", explained=(0.3, 0.2))
    fig = qkmap_figure(points, "enc_self", 0, 0, "position")
    assert any(getattr(t.marker, "showscale", False) for t in fig.data)  # a colour bar, right
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.y < 0 and legend.yanchor == "top"


def test_flow_at_200_tokens_writes_labels_that_fit_and_names_every_column():
    from model.analysis.flow import Edge, FlowGraph
    from viz.flow import LABEL_PX, flow_figure

    n = 200
    target, route = ("dec", 3, 150), ("enc", 2, 37)
    graph = FlowGraph(target=target, threshold=0.1,
                      edges=[Edge(src=route, dst=target, weight=0.4, kind="cross", head=1)],
                      nodes={target, route},
                      tokens={"enc": [f"▁w{i}" for i in range(n)],
                              "dec": [f"▁v{i}" for i in range(n)]},
                      depths={"enc": 3, "dec": 3})
    fig = flow_figure(graph)
    rows_px = (fig.layout.height - 140) / n
    labels = [t for t in fig.data if t.mode == "text"]
    assert len(labels) == 2
    for trace in labels:
        ys = sorted(int(y) for y in trace.y)
        assert len(ys) < n  # not one per row: 200 labels in 1,260 px were a grey smear
        assert min(b - a for a, b in zip(ys, ys[1:])) * rows_px >= LABEL_PX - 1e-9
    written = {(t.x[0] < 3, int(y)) for t in labels for y in t.y}
    assert (True, 37) in written and (False, 150) in written  # the route's and target's tokens
    ticks = list(fig.layout.xaxis.ticktext)
    assert len(ticks) == 8 and all("<br>" in t for t in ticks)
    assert ticks[-1] == "decoder<br>L2"
