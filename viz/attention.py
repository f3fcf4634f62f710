"""Attention heatmaps: one head large, one layer's heads side by side, the whole model's grid."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import (
    block_labels,
    block_mean,
    heatmap,
    heatmap_trace,
    token_labels,
    value_hover,
)
from .i18n import _
from .masks import KIND_NAMES, axis_tokens

LAYER_MAX = 64  # per-axis cells of each head in the side-by-side view
THUMB_MAX = 24  # per-axis cells of each thumbnail in the layers × heads grid


def head_matrix(trace, kind: str, layer: int, b: int, head: int, hide_pad: bool = True
                ) -> tuple[np.ndarray, list[str], list[str]]:
    """One head's attention for sentence b and its (query, key) pieces, optionally unpadded."""
    q, k = axis_tokens(trace, kind, b)
    z = trace.attn[kind][layer, b, head]
    if hide_pad:
        nq = trace.length("src" if kind == "enc_self" else "tgt", b)
        nk = trace.length("tgt" if kind == "dec_self" else "src", b)
        z, q, k = z[:nq, :nk], q[:nq], k[:nk]
    return z, q, k


def head_figure(trace, kind: str, layer: int, b: int, head: int, *, hide_pad: bool = True,
                numbers: bool = False, colorscale: str = "Viridis") -> go.Figure:
    """One head as a large labelled heatmap, probabilities on a fixed 0–1 scale."""
    z, q, k = head_matrix(trace, kind, layer, b, head, hide_pad)
    return heatmap(z, token_labels(k), token_labels(q),
                   title=_("{kind} · layer {layer} · head {head} · attention weights {shape}")
                   .format(kind=_(KIND_NAMES[kind]), layer=layer, head=head,
                           shape=tuple(z.shape)),
                   x_title=_("key (attended to)"), y_title=_("query (attending)"),
                   colorscale=colorscale, zmin=0, zmax=1, numbers=numbers,
                   height=int(min(900, max(380, 160 + 24 * z.shape[0]))))


def panel_grid(n_rows: int, n_cols: int, titles: list[str], *, hgap: float = 0.015,
               vgap: float = 0.05, row_titles: list[str] | None = None,
               col_titles: list[str] | None = None, col_groups: list[int] | None = None
               ) -> dict:
    """Layout for an n_rows × n_cols grid of heatmap panels (what make_subplots builds, in one
    pass: make_subplots plus per-panel updates cost ~0.3 s for a 6 × 8 grid).

    Gaps shrink so that together they take at most 30 % of each axis (30 layers × 0.03 would
    leave panels no room), and domains are clipped to [0, 1]: the last row's lower edge
    computes to about -1e-16, which plotly refuses. `col_groups` (a group per column, e.g. the
    key/value head each query head reads) puts 4× the gap between groups and a grey band
    behind each group of more than one column."""
    groups = col_groups or list(range(n_cols))
    gaps = [hgap * (4 if groups[c] != groups[c + 1] and col_groups else 1)
            for c in range(n_cols - 1)]
    if sum(gaps) > 0.3:
        gaps = [g * 0.3 / sum(gaps) for g in gaps]
    lefts = [0.0]  # each column's left edge, in panel widths' units plus the gaps before it
    width = (1 - sum(gaps)) / n_cols
    for gap in gaps:
        lefts.append(lefts[-1] + width + gap)
    vgap = min(vgap, 0.3 / max(1, n_rows - 1))
    height = (1 - vgap * (n_rows - 1)) / n_rows
    layout: dict = {"annotations": []}
    if col_groups:
        layout["shapes"] = _group_bands(groups, lefts, width)
    for r in range(n_rows):
        for c in range(n_cols):
            i = r * n_cols + c + 1
            x0, y1 = lefts[c], 1 - r * (height + vgap)
            sfx = "" if i == 1 else str(i)
            layout[f"xaxis{sfx}"] = {"domain": _unit(x0, x0 + width), "anchor": f"y{sfx}",
                                     "type": "category", "showticklabels": False}
            layout[f"yaxis{sfx}"] = {"domain": _unit(y1 - height, y1), "anchor": f"x{sfx}",
                                     "type": "category", "showticklabels": False,
                                     "autorange": "reversed"}
            if c == 0 and row_titles:
                layout[f"yaxis{sfx}"]["title"] = {"text": row_titles[r]}
            if r == n_rows - 1 and col_titles:
                layout[f"xaxis{sfx}"]["title"] = {"text": col_titles[c]}
            layout["annotations"].append({
                "text": titles[i - 1], "x": x0 + width / 2, "y": y1, "xref": "paper",
                "yref": "paper", "xanchor": "center", "yanchor": "bottom", "showarrow": False,
                "font": {"size": 12}})
    return layout


def _group_bands(groups: list[int], lefts: list[float], width: float) -> list[dict]:
    """A light band behind each run of columns that share a group (runs of one get none)."""
    bands, start = [], 0
    for c in range(1, len(groups) + 1):
        if c == len(groups) or groups[c] != groups[start]:
            if c - start > 1:
                pad = 0.004
                bands.append({"type": "rect", "xref": "paper", "yref": "paper", "layer": "below",
                              "x0": max(0.0, lefts[start] - pad),
                              "x1": min(1.0, lefts[c - 1] + width + pad), "y0": 0, "y1": 1,
                              "fillcolor": "rgba(120, 120, 120, 0.12)", "line": {"width": 0}})
            start = c
    return bands


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


def _unit(lo: float, hi: float) -> list[float]:
    """A plotly domain: both ends inside [0, 1] despite float rounding."""
    return [min(1.0, max(0.0, lo)), min(1.0, max(0.0, hi))]


def _panel(trace, kind, layer, b, head, hide_pad, max_size, colorscale, showscale, hover, i):
    z, q, k = head_matrix(trace, kind, layer, b, head, hide_pad)
    z, rows, cols = block_mean(z, max_size)
    y, x = block_labels(token_labels(q), rows), block_labels(token_labels(k), cols)
    sfx = "" if i == 1 else str(i)
    panel = heatmap_trace(z, x, y, colorscale=colorscale, zmin=0, zmax=1, showscale=showscale,
                          name=hover, hover=hover + "<br>" + value_hover())
    panel.update(xaxis=f"x{sfx}", yaxis=f"y{sfx}")
    return panel


def layer_figure(trace, kind: str, layer: int, b: int, *, hide_pad: bool = True,
                 colorscale: str = "Viridis", max_size: int = LAYER_MAX) -> go.Figure:
    """Every head of one layer side by side on one shared 0–1 colour scale."""
    n_heads = trace.attn[kind].shape[2]
    groups = kv_groups(trace, n_heads)
    heads = _head_titles(n_heads, groups)
    panels = [_panel(trace, kind, layer, b, h, hide_pad, max_size, colorscale,
                     h == n_heads - 1, heads[h], h + 1) for h in range(n_heads)]
    layout = panel_grid(1, n_heads, heads, hgap=0.02, row_titles=[_("query")],
                        col_titles=[_("key")] * n_heads, col_groups=groups)
    layout["yaxis"]["showticklabels"] = True
    return _titled(go.Figure(data=panels, layout=layout),
                   _("{kind} · layer {layer}: all {n} heads (shared 0–1 scale)")
                   .format(kind=_(KIND_NAMES[kind]), layer=layer, n=n_heads), 380)


def grid_figure(trace, kind: str, b: int, *, hide_pad: bool = True, colorscale: str = "Viridis",
                selected: tuple[int, int] | None = None, max_size: int = THUMB_MAX
                ) -> go.Figure:
    """The whole model for one attention kind: a layers × heads grid of small thumbnails."""
    n_layers, _b, n_heads = trace.attn[kind].shape[:3]
    titles = [f"L{layer} H{h}" + (" ◀" if selected == (layer, h) else "")
              for layer in range(n_layers) for h in range(n_heads)]
    panels = [_panel(trace, kind, layer, b, h, hide_pad, max_size, colorscale,
                     layer == 0 and h == 0,
                     _("layer {layer} head {head}").format(layer=layer, head=h),
                     layer * n_heads + h + 1)
              for layer in range(n_layers) for h in range(n_heads)]
    groups = kv_groups(trace, n_heads)  # grouped-query attention: heads sharing K/V side by side
    layout = panel_grid(n_layers, n_heads, titles, vgap=0.05 if n_layers < 6 else 0.03,
                        row_titles=[_("layer {layer}").format(layer=i) for i in range(n_layers)],
                        col_titles=_head_titles(n_heads, groups), col_groups=groups)
    return _titled(go.Figure(data=panels, layout=layout),
                   _("{kind}: every layer (rows) × head (columns), shared 0–1 scale")
                   .format(kind=_(KIND_NAMES[kind])), max(320, 150 * n_layers + 80))


def _titled(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left"}, height=height,
                      margin={"l": 10, "r": 10, "t": 60, "b": 10},
                      hoverlabel={"namelength": -1})
    return fig
