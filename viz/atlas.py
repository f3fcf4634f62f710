"""The head atlas's figures (view=atlas): every head of one attention kind as a point, a
group's typical attention pattern on one input, and one head's spread over the inputs.

Pure functions: numbers from model.analysis.atlas in, plotly Figures or rows out. The scatter's
points carry (layer, head, x, kind) as customdata, as viz.click's targets do, so a click on a
point names its head (ui.pick.head_chart opens it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .common import heatmap, plotly_text, style, token_labels
from .i18n import N_, _
from .masks import kind_name
from .plot_area import CHAR_W, plot_area

METRIC_NAMES = {
    "entropy": N_("entropy"), "distance": N_("attention distance"),
    "prev_token": N_("previous token"), "next_token": N_("next token"), "self": N_("self"),
    "duplicate": N_("duplicate token"), "punctuation": N_("punctuation"),
    "sink_first": N_("first position"), "sink_end": N_("closing marker"),
    "sink_special": N_("other markers"), "induction": N_("induction"),
    "alignment": N_("gold alignment"),
}
METRIC_DEFINITIONS = {
    "entropy": N_("mean entropy (nats) of a query's attention row; 0 = all on one key"),
    "distance": N_("mean |query − key| in pieces, weighted by attention (cross attention: from "
                   "the query's proportional place in the source)"),
    "prev_token": N_("mean weight on the piece just before the query"),
    "next_token": N_("mean weight on the piece just after the query, where the head may see "
                     "it"),
    "self": N_("mean weight on the query's own piece"),
    "duplicate": N_("mean weight on other copies of the query's own piece, over queries that "
                    "have one"),
    "punctuation": N_("mean weight on punctuation pieces"),
    "sink_first": N_("mean weight on the first piece"),
    "sink_end": N_("mean weight on a closing marker at the end of the input"),
    "sink_special": N_("mean weight on the other marker pieces"),
    "induction": N_("on repeated random pieces, mean weight from each second-copy piece to "
                    "the piece after its first copy"),
    "alignment": N_("share of gold-aligned target words whose cross attention peaks on a gold "
                    "source word"),
}
DIRECTIONS = {"high": N_("high {metric}"), "low": N_("low {metric}")}
# a qualitative palette that stays apart for colour-blind readers (Okabe–Ito) and in print
GROUP_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
                 "#F0E442", "#000000")
EMBEDDING = "mds"  # the placement by the distance matrix, beside two metrics
LABEL_GAP_PX = 3  # clear space kept between two drawn point labels
MARKER_PX = 13
LINE_H = 1.3  # a drawn label's box is this many fonts high (Chromium: 14 px at 11 px)


def metric_name(metric: str) -> str:
    return _(METRIC_NAMES[metric]) if metric in METRIC_NAMES else plotly_text(metric)


def group_name(metric: str, direction: str, z: float) -> str:
    """A group's name in words: what sets it apart ('high previous token (z = +2.1)')."""
    if not metric:
        return _("all heads")
    text = _(DIRECTIONS[direction]).format(metric=metric_name(metric))
    return f"{text} (z = {z:+.1f})"


def head_label(layer: int, head: int) -> str:
    return _("layer {layer}").format(layer=layer) + " · " + _("head {head}").format(head=head)


def hover_text(layer: int, head: int, group: str, scores: Sequence[tuple[str, float, float]]
               ) -> str:
    """A point's hover: its head, its group and each metric's mean ± std over the inputs."""
    lines = [f"<b>{head_label(layer, head)}</b>", _("group: {name}").format(name=group)]
    lines += [f"{metric_name(m)}: {mean:.3f} ± {std:.3f}" for m, mean, std in scores]
    return "<br>".join(lines)


def atlas_scatter(x: np.ndarray, y: np.ndarray, layers: np.ndarray, heads: np.ndarray,
                  colour: np.ndarray, colour_names: Sequence[str], hovers: Sequence[str],
                  kind: str, x_title: str, y_title: str, title: str) -> go.Figure:
    """Every head as a point at (x, y), all arrays (N,); colour (N,) indexes colour_names
    (a layer or a group), one legend entry each. customdata (layer, head, x, kind)."""
    fig = go.Figure()
    for c, name in enumerate(colour_names):
        on = np.flatnonzero(colour == c)
        if not len(on):
            continue
        data = [[int(layers[i]), int(heads[i]), float(x[i]), kind] for i in on]
        fig.add_trace(go.Scatter(
            x=x[on].tolist(), y=y[on].tolist(), mode="markers+text", name=name,
            text=[f"{int(layers[i])}.{int(heads[i])}" for i in on], textposition="top center",
            textfont={"size": 11}, customdata=data,
            hovertext=[hovers[i] for i in on], hovertemplate="%{hovertext}<extra></extra>",
            marker={"size": 13, "color": GROUP_COLOURS[c % len(GROUP_COLOURS)],
                    "line": {"width": 1, "color": "white"}}))
    style(fig, title, x_title, y_title, height=520)
    fig.update_layout(hovermode="closest", clickmode="event+select",
                      legend={"title": {"text": kind_name(kind)}})
    return fig


def group_pattern(attn: np.ndarray, members: Sequence[tuple[int, int]], q_pieces: Sequence[str],
                  k_pieces: Sequence[str], title: str) -> go.Figure:
    """The mean attention of a group's heads on one input: attn (L, H, Q, K)."""
    rows = np.stack([attn[layer, head] for layer, head in members])  # (members, Q, K)
    return heatmap(rows.mean(0), token_labels(k_pieces), token_labels(q_pieces), title=title,
                   x_title=_("key"), y_title=_("query"), zmin=0.0, zmax=1.0, numbers=True)


def spread_figure(values: np.ndarray, texts: Sequence[str], title: str, x_title: str
                  ) -> go.Figure:
    """One head's per-input values (I,) (NaN: not measured there) as a box with every input a
    point; hover names the input."""
    ok = np.flatnonzero(np.isfinite(values))
    fig = go.Figure(go.Box(
        x=values[ok].tolist(), y=[""] * len(ok), orientation="h", boxpoints="all",
        jitter=0.5, pointpos=0, name="", hovertext=[plotly_text(texts[i][:80]) for i in ok],
        hovertemplate="%{x:.3f}<br>%{hovertext}<extra></extra>",
        marker={"color": GROUP_COLOURS[0], "size": 7}, line={"color": GROUP_COLOURS[0]}))
    style(fig, title, x_title, "", height=260)
    fig.update_layout(showlegend=False)
    return fig



def motion_figure(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray],
                  layers: np.ndarray, heads: np.ndarray, kind: str, names: tuple[str, str],
                  x_title: str, y_title: str, title: str) -> go.Figure:
    """Every head of two models (or two snapshots) of one shape in one scatter: a hollow point
    where it is in the first, a filled one in the second and a line between, so a head that
    changes role moves. a, b: (x (N,), y (N,)) layer-major; customdata (layer, head, x, kind)."""
    (xa, ya), (xb, yb) = a, b
    n = len(layers)
    seg_x = np.column_stack([xa, xb, np.full(n, np.nan)]).ravel()
    seg_y = np.column_stack([ya, yb, np.full(n, np.nan)]).ravel()
    fig = go.Figure(go.Scatter(x=[None if np.isnan(v) else float(v) for v in seg_x],
                               y=[None if np.isnan(v) else float(v) for v in seg_y],
                               mode="lines", line={"color": "#999999", "width": 1},
                               hoverinfo="skip", showlegend=False))
    for (x, y), name, filled, colour in (((xa, ya), names[0], False, GROUP_COLOURS[1]),
                                         ((xb, yb), names[1], True, GROUP_COLOURS[0])):
        hovers = [f"<b>{head_label(int(la), int(h))}</b> · {plotly_text(name)}<br>"
                  f"{x_title}: {xa[i]:.3f} → {xb[i]:.3f}<br>{y_title}: {ya[i]:.3f} → {yb[i]:.3f}"
                  for i, (la, h) in enumerate(zip(layers, heads))]
        fig.add_trace(go.Scatter(
            x=np.asarray(x, float).tolist(), y=np.asarray(y, float).tolist(),
            mode="markers+text" if filled else "markers", name=plotly_text(name),
            text=[f"{int(la)}.{int(h)}" for la, h in zip(layers, heads)],
            textposition="top center", textfont={"size": 11},
            customdata=[[int(la), int(h), float(v), kind] for la, h, v in zip(layers, heads, x)],
            hovertext=hovers, hovertemplate="%{hovertext}<extra></extra>",
            marker={"size": 12, "color": colour if filled else "rgba(0,0,0,0)",
                    "line": {"width": 2, "color": colour}}))
    style(fig, title, x_title, y_title, height=520)
    fig.update_layout(hovermode="closest", clickmode="event+select")
    return fig


def keep_labels(px: np.ndarray, py: np.ndarray, widths: np.ndarray, font_px: float,
                gap: float = LABEL_GAP_PX) -> np.ndarray:
    """Which points keep their label, (N,) bool: greedy in screen space (px, py (N,) in
    pixels), the most isolated point first; a label (widths (N,) px wide, LINE_H fonts high,
    centred above its point, as textposition "top center" draws it) is kept only where its
    box stays gap px clear of every label kept before it."""
    n = len(px)
    if n == 0:
        return np.zeros(0, bool)
    # nearest neighbour's distance: isolated points first, so a cluster costs few labels
    d = np.hypot(px[:, None] - px[None], py[:, None] - py[None])  # (N, N)
    np.fill_diagonal(d, np.inf)
    keep = np.zeros(n, bool)
    for i in np.argsort(-d.min(axis=1), kind="stable"):
        apart_x = np.abs(px[keep] - px[i]) >= (widths[keep] + widths[i]) / 2 + gap
        apart_y = np.abs(py[keep] - py[i]) >= LINE_H * font_px + gap
        keep[i] = bool(np.all(apart_x | apart_y))
    return keep


def place_labels(fig: go.Figure, width_px: float, font_px: float, axis_font_px: float = 12,
                 height_px: float | None = None) -> tuple[int, int]:
    """Blank (in place) the point labels of fig's written traces that would collide when
    drawn width_px wide (height_px high, else the figure's height) with labels font_px high
    and ticks and legend axis_font_px (the fonts in use, normal or presenter); their hover
    text stays. Returns (labels kept, labels in all)."""
    traces = [t for t in fig.data if "text" in str(t.mode or "") and t.text is not None]
    if not traces:
        return 0, 0
    xs = np.concatenate([np.asarray(t.x, float) for t in traces])
    ys = np.concatenate([np.asarray(t.y, float) for t in traces])
    texts = [str(v) for t in traces for v in t.text]
    plot_w, plot_h = plot_area(fig, width_px)  # the figure's margins, no heatmap in it
    if height_px is not None:
        plot_h += height_px - (fig.layout.height or 450)
    # the scatter's own furniture at the axis font f: y's ticks and title and the legend
    # (its longest name) beside the plot, x's ticks and title below it. Fitted to Chromium's
    # 12 x 12 atlas (legend 'layer 11'): 563 x 376 drawn of 820 x 520 at 12 px, 709 x 615
    # of 1040 x 780 presenting (18 px)
    legend = max((len(str(t.name or "")) for t in fig.data), default=0)
    plot_w -= 90 + 8 * axis_font_px + legend * CHAR_W * axis_font_px
    plot_h -= 32 + 3.5 * axis_font_px
    ok = np.isfinite(xs) & np.isfinite(ys)
    spans = [max(np.ptp(v[ok]) if ok.any() else 0.0, 1e-12) for v in (xs, ys)]
    # plotly pads an autorange for the markers and their text: 36 px a side on x and 27 on y
    # drawn on that atlas at 11 px; a shade more keeps the scale on the safe side
    pad_x, pad_y = 3 * MARKER_PX + font_px, 2 * MARKER_PX + font_px
    px = (xs - np.nanmin(xs[ok] if ok.any() else xs)) / spans[0] * (plot_w - 2 * pad_x)
    py = -(ys - np.nanmin(ys[ok] if ok.any() else ys)) / spans[1] * (plot_h - 2 * pad_y)
    widths = np.array([CHAR_W * font_px * len(t) for t in texts])
    keep = np.zeros(len(texts), bool)
    keep[ok] = keep_labels(px[ok], py[ok], widths[ok], font_px)
    start = 0
    for t in traces:
        n = len(t.text)
        t.text = [v if k else "" for v, k in zip(t.text, keep[start:start + n])]
        start += n
    return int(keep.sum()), len(texts)
