"""Attention heatmaps: one head large, one layer's heads side by side, the whole model's grid."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.capture import key_side, query_side

from .common import SCREEN_W, heatmap, numbers_fit, token_labels
from .i18n import _
from .masks import KIND_NAMES, axis_tokens
from .tiles import tiled_heatmap

LAYER_MAX = 64  # per-axis cells of each head in the layer's heads figure
THUMB_MAX = 24  # per-axis cells of each thumbnail in the layers × heads grid
HEADS_PER_ROW = 8  # the layer's heads wrap into rows of at most this many square panels
LAYER_PANEL_PX = 220  # largest side of one head's panel in the layer figure


def head_matrix(trace, kind: str, layer: int, b: int, head: int, hide_pad: bool = True
                ) -> tuple[np.ndarray, list[str], list[str]]:
    """One head's attention for sentence b and its (query, key) pieces, optionally unpadded."""
    q, k = axis_tokens(trace, kind, b)
    z = trace.attn[kind][layer, b, head]
    if hide_pad:
        nq = trace.length(query_side(kind), b)
        nk = trace.length(key_side(kind), b)
        z, q, k = z[:nq, :nk], q[:nq], k[:nk]
    return z, q, k


def head_figure(trace, kind: str, layer: int, b: int, head: int, *, hide_pad: bool = True,
                numbers: bool = False, colorscale: str = "Viridis") -> go.Figure:
    """One head as a large labelled heatmap, probabilities on a fixed 0–1 scale; numbers on
    cells only when a cell is big enough to read them, every k-th piece named on long axes."""
    z, q, k = head_matrix(trace, kind, layer, b, head, hide_pad)
    height = int(min(900, max(380, 160 + 24 * z.shape[0])))
    plot_h, plot_w = height - 160, SCREEN_W - 150  # less title, tick labels and colour bar
    x, y = token_labels(k), token_labels(q)
    fig = heatmap(z, x, y,
                  title=_("{kind} · layer {layer} · head {head} · attention weights {shape}")
                  .format(kind=_(KIND_NAMES[kind]), layer=layer, head=head,
                          shape=tuple(z.shape)),
                  x_title=_("key (attended to)"), y_title=_("query (attending)"),
                  colorscale=colorscale, zmin=0, zmax=1,
                  numbers=numbers and numbers_fit(len(y), len(x), plot_h, plot_w),
                  height=height)  # (heatmap names every k-th piece on long axes)
    return fig


def kv_groups(trace, n_heads: int) -> list[int] | None:
    """The key/value head each query head reads, or None when every head has its own."""
    groups = getattr(trace, "kv_groups", None)
    if groups is None or len(groups) != n_heads or len(set(np.asarray(groups).tolist())) == n_heads:
        return None
    return [int(g) for g in np.asarray(groups)]


def head_title(head: int, groups: list[int] | None) -> str:
    """'head 4', or 'head 4 · kv 1' under grouped-query attention (groups from kv_groups)."""
    if groups is None:
        return _("head {head}").format(head=head)
    return _("head {head} · kv {kv}").format(head=head, kv=groups[head])


def _head_titles(n_heads: int, groups: list[int] | None) -> list[str]:
    return [head_title(h, groups) for h in range(n_heads)]


def _layer_shape(n_heads: int, groups: list[int] | None) -> int:
    """Heads per row of the layer figure: at most HEADS_PER_ROW, whole kv groups per row."""
    if n_heads <= HEADS_PER_ROW:
        return n_heads
    size = n_heads // len(set(groups)) if groups else 1
    return size * (HEADS_PER_ROW // size) if size <= HEADS_PER_ROW else HEADS_PER_ROW


def _cells(trace, kind: str, b: int, hide_pad: bool) -> tuple[list[str], list[str], int, int]:
    """Labelled query and key pieces of sentence b, and how many of each the panels keep."""
    q, k = axis_tokens(trace, kind, b)
    nq, nk = len(q), len(k)
    if hide_pad:
        nq = trace.length(query_side(kind), b)
        nk = trace.length(key_side(kind), b)
    return token_labels(q[:nq]), token_labels(k[:nk]), nq, nk


def _cells_edge_to_edge(fig: go.Figure) -> go.Figure:
    """fig (a tiled heatmap) with its axes pinned at the cells' outer edges, first row on top:
    the view lays click targets (scatter markers, viz.click.panel_targets) over the panels, and
    plotly pads an autorange for markers, so GPT-2 small's layers x heads grid presenting drew
    its image on 80 % of its plot area (x -8.5 ... 102.5 for 95 cells)."""
    heat = fig.data[0]
    fig.update_xaxes(range=[-0.5, len(heat.x) - 0.5], autorange=False)
    fig.update_yaxes(range=[len(heat.y) - 0.5, -0.5], autorange=False)
    return fig


def layer_figure(trace, kind: str, layer: int, b: int, *, hide_pad: bool = True,
                 colorscale: str = "Viridis", max_size: int = LAYER_MAX) -> go.Figure:
    """Every head of one layer as square panels, at most 8 a row, on one 0–1 colour scale
    (one heatmap trace: viz.tiles)."""
    n_heads = trace.attn[kind].shape[2]
    groups = kv_groups(trace, n_heads)
    ys, xs, nq, nk = _cells(trace, kind, b, hide_pad)
    per_row = _layer_shape(n_heads, groups)
    n_rows = -(-n_heads // per_row)
    z = trace.attn[kind][layer, b]

    def at(r: int, c: int) -> int | None:
        h = r * per_row + c
        return h if h < n_heads else None

    grid = [[at(r, c) for c in range(per_row)] for r in range(n_rows)]
    panels = [[None if h is None else z[h, :nq, :nk] for h in row] for row in grid]
    titles = [["" if h is None else head_title(h, groups) for h in row] for row in grid]
    data = [[None if h is None else (h, groups[h] if groups else h) for h in row]
            for row in grid]
    hover = _("head") + " %{customdata[0]}" + (" · kv %{customdata[1]}" if groups else "")
    return _cells_edge_to_edge(tiled_heatmap(
        panels, x_cells=xs, y_cells=ys, x_word=_("key"), y_word=_("query"),
        panel_titles=titles, panel_data=data,
        panel_hover=hover, col_groups=[groups[c] for c in range(per_row)] if groups else None,
        colorscale=colorscale, max_cells=max_size, panel_px_max=LAYER_PANEL_PX,
        title=_("{kind} · layer {layer}: all {n} heads (shared 0–1 scale)")
        .format(kind=_(KIND_NAMES[kind]), layer=layer, n=n_heads),
        x_title=_("key (attended to)"),
        y_title=_("query (attending)")))


def grid_figure(trace, kind: str, b: int, *, hide_pad: bool = True, colorscale: str = "Viridis",
                selected: tuple[int, int] | None = None, max_size: int = THUMB_MAX
                ) -> go.Figure:
    """The whole model for one attention kind: a layers × heads grid of pooled thumbnails,
    one heatmap trace (viz.tiles); heads that share a kv head sit together on a grey band."""
    n_layers, _b, n_heads = trace.attn[kind].shape[:3]
    groups = kv_groups(trace, n_heads)
    ys, xs, nq, nk = _cells(trace, kind, b, hide_pad)
    z = trace.attn[kind][:, b]
    panels = [[z[layer, h, :nq, :nk] for h in range(n_heads)] for layer in range(n_layers)]
    return _cells_edge_to_edge(tiled_heatmap(
        panels, x_cells=xs, y_cells=ys, x_word=_("key"), y_word=_("query"),
        row_names=[_("layer {layer}").format(layer=i) for i in range(n_layers)],
        col_names=_head_titles(n_heads, groups), col_groups=groups, selected=selected,
        colorscale=colorscale, max_cells=max_size,
        title=_("{kind}: every layer (rows) × head (columns), shared 0–1 scale")
        .format(kind=_(KIND_NAMES[kind])),
        x_title=_("head"), y_title=_("layer")))
