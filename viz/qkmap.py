"""One head's global query–key map (AttentionViz): a scatter of queries and keys from many
sentences, coloured by position, token, language or role, hover showing token and sentence.

Pure: a model.analysis.qkmap.QKPoints in, a plotly Figure out. Every piece and sentence goes
through plotly_text, so nothing typed or generated renders as markup.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import plotly.graph_objects as go

from model.analysis.qkmap import QKPoints

from .common import base_layout, plotly_text
from .i18n import _
from .masks import kind_name

COLOUR_BY = ("position", "token", "language", "role")
TOP_TOKENS = 10  # tokens with their own colour when colouring by token; the rest are grey
SENTENCE_CHARS = 80
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f")


def _hover(points: QKPoints) -> list[str]:
    texts = [plotly_text(t if len(t) <= SENTENCE_CHARS else t[:SENTENCE_CHARS] + "…")
             for t in points.texts]
    query, key = _("query"), _("key")
    return [f"{query if q else key} {pos}:{plotly_text(tok)}<br>{texts[s]}"
            for q, pos, tok, s in zip(points.is_query, points.position, points.token,
                                      points.sentence)]


def _groups(points: QKPoints, colour_by: str) -> list[tuple[str, np.ndarray, dict]]:
    """(legend name, point mask, marker settings) per drawn trace."""
    n = len(points.token)
    if colour_by == "position":
        pos = points.position.astype(float)
        return [(_("all"), np.ones(n, bool),
                 {"color": pos, "colorscale": "Viridis", "cmin": 1, "cmax": max(2, pos.max()),
                  "colorbar": {"title": _("position")}})]
    if colour_by == "language":
        langs = sorted(set(points.lang))
        return [(plotly_text(lang or "?"), np.array([x == lang for x in points.lang]),
                 {"color": PALETTE[i % len(PALETTE)]}) for i, lang in enumerate(langs)]
    if colour_by == "role":
        return [(_("queries"), points.is_query, {"color": "#c62828"}),
                (_("keys"), ~points.is_query, {"color": "#1565c0"})]
    if colour_by != "token":
        raise ValueError(f"colour_by must be one of {COLOUR_BY}")
    common = [t for t, _n in Counter(points.token).most_common(TOP_TOKENS)]
    tokens = np.array(points.token, dtype=object)
    out = [(plotly_text(t), tokens == t, {"color": PALETTE[i % len(PALETTE)]})
           for i, t in enumerate(common)]
    out.append((_("other tokens"), ~np.isin(tokens, common), {"color": "#cfcfcf"}))
    return out


def qkmap_figure(points: QKPoints, kind: str, layer: int, head: int,
                 colour_by: str = "position") -> go.Figure:
    """Queries (circles) and keys (open diamonds) of one head in one 2-D embedding."""
    hover = np.array(_hover(points), dtype=object)
    traces = []
    for name, mask, marker in _groups(points, colour_by):
        for role, sel, symbol in ((_("queries"), points.is_query, "circle"),
                                  (_("keys"), ~points.is_query, "diamond-open")):
            pick = mask & sel
            if not pick.any():
                continue
            m = dict(marker, symbol=symbol, size=6, opacity=0.75)
            if isinstance(m.get("color"), np.ndarray):
                m["color"] = m["color"][pick]
                m["showscale"] = symbol == "circle"  # one colour bar, on the queries
            traces.append(go.Scatter(
                x=points.xy[pick, 0], y=points.xy[pick, 1], mode="markers", marker=m,
                name=f"{name} · {role}" if colour_by != "role" else name,
                text=list(hover[pick]), hovertemplate="%{text}<extra></extra>"))
    how = points.method.upper() if points.method == "pca" else "t-SNE"
    if points.explained:
        shares = ", ".join(f"{100 * v:.0f} %" for v in points.explained)
        how += " (" + _("{shares} of variance").format(shares=shares) + ")"
    name = kind_name(kind)
    head_line = _("{kind} · layer {layer} · head {head}: {queries} queries and {keys} keys "
                  "from {sentences} sentences").format(
        kind=name, layer=layer, head=head, queries=int(points.is_query.sum()),
        keys=int((~points.is_query).sum()), sentences=len(points.texts))
    note = _("joint {method}; keys shifted and scaled so a query lies near the keys it "
             "attends to").format(method=how)
    layout = base_layout(f"{head_line}<br><sup>{note}</sup>", height=640)
    layout.update(xaxis={"title": {"text": _("axis 1")}, "zeroline": False},
                  yaxis={"title": {"text": _("axis 2")}, "zeroline": False,
                         "scaleanchor": "x", "scaleratio": 1},
                  # the legend below the map: on the right it sat under the colour bar's title
                  margin={"l": 10, "r": 10, "t": 90, "b": 10},
                  legend={"itemsizing": "constant", "orientation": "h", "x": 0.0,
                          "xanchor": "left", "y": -0.12, "yanchor": "top"})
    return go.Figure(data=traces, layout=layout)
