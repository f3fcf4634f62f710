"""The guided tour's own pieces: what the existing views do not draw, and the numbers quoted
in the tour's sentences. Pure: Trace (and recorded hooks) in, figures and numbers out.

The tour walks seed 000's path through layer 0 of the first stack: embedding lookup, the
positional term and their sum (recorded hooks), one head from the trace's own q/k/v (so it
works for Hugging Face models too), residual + LayerNorm and the FFN (hooks of layer 0).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .common import DIVERGING, heatmap, style, token_labels
from .i18n import N_, _
from .steps import Walk

PIECE = N_("piece")  # matrix_figure's default row title, shown as _(PIECE)


def matrix_figure(z: np.ndarray, rows: list[str], title: str, x_title: str,
                  y_title: str = PIECE) -> go.Figure:
    """A (pieces × dimensions) matrix on a diverging scale centred on 0 (no cell numbers).

    title and the axis titles are shown as given; the default row title is translated."""
    if y_title == PIECE:
        y_title = _(PIECE)
    z = np.asarray(z, dtype=np.float32)
    bound = float(np.abs(z).max()) if z.size else 1.0
    return heatmap(z, [str(i) for i in range(z.shape[1])], token_labels(rows), title=title,
                   x_title=x_title, y_title=y_title, colorscale=DIVERGING, zmid=0,
                   zmin=-(bound or 1.0), zmax=bound or 1.0, numbers=False,
                   height=int(min(620, max(260, 120 + 26 * z.shape[0]))))


def norms_figure(parts: dict[str, np.ndarray], rows: list[str], title: str) -> go.Figure:
    """Per-piece L2 norms of several (n, D) tensors as grouped bars (what a step adds up)."""
    labels = token_labels(rows)
    fig = go.Figure()
    for name, z in parts.items():
        fig.add_trace(go.Bar(x=labels, y=np.linalg.norm(np.asarray(z, np.float64), axis=-1),
                             name=name, hovertemplate="%{x}<br>‖·‖ = %{y:.3f}<extra></extra>"))
    fig.update_xaxes(type="category")
    style(fig, title, _("piece"), _("vector length ‖·‖₂"), height=340)
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.25})
    return fig


def trace_walk(trace, kind: str, layer: int, b: int, head: int) -> Walk:
    """One head's steps from the trace's own q, k, v (any model, Hugging Face included).

    The inputs X and the output projection are not in a Hugging Face trace, so x, x_kv,
    concat and out are empty (0 columns); the tour shows Q … ·V from this Walk only.
    """
    q = trace.q[kind][layer, b, head].astype(np.float64)  # (n_q, Dh)
    groups = getattr(trace, "kv_groups", None)
    kv = int(groups[head]) if groups is not None and len(groups) > head else head
    k = trace.k[kind][layer, b, kv].astype(np.float64)  # (n_k, Dh), grouped-query aware
    v = trace.v[kind][layer, b, kv].astype(np.float64)
    d_head = q.shape[1]
    qk = q @ k.T
    scaled = qk / np.sqrt(d_head)
    blocked = np.asarray(trace.masks[kind][b], dtype=bool)
    masked = np.where(blocked, -1e9, scaled)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    probs = np.where(blocked, 0.0, e / e.sum(axis=-1, keepdims=True))
    empty_q, empty_k = np.zeros((q.shape[0], 0)), np.zeros((k.shape[0], 0))
    return Walk(kind=kind, layer=layer, b=b, head=head, batch=int(trace.masks[kind].shape[0]),
                n_heads=int(trace.q[kind].shape[2]), d_head=d_head, x=empty_q, x_kv=empty_k,
                q=q, k=k, v=v, qk=qk, scaled=scaled, masked=masked, blocked=blocked,
                probs=probs, context=probs @ v, concat=empty_q, out=empty_q)


def top_pair(probs: np.ndarray, n_q: int, n_k: int) -> tuple[int, int, float]:
    """(query, key, weight) of the largest weight off the diagonal where one exists."""
    p = np.array(probs[:n_q, :n_k], dtype=np.float64)
    if p.shape[0] > 1 and p.shape[1] > 1:
        np.fill_diagonal(p[: min(p.shape), : min(p.shape)], -1.0)
    q, k = np.unravel_index(int(np.argmax(p)), p.shape)
    return int(q), int(k), float(probs[q, k])


def zero_share(hidden: np.ndarray) -> float:
    """Share of exact zeros (what ReLU does to the FFN's hidden layer)."""
    return float(np.mean(np.asarray(hidden) == 0)) if np.size(hidden) else 0.0


def layer_stats(after: np.ndarray) -> tuple[float, float]:
    """Mean over pieces of each vector's mean and standard deviation (LayerNorm's effect)."""
    a = np.asarray(after, dtype=np.float64)
    return float(a.mean(axis=-1).mean()), float(a.std(axis=-1).mean())
