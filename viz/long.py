"""Figures of the long mode: pooled maps, the grid of every head, exact blocks, distances.

Shape legend: L layers, H heads, P pixels per side of a pooled map, n tokens.
A pooled map's pixel covers a range of queries and keys; its axes are token positions (the
first position of each pixel), so a zoomed block and the map share coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from .i18n import N_, _

GRID_CELLS = 32  # per-axis cells of each head in the grid (pooled again from the map)
DRAG_GRID = 64  # invisible drag targets per side of a pooled map (drag_targets)
BAND_NAMES = (N_("local (≤ 64)"), N_("middle (65–1,024)"), N_("far (> 1,024)"))


def _starts(n: int, p: int) -> np.ndarray:
    """First position of each of p pixels over n positions."""
    return -(-np.arange(p) * n // p)


def pooled_figure(z: np.ndarray, n: int, title: str, colorscale: str = "Viridis"
                  ) -> go.Figure:
    """One head's pooled map (P, P), axes in token positions."""
    step = n / z.shape[0]  # a pixel's width in positions (pixel i starts at ⌈i·n/P⌉)
    # x0/dx rather than P-long x and y arrays: plotly.js draws the uniform grid about twice
    # as fast (measured 0.40 s against 0.71-1.21 s for 512² in Chromium at load 7)
    fig = go.Figure(go.Heatmap(
        z=_f32(z), x0=0, dx=step, y0=0, dy=step, colorscale=colorscale,
        colorbar={"thickness": 12},
        hovertemplate=_("queries from {q}, keys from {k}: {w}").format(
            q="%{y:,.0f}", k="%{x:,.0f}", w="%{z:.4f}") + "<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title=_("query position"))
    fig.update_xaxes(title=_("key position"))
    fig.update_layout(title=title, height=560, margin={"t": 50, "l": 60, "r": 20, "b": 50})
    return fig


def drag_targets(fig: go.Figure, n: int, per_side: int = DRAG_GRID) -> go.Figure:
    """fig (a pooled map over n positions) with invisible markers on a per_side² grid and box
    selection as the drag: plotly selects only through traces that take a selection, which a
    heatmap does not, and the box a user drags is what box_region reads."""
    at = ((np.arange(per_side) + 0.5) * n / per_side).tolist()
    xs, ys = np.meshgrid(at, at)
    fig.add_trace(go.Scatter(x=xs.ravel().tolist(), y=ys.ravel().tolist(), mode="markers",
                             marker={"size": 6, "opacity": 0}, hoverinfo="skip",
                             showlegend=False))
    fig.update_layout(dragmode="select", selectdirection="any", hovermode="closest")
    return fig


def box_region(selection: Mapping | None, n: int, cap: int = 1024
               ) -> tuple[int, int, int] | None:
    """(first query, first key, cells per side) of the exact block under the first box of a
    Streamlit plotly selection over a pooled map of n positions, else None.

    The block is square (the zoom's shape): its side is the box's longer side, at most cap
    and at least 1, and it starts at the box's top-left corner, moved back so it fits in n.
    """
    boxes = (selection or {}).get("box") or []
    if not boxes:
        return None
    box = boxes[0]
    try:
        xs = [float(v) for v in box["x"]]
        ys = [float(v) for v in box["y"]]
    except (KeyError, TypeError, ValueError):
        return None
    if len(xs) < 2 or len(ys) < 2 or not all(np.isfinite(xs + ys)):
        return None

    def span(vals: list[float]) -> tuple[int, int]:
        lo, hi = int(np.floor(min(vals))), int(np.ceil(max(vals)))
        return min(max(lo, 0), n - 1), min(max(hi, 1), n)

    (k0, k1), (q0, q1) = span(xs), span(ys)
    side = int(min(cap, n, max(q1 - q0, k1 - k0, 1)))
    return min(q0, n - side), min(k0, n - side), side


def _f32(z: np.ndarray) -> np.ndarray:
    """float32: plotly sends it as base64 of 4 bytes a cell (float64 would be 8)."""
    return np.ascontiguousarray(z, dtype=np.float32)


def grid_figure(maps: np.ndarray, selected: tuple[int, int] | None = None,
                colorscale: str = "Viridis") -> go.Figure:
    """Every head (L, H, P, P) in one heatmap: layer rows × head columns, each head pooled
    again to GRID_CELLS per side (mean), one pixel of gap between panels."""
    n_layers, n_heads, p, _p = maps.shape
    c = min(GRID_CELLS, p)
    edges = _starts(p, c).tolist() + [p]
    small = np.stack([np.stack([maps[..., a:b, :][..., e:f].mean((-1, -2))
                                for e, f in zip(edges[:-1], edges[1:], strict=True)], -1)
                      for a, b in zip(edges[:-1], edges[1:], strict=True)], -2)  # (L,H,c,c)
    # each panel scaled to its own maximum: a sink head would otherwise wash out the rest
    small = small / np.maximum(small.max((-1, -2), keepdims=True), 1e-12)
    side = c + 1
    z = np.full((n_layers * side, n_heads * side), np.nan)
    for layer in range(n_layers):
        for head in range(n_heads):
            z[layer * side:layer * side + c, head * side:head * side + c] = small[layer, head]
    fig = go.Figure(go.Heatmap(z=z, colorscale=colorscale, showscale=False,
                               hoverinfo="skip"))
    fig.update_yaxes(autorange="reversed", tickvals=[i * side + c / 2 for i in range(n_layers)],
                     ticktext=[str(i) for i in range(n_layers)], title=_("layer"))
    fig.update_xaxes(tickvals=[i * side + c / 2 for i in range(n_heads)],
                     ticktext=[str(i) for i in range(n_heads)], title=_("head"), side="top")
    if selected is not None:
        layer, head = selected
        fig.add_shape(type="rect", x0=head * side - 0.5, x1=head * side + c - 0.5,
                      y0=layer * side - 0.5, y1=layer * side + c - 0.5,
                      line={"color": "red", "width": 2})
    px = max(14, min(24, 900 // max(n_heads, 1) // side)) * side
    # the head axis sits on top: the title goes above it, at the top of the figure
    fig.update_layout(height=min(1400, 120 + n_layers * px),
                      margin={"t": 100, "l": 60, "r": 20, "b": 20},
                      title={"text": _("Every head, pooled (each panel scaled to its own maximum)"),
                             "y": 0.99, "yref": "container", "yanchor": "top"})
    return fig


def block_figure(z: np.ndarray, q0: int, k0: int, tokens: list[str], title: str,
                 colorscale: str = "Viridis") -> go.Figure:
    """Exact weights of one block (c, w) with its query and key pieces on hover."""
    c, w = z.shape
    qs, ks = tokens[q0:q0 + c], tokens[k0:k0 + w]
    # hover labels only for small blocks: 512² labels made a zoom's page ~5 MB heavier
    text = [[f"{q} → {k}" for k in ks] for q in qs] if c * w <= 65_536 else None
    fig = go.Figure(go.Heatmap(
        z=_f32(z), x0=k0, dx=1, y0=q0, dy=1, colorscale=colorscale, text=text,
        colorbar={"thickness": 12},
        hovertemplate=("%{text}<br>" if text is not None else "")
        + _("query {q}, key {k}: {w}").format(q="%{y}", k="%{x}", w="%{z:.5f}")
        + "<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title=_("query position"))
    fig.update_xaxes(title=_("key position"))
    fig.update_layout(title=title, height=560, margin={"t": 50, "l": 60, "r": 20, "b": 50})
    return fig


def distance_figure(bands: np.ndarray) -> go.Figure:
    """Per layer, the mean share of attention (over heads and queries) in each distance band."""
    n_layers = bands.shape[0]
    mean = bands.mean(1)  # (L, 3)
    fig = go.Figure([go.Bar(x=list(range(n_layers)), y=mean[:, i], name=_(BAND_NAMES[i]),
                            hovertemplate=_("layer {layer}: {share}").format(
                                layer="%{x}", share="%{y:.1%}") + "<extra></extra>")
                     for i in range(3)])
    fig.update_layout(barmode="stack", height=320, title=_("Where attention goes, by distance"),
                      yaxis={"title": _("share of attention"), "tickformat": ".0%",
                             "range": [0, 1]},
                      xaxis={"title": _("layer"), "dtick": 1},
                      margin={"t": 50, "l": 60, "r": 20, "b": 50})
    return fig


def head_distances(mean_distance: np.ndarray) -> go.Figure:
    """One layer's heads: mean distance of each query's attention along the text (H, n)."""
    n = mean_distance.shape[1]
    step = max(1, n // 1024)  # at most ~1,000 points per line
    x = np.arange(0, n, step)
    # SVG Scatter, not Scattergl: headless Chromium has no GPU, and starting a software WebGL
    # context cost more than drawing a few thousand points
    fig = go.Figure([go.Scatter(x=x, y=mean_distance[h, ::step], mode="lines",
                                name=_("head {head}").format(head=h))
                     for h in range(mean_distance.shape[0])])
    fig.update_layout(height=320, title=_("Mean distance attended, along the text"),
                      xaxis={"title": _("query position")},
                      yaxis={"title": _("mean distance (pieces)")},
                      margin={"t": 50, "l": 60, "r": 20, "b": 50})
    return fig
