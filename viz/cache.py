"""Figures of the key/value cache during generation (view=cache): what each new piece read,
the first position's share over the steps, and the eviction what-ifs' losses.

Numbers in, plotly figures out; the numbers come from model.generate(record=True),
model.analysis.cache_reads and model.analysis.eviction.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .common import heatmap, plotly_text, style, token_labels
from .i18n import N_, _
from .plot_area import CHAR_W, plot_area

# the policies of model.analysis.eviction, as the legend names them (translated where shown)
POLICY_LABELS = {"window": N_("window"), "sinks": N_("sinks + window"),
                 "heavy": N_("heavy hitters (H2O)"), "no_sink": N_("no sink")}
LINE = 1.2  # tilted labels' lines this many fonts apart along the axis, so glyphs never meet


def step_labels(pieces: Sequence[str]) -> list[str]:
    """'s: piece' for each generated piece (s from 0), unique as plotly needs."""
    return [f"{s}: {plotly_text(p)}" for s, p in enumerate(pieces)]


def read_map_figure(z: np.ndarray, tokens: Sequence[str], chosen: Sequence[str],
                    title: str) -> go.Figure:
    """Steps (rows) × cached positions (columns): what the query of each step read."""
    width = z.shape[1]
    return heatmap(z, token_labels(list(tokens)[:width], numbered=True), step_labels(chosen),
                   title=title, x_title=_("cached position"),
                   y_title=_("step: generated piece"), zmin=0.0, zmax=1.0)


def first_share_figure(share: np.ndarray, mean: np.ndarray, title: str) -> go.Figure:
    """One line per head (share: (S, H)) and the layer's mean (S,), over the steps."""
    fig = go.Figure()
    steps = list(range(share.shape[0]))
    for h in range(share.shape[1]):
        fig.add_trace(go.Scatter(x=steps, y=share[:, h], mode="lines+markers",
                                 name=_("head {h}").format(h=h), opacity=0.6))
    fig.add_trace(go.Scatter(x=steps, y=mean, mode="lines", name=_("mean of the heads"),
                             line={"width": 4, "color": "black"}))
    style(fig, title, _("step"), _("share of attention"), height=360)
    fig.update_yaxes(range=[0, 1.02])
    return fig


def loss_figure(full: np.ndarray, policy: np.ndarray, chosen: Sequence[str],
                policy_name: str, title: str) -> go.Figure:
    """Per generated piece: its loss (−log p) with the full cache and with the policy."""
    x = step_labels(chosen)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=full, mode="lines+markers", name=_("full cache")))
    fig.add_trace(go.Scatter(x=x, y=policy, mode="lines+markers", name=policy_name))
    style(fig, title, _("step: generated piece"), _("loss (nats)"), height=360)
    fig.update_xaxes(type="category")
    return fig


def budget_figure(budgets: Sequence[int], losses: Mapping[str, Sequence[float | None]],
                  full: float, title: str) -> go.Figure:
    """Mean loss of the continuation against the cache budget, one line per policy, and the
    full cache's as a dashed line."""
    fig = go.Figure()
    for policy, row in losses.items():
        fig.add_trace(go.Scatter(x=list(budgets), y=[np.nan if v is None else v for v in row],
                                 mode="lines+markers",
                                 name=_(POLICY_LABELS.get(policy, policy))))
    fig.add_hline(y=full, line_dash="dash",
                  annotation_text=_("full cache {loss:.3f}").format(loss=full))
    style(fig, title, _("cache budget (positions)"), _("mean loss (nats)"), height=400)
    return fig


def tick_plan(labels: Sequence[str], spacing_px: float, font_px: float) -> tuple[int, int]:
    """(angle, step) for x labels spacing_px apart at font_px: level where the widest fits
    its spacing; else 45° where neighbours stay a line apart even when one is much longer
    than the next (a slanted label's middle moves back by half its length × cos 45°: "14:."
    beside "15:[CLS]" met at 18 px); else upright (90°, every label's middle on its tick),
    with every step-th label named so that named ones are a line apart."""
    widths = [CHAR_W * font_px * len(html.unescape(str(t))) for t in labels] or [0.0]
    if max(widths) + 4 <= spacing_px:
        return 0, 1
    lag = (max(widths) - min(widths)) / 2 * np.cos(np.pi / 4)
    if spacing_px * np.sin(np.pi / 4) >= LINE * font_px and spacing_px - lag >= LINE * font_px:
        return -45, 1
    return -90, int(np.ceil(LINE * font_px / max(spacing_px, 1e-6)))


def fit_position_ticks(fig: go.Figure, width_px: float, font_px: float) -> go.Figure:
    """The read map's cached-position labels (x) tilted or thinned, in place, where their text
    at font_px (the tick font in use, normal or presenter) is wider than their spacing in the
    plot area plotly.js will give the figure width_px wide (viz.plot_area's estimate)."""
    spec = fig.to_dict()  # the estimate at this font: y's labels and the colour bar's width
    spec["layout"]["font"] = {"size": font_px}
    for name in ("xaxis", "yaxis"):
        spec["layout"].setdefault(name, {})["tickfont"] = {"size": font_px}
    labels = list(fig.data[0].x)
    spacing = plot_area(spec, width_px)[0] / max(1, len(labels))
    angle, step = tick_plan(labels, spacing, font_px)
    fig.update_xaxes(tickangle=angle, tickvals=labels[::step], ticktext=labels[::step])
    return fig
