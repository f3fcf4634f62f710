"""Figures of the similarity view: the lines' cosine matrix, one pair's token × token terms,
and each head's effect on that pair's cosine (knocked out, and by attribution) side by side.

Pure: numbers in (model.analysis.similarity's results), plotly figures or plain text out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .common import (
    DIVERGING,
    base_layout,
    cell_text,
    half_width,
    heatmap,
    heatmap_trace,
    plotly_text,
    token_labels,
)
from .i18n import _

LABEL_CHARS = 28  # a line on an axis: its number and its first characters


def line_labels(lines: Sequence[str]) -> list[str]:
    """'1: The cat sat…' per line (numbered, so equal lines stay two rows)."""
    out = []
    for i, line in enumerate(lines, start=1):
        short = line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"
        out.append(f"{i}: {plotly_text(short)}")
    return out


def matrix_figure(lines: Sequence[str], matrix: np.ndarray, *, numbers: bool = True
                  ) -> go.Figure:
    """(B, B) cosines of the lines' sentence embeddings."""
    labels = line_labels(lines)
    hover = (_("line") + " %{y}<br>" + _("line") + " %{x}<br>" + _("cosine") +
             ": %{z:.4f}<extra></extra>")
    return heatmap(np.asarray(matrix, dtype=np.float64), labels, labels,
                   title=_("Cosine similarity of the sentence embeddings"),
                   x_title=_("line"), y_title=_("line"), colorscale=DIVERGING, zmin=-1.0,
                   zmax=1.0, zmid=0.0, numbers=numbers, fmt=".3f", hover=hover, square=True,
                   height=int(min(700, max(320, 160 + 40 * len(lines)))))


def terms_figure(terms: np.ndarray, tokens_a: Sequence[str], tokens_b: Sequence[str],
                 *, numbers: bool = False) -> go.Figure:
    """(nₐ, n_b) token-pair terms of one cosine: rows line A's pieces, columns line B's."""
    r = half_width(terms)
    hover = (_("line A") + ": %{y}<br>" + _("line B") + ": %{x}<br>" + _("term") +
             ": %{z:.5f}<extra></extra>")
    title = _("What each pair of pieces adds to the cosine (the cells sum to {cos:.4f})").format(
        cos=float(np.sum(terms)))
    return heatmap(terms, token_labels(tokens_b), token_labels(tokens_a), title=title,
                   x_title=_("line B's pieces"), y_title=_("line A's pieces"),
                   colorscale=DIVERGING, zmin=-r, zmax=r, zmid=0.0, numbers=numbers,
                   fmt=".3f", hover=hover)


def pair_words(pairs: Sequence[tuple[float, int, int]], tokens_a: Sequence[str],
               tokens_b: Sequence[str]) -> list[str]:
    """'“cat” ↔ “kitten”  +0.0123' per (term, i, j), for a plain-text list."""
    return [f"“{tokens_a[i]}” ↔ “{tokens_b[j]}”  {value:+.4f}" for value, i, j in pairs]


def heads_figure(exact: np.ndarray, attribution: np.ndarray, base: float) -> go.Figure:
    """(L, H) change of the pair's cosine when each head is knocked out: exact re-embedding
    on the left, attribution patching's first-order estimate on the right, one colour range."""
    exact, attribution = np.asarray(exact), np.asarray(attribution)
    n_layers, n_heads = exact.shape
    r = half_width(exact, attribution)
    x = [str(h) for h in range(n_heads)]
    y = [str(layer) for layer in range(n_layers)]
    hover = (_("layer") + " %{y}, " + _("head") + " %{x}<br>" + _("change in cosine") +
             ": %{z:+.5f}<extra></extra>")
    numbers = n_layers * n_heads <= 144
    # two panels on axes of our own: make_subplots took 0.1-0.3 s to build on this machine
    traces, layout = [], {}
    names = (_("Knocked out (exact)"), _("Attribution patching (estimate)"))
    for col, (z, name) in enumerate(zip((exact, attribution), names), start=1):
        trace = heatmap_trace(z, x, y, colorscale=DIVERGING, zmin=-r, zmax=r, zmid=0.0,
                              text=cell_text(z, ".3f") if numbers else None, hover=hover,
                              showscale=col == 2)
        trace.update(xaxis=f"x{col if col > 1 else ''}", yaxis=f"y{col if col > 1 else ''}")
        traces.append(trace)
        suffix = str(col) if col > 1 else ""
        left = 0.0 if col == 1 else 0.54
        layout[f"xaxis{suffix}"] = {"domain": [left, left + 0.44], "type": "category",
                                    "title": {"text": _("head")}, "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"type": "category", "autorange": "reversed",
                                    "title": {"text": _("layer")}, "anchor": f"x{suffix}"}
        layout.setdefault("annotations", []).append(
            {"text": name, "x": left + 0.22, "y": 1.0, "xref": "paper", "yref": "paper",
             "xanchor": "center", "yanchor": "bottom", "showarrow": False})
    title = _("Change in this pair's cosine ({base:.4f}) when one head is knocked out").format(
        base=base)
    layout.update(base_layout(title, int(min(700, max(320, 160 + 34 * n_layers)))))
    fig = go.Figure(data=traces, layout=layout, _validate=False)
    return fig


def agreement(exact: np.ndarray, attribution: np.ndarray) -> float | None:
    """Pearson r of the two head maps over the heads both have (None: too few or constant)."""
    e, a = np.asarray(exact, np.float64).ravel(), np.asarray(attribution, np.float64).ravel()
    ok = np.isfinite(e) & np.isfinite(a)
    if ok.sum() < 3 or np.std(e[ok]) == 0 or np.std(a[ok]) == 0:
        return None
    return float(np.corrcoef(e[ok], a[ok])[0, 1])


def ranked_heads(change: np.ndarray, k: int = 3) -> tuple[list, list]:
    """The k heads whose removal lowers the cosine most (they make the lines alike) and the k
    that raise it most: [(layer, head, change)] each."""
    z = np.asarray(change, np.float64)
    cells = [(float(z[i, j]), i, j) for i in range(z.shape[0]) for j in range(z.shape[1])
             if np.isfinite(z[i, j])]
    lower = [(i, j, v) for v, i, j in sorted(cells)[:k] if v < 0]
    higher = [(i, j, v) for v, i, j in sorted(cells, reverse=True)[:k] if v > 0]
    return lower, higher


def knockout_figure(lines: Sequence[str], change: np.ndarray, title: str, axis: str
                    ) -> go.Figure:
    """One bar per line: what knocking the ticked heads out did to its sentence embedding
    (a change in cosine, model.analysis.similarity.pooled_knockout); NaN bars are left out
    (line B itself)."""
    change = np.asarray(change, dtype=np.float64)
    keep = np.isfinite(change)
    labels = [x for x, k in zip(line_labels(lines), keep) if k]
    m = half_width(change[keep]) if keep.any() else 1.0
    fig = go.Figure(go.Bar(
        x=labels, y=change[keep],
        marker={"color": change[keep], "colorscale": DIVERGING, "cmin": -m, "cmax": m,
                "cmid": 0, "colorbar": {"title": "Δ cos"}},
        hovertemplate="%{x}<br>Δ cos %{y:+.4f}<extra></extra>"))
    fig.update_layout(base_layout(plotly_text(title), 320))
    fig.update_xaxes(title_text=_("line"), type="category")
    fig.update_yaxes(title_text=plotly_text(axis))
    return fig
