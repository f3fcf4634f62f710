"""Click targets: an invisible marker on each head of a heatmap, so that a click names it.

Streamlit's plotly selection never fires for heatmap cells (plotly selects points, and a
heatmap has none), so a figure whose panels or cells are heads gets one more trace: a scatter
with one transparent marker per head, carrying (layer, head) in its customdata. With
`hoverdistance` -1 the nearest marker takes every hover and click in the plot, so a click
anywhere on a panel (or in the gap beside it) selects that panel's head.

    panel_targets(fig, hover)       a tiles.tiled_heatmap figure: a marker per panel (a layer's
                                    heads in rows: layer=, n_heads=)
    cell_targets(fig, hint, trace, kind)  a layers × heads heatmap: a marker per cell
    picked(selection)               (layer, head) of a chart's selection, or None
    picked_head(selection, kind)    (kind, layer, head): the marker's own kind where it has one
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

TARGET = "click targets"  # the overlay trace's name, which tests and readers look for
_CLEAR = "rgba(0,0,0,0)"


def _markers(x, y, customdata, hover: str, axes: dict) -> go.Scatter:
    """Transparent square markers that take the hover and the click of their panel."""
    invisible = {"marker": {"opacity": 0}}
    return go.Scatter(
        x=x, y=y, customdata=customdata, mode="markers", name=TARGET, showlegend=False,
        marker={"symbol": "square", "size": 12, "color": _CLEAR, "line": {"width": 0}},
        selected=invisible, unselected=invisible, hovertemplate=hover + "<extra></extra>",
        **axes)


def panel_targets(fig: go.Figure, hover: str, layer: int | None = None,
                  n_heads: int = 0) -> go.Figure:
    """fig (a tiled_heatmap of layers × heads panels) with a marker at each panel's middle;
    customdata is (layer, head) = (panel row, panel column); hover may read %{customdata}.
    With a layer, fig is that layer's heads wrapped into rows (viz.attention.layer_figure):
    panel (r, c) is head r · columns + c, and the empty panels after the n_heads get none."""
    meta = fig.layout.meta["tiles"]
    heat = fig.data[0]
    xs, ys, data = [], [], []
    for r, (r0, r1) in enumerate(meta["row_spans"]):
        for c, (c0, c1) in enumerate(meta["col_spans"]):
            head = (r, c) if layer is None else (layer, r * len(meta["col_spans"]) + c)
            if layer is not None and head[1] >= n_heads:
                continue
            xs.append(heat.x[(c0 + c1) // 2])
            ys.append(heat.y[(r0 + r1) // 2])
            data.append(head)
    fig.add_trace(_markers(xs, ys, [list(d) for d in data], hover, {}))
    fig.update_layout(hoverdistance=-1, hovermode="closest")
    return fig


def cell_targets(fig: go.Figure, hint: str = "", trace: int = 0,
                 kind: str | None = None) -> go.Figure:
    """fig (a heatmap with x = head, y = layer at trace index `trace`) with a marker on each
    cell; customdata is (layer, head, value), and (layer, head, value, kind) with a kind (a
    figure with one map per attention kind says which map was clicked). The markers say what
    the heatmap's hover said (its %{z} read from customdata), then the hint on its own line."""
    heat = fig.data[trace]
    z = np.asarray(heat.z, dtype=np.float64)
    hover = (heat.hovertemplate or "%{y} %{x} %{z}").replace("<extra></extra>", "")
    hover = hover.replace("%{z", "%{customdata[2]") + (f"<br>{hint}" if hint else "")
    layers, heads = np.meshgrid(np.arange(z.shape[0]), np.arange(z.shape[1]), indexing="ij")
    data = np.stack([layers.ravel(), heads.ravel(), z.ravel()], axis=-1).tolist()
    if kind is not None:
        data = [row + [kind] for row in data]
    axes = {"xaxis": heat.xaxis, "yaxis": heat.yaxis} if heat.xaxis else {}
    # plain lists: a numpy array reaches the browser as a typed array, which a selection
    # event spells as {"0": .., "1": ..}
    fig.add_trace(_markers(heads.ravel().tolist(), layers.ravel().tolist(), data, hover, axes))
    fig.update_layout(hoverdistance=-1, hovermode="closest")
    # plotly pads an axis's autorange for markers by their size, which widened a 12-head map
    # to ticks -1 ... 12 beside empty strips; the cells' own edges are the range (y keeps the
    # first layer on top)
    x_name, y_name = (f"{a[0]}axis{a[1:]}" for a in (heat.xaxis or "x", heat.yaxis or "y"))
    fig.update_layout({x_name: {"range": [-0.5, z.shape[1] - 0.5], "autorange": False},
                       y_name: {"range": [z.shape[0] - 0.5, -0.5], "autorange": False}})
    return fig


def picked(selection: Mapping | None) -> tuple[int, int] | None:
    """(layer, head) of the first click target in a Streamlit plotly selection, else None."""
    hit = picked_head(selection, "")
    return None if hit is None else hit[1:]


def picked_head(selection: Mapping | None, kind: str) -> tuple[str, int, int] | None:
    """(kind, layer, head) of the first click target in a Streamlit plotly selection, else
    None; the kind is the marker's own (customdata[3]) where it carries one, else `kind`."""
    points = (selection or {}).get("selection", {}).get("points", []) if selection else []
    for point in points:
        data = point.get("customdata")
        if isinstance(data, Mapping):  # a typed array, as JSON spells it
            data = [data.get(str(i)) for i in range(len(data))]
        if isinstance(data, (list, tuple)) and len(data) >= 2:
            own = data[3] if len(data) > 3 and isinstance(data[3], str) else kind
            try:
                return own, int(data[0]), int(data[1])
            except (TypeError, ValueError):
                continue
    return None
