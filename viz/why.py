"""Why a head attends (view=why): the query-component × key-component matrix of one score, its
largest terms in words, Q/K/V composition maps beside their random baseline, and what the head
writes (components of its output, promoted and suppressed tokens). Pure: numbers in, figures
and sentences out.

Shape legend: n_q / n_k query / key components, L layers, H heads.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .common import DIVERGING, SCREEN_W, base_layout, heatmap, plotly_text, style
from .i18n import _

SIDES = ("q", "k", "v")
SUBPLOT_TITLE_PX = 16  # make_subplots' titles (presenter mode draws them 1.5x: 24 px)
MAP_SPACING = 0.08  # between the three composition maps, of the plot's width
# a title's character in font sizes as Chromium draws it in Source Sans: "V-composition
# (random: 0.089)" is 308 px at 24 px, 0.44 a character (0.5 here, for spare); a wide (CJK)
# character a whole size
NARROW_EM, WIDE_EM = 0.5, 1.0
LEFT_EM = 4.0  # the maps' left margin (layer numbers and "layer") is under this many sizes
EDGE_PX = 4  # between a title's end and the chart's edge


def part_name(part: str) -> str:
    """A component's name in words: "head 0.3's output", "MLP 1's output", "the token
    embedding", "the positional term", "the biases"."""
    if part == "embedding":
        return _("the token embedding")
    if part == "position":
        return _("the positional term")
    if part == "bias":
        return _("the biases")
    if part.startswith("MLP "):
        return _("MLP {layer}'s output").format(layer=part[4:])
    if part.startswith("L") and "H" in part:
        layer, rest = part[1:].split("H", 1)
        if rest.endswith(" cross"):
            return _("cross head {layer}.{head}'s output").format(layer=layer,
                                                                  head=rest[:-6])
        return _("head {layer}.{head}'s output").format(layer=layer, head=rest)
    return part


def top_sentences(c, q_token: str, k_token: str, n: int = 5) -> list[str]:
    """The n largest terms of a QKComponents in words, as shares of the score."""
    total = float(np.abs(c.terms).sum() + abs(c.bias)) or 1.0
    out = []
    for qp, kp, value in c.top(n):
        out.append(_("{share:.0%} of this score ({sign}{value:.3f}): {q} at {qt} meets {k} "
                     "of {kt}").format(share=abs(value) / total, sign="+" if value >= 0 else "",
                                       value=value, q=part_name(qp), qt=q_token,
                                       k=part_name(kp), kt=k_token))
    return out


def components_figure(c, q_token: str, k_token: str) -> go.Figure:
    """Heatmap of c.terms (query components down, key components across), zero white."""
    z = np.asarray(c.terms)
    lim = float(np.abs(z).max()) or 1.0
    return heatmap(z, [plotly_text(p) for p in c.key_parts],
                   [plotly_text(p) for p in c.query_parts],
                   title=_("Score {score:.3f} = terms {sum:.3f} + constant {bias:.3f}").format(
                       score=c.score, sum=float(z.sum()), bias=c.bias),
                   x_title=_("key components (at {token})").format(token=plotly_text(k_token)),
                   y_title=_("query components (at {token})").format(
                       token=plotly_text(q_token)),
                   colorscale=DIVERGING, zmid=0.0, zmin=-lim, zmax=lim, numbers=True,
                   fmt=".2f")


def text_px(text: str, size: float) -> float:
    """About how wide a line of text is drawn at size px (NARROW_EM, WIDE_EM a character)."""
    return size * sum(WIDE_EM if unicodedata.east_asian_width(c) in "WF" else NARROW_EM
                      for c in text)


def right_margin(titles: list[str], width_px: float, size: float) -> int:
    """The right margin in px that keeps the last of n equal maps' centred titles (at size
    px) inside a chart width_px wide: half the title past half its map, and EDGE_PX. The
    maps share the plot's width less MAP_SPACING between each two, so a wider margin narrows
    the last map as well: r = (T/2 + EDGE - d(W - l)/2) / (1 - d/2), d its share."""
    share = (1 - MAP_SPACING * (len(titles) - 1)) / len(titles)
    half_title = text_px(titles[-1], size) / 2
    left = LEFT_EM * size
    need = (half_title + EDGE_PX - share * (width_px - left) / 2) / (1 - share / 2)
    return max(0, int(np.ceil(need)))


def composition_figure(scores: dict, kind: str, layer: int, head: int,
                       width_px: float = SCREEN_W,
                       title_px: float = SUBPLOT_TITLE_PX) -> go.Figure:
    """Q-, K- and V-composition of head (kind, layer, head) with every earlier head, one
    layer × head map per side, each titled with its random baseline. width_px: the chart's
    drawn width, title_px: its map titles' drawn size (presenter mode's 24 px); the right
    margin holds the last title (right_margin: presenting, "V-composition (random: 0.089)"
    ran 6 px past the chart's edge in Chromium)."""
    titles = [_("{side}-composition (random: {base:.3f})").format(
        side=s.upper(), base=scores["baseline"][s][kind]) for s in SIDES]
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=MAP_SPACING, subplot_titles=titles)
    top = max(float(np.nanmax(np.nan_to_num(scores[s][kind][layer, head], nan=0.0)))
              for s in SIDES) or 1.0
    for i, side in enumerate(SIDES):
        z = np.asarray(scores[side][kind][layer, head], np.float32)  # (L', H)
        earlier = scores["earlier"][side][kind]
        fig.add_trace(go.Heatmap(
            z=z, x=[str(h) for h in range(z.shape[1])], y=[str(n) for n in range(z.shape[0])],
            zmin=0.0, zmax=top, colorscale="Viridis", showscale=i == 2,
            hovertemplate=_("{earlier} layer %{{y}} head %{{x}}: %{{z:.3f}}").format(
                earlier=earlier) + "<extra></extra>"), row=1, col=i + 1)
        fig.update_xaxes(title_text=_("head"), type="category", row=1, col=i + 1)
        fig.update_yaxes(title_text=_("layer"), type="category", autorange="reversed",
                         row=1, col=i + 1)
    layout = base_layout(_("How much this head reads each earlier head (grey: no path)"), 360)
    layout["margin"]["r"] = max(layout["margin"]["r"], right_margin(titles, width_px, title_px))
    fig.update_layout(layout)
    fig.update_layout(plot_bgcolor="#dddddd")
    return fig


def output_figure(o, n: int = 12) -> go.Figure:
    """Each component's share of what the head writes (its projection on the output)."""
    share = np.asarray(o.share).sum(axis=1)
    order = np.argsort(-np.abs(share))[:n][::-1]
    fig = go.Figure(go.Bar(x=share[order], y=[plotly_text(part_name(o.parts[i]))
                                              for i in order], orientation="h",
                           marker_color=["#2166ac" if v >= 0 else "#b2182b"
                                         for v in share[order]]))
    return style(fig, _("What the head writes, by its keys' components (shares add up to 1)"),
                 _("share of the output"), "", height=max(300, 60 + 28 * len(order)))


def tokens_figure(o) -> go.Figure:
    """Top promoted (positive) and suppressed (negative) tokens of the direct effect."""
    rows = list(o.promoted)[::-1] + list(o.suppressed)
    labels = [plotly_text(repr(p)) for p, _v in rows]
    values = [v for _p, v in rows]
    fig = go.Figure(go.Bar(x=values, y=labels, orientation="h",
                           marker_color=["#2166ac" if v >= 0 else "#b2182b" for v in values]))
    fig.update_yaxes(type="category", autorange="reversed")
    return style(fig, _("Direct effect on the logits: promoted and suppressed tokens"),
                 _("logit change"), "", height=max(300, 60 + 24 * len(rows)))
