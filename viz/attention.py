"""Attention heatmaps: one head large, one layer's heads side by side, the whole model's grid."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .common import (
    HOVER,
    block_labels,
    block_mean,
    heatmap,
    heatmap_trace,
    style,
    token_labels,
)
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
                   title=f"{KIND_NAMES[kind]} · layer {layer} · head {head} · "
                         f"attention weights {tuple(z.shape)}",
                   x_title="key (attended to)", y_title="query (attending)",
                   colorscale=colorscale, zmin=0, zmax=1, numbers=numbers,
                   height=int(min(900, max(380, 160 + 24 * z.shape[0]))))


def layer_figure(trace, kind: str, layer: int, b: int, *, hide_pad: bool = True,
                 colorscale: str = "Viridis", max_size: int = LAYER_MAX) -> go.Figure:
    """Every head of one layer side by side on one shared 0–1 colour scale."""
    n_heads = trace.attn[kind].shape[2]
    fig = make_subplots(rows=1, cols=n_heads, subplot_titles=[f"head {h}" for h in range(n_heads)],
                        horizontal_spacing=0.02)
    for h in range(n_heads):
        z, q, k = head_matrix(trace, kind, layer, b, h, hide_pad)
        z, rows, cols = block_mean(z, max_size)
        y, x = block_labels(token_labels(q), rows), block_labels(token_labels(k), cols)
        fig.add_trace(heatmap_trace(z, x, y, colorscale=colorscale, zmin=0, zmax=1,
                                    showscale=h == n_heads - 1, name=f"head {h}",
                                    hover=f"head {h}<br>" + HOVER), row=1, col=h + 1)
        fig.update_yaxes(showticklabels=h == 0, row=1, col=h + 1)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", showticklabels=False)
    style(fig, f"{KIND_NAMES[kind]} · layer {layer}: all {n_heads} heads (shared 0–1 scale)",
          "key (attended to)", "", height=360)
    fig.update_yaxes(title_text="query", row=1, col=1)
    return fig


def grid_figure(trace, kind: str, b: int, *, hide_pad: bool = True, colorscale: str = "Viridis",
                selected: tuple[int, int] | None = None, max_size: int = THUMB_MAX
                ) -> go.Figure:
    """The whole model for one attention kind: a layers × heads grid of small thumbnails."""
    n_layers, _, n_heads = trace.attn[kind].shape[:3]
    titles = [f"L{layer} H{h}" + (" ◀" if selected == (layer, h) else "")
              for layer in range(n_layers) for h in range(n_heads)]
    fig = make_subplots(rows=n_layers, cols=n_heads, subplot_titles=titles,
                        horizontal_spacing=0.015, vertical_spacing=0.05 if n_layers < 6 else 0.03)
    for layer in range(n_layers):
        for h in range(n_heads):
            z, q, k = head_matrix(trace, kind, layer, b, h, hide_pad)
            z, rows, cols = block_mean(z, max_size)
            y, x = block_labels(token_labels(q), rows), block_labels(token_labels(k), cols)
            first = layer == 0 and h == 0
            fig.add_trace(heatmap_trace(z, x, y, colorscale=colorscale, zmin=0, zmax=1,
                                        showscale=first, name=f"layer {layer} head {h}",
                                        hover=f"layer {layer} head {h}<br>" + HOVER),
                          row=layer + 1, col=h + 1)
    fig.update_yaxes(autorange="reversed", type="category", showticklabels=False)
    fig.update_xaxes(type="category", showticklabels=False)
    style(fig, f"{KIND_NAMES[kind]}: every layer (rows) × head (columns), shared 0–1 scale",
          "", "", height=max(320, 150 * n_layers + 80))
    for layer in range(n_layers):
        fig.update_yaxes(title_text=f"layer {layer}", row=layer + 1, col=1)
    for h in range(n_heads):
        fig.update_xaxes(title_text=f"head {h}", row=n_layers, col=h + 1)
    return fig
