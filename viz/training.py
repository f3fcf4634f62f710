"""Training view figures: loss and in-context learning over steps, heads × steps per detector.

Pure functions: a training.lm.history.History in, plotly Figures out. The phase change
(the step where the best induction score rises most) is marked on every chart over steps.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .common import SEQUENTIAL, base_layout, category_at, heatmap
from .i18n import N_, _

SERIES = {"val_loss": N_("held-out loss (probe row)"),
          "train_loss_text": N_("training loss (text rows)"),
          "train_loss_random": N_("training loss (repeated random rows)")}


def _mark(fig: go.Figure, step: int | None, **where) -> None:
    if step is not None:
        fig.add_vline(x=step, line_dash="dash", line_color="#d62728", **where)


def loss_figure(h, phase: int | None, snapshots: dict | None = None) -> go.Figure:
    """Losses (top) and the in-context learning score (bottom) over training steps; snapshots
    ({step: {held_out_loss, icl}}, the card's) add both measured on the held-out documents."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        row_heights=[0.6, 0.4])
    for name, label in SERIES.items():
        y = h.series[name]
        ok = np.isfinite(y)
        if ok.any():
            fig.add_trace(go.Scatter(x=h.steps[ok], y=y[ok], name=_(label), mode="lines"),
                          row=1, col=1)
    icl = h.series["icl"]
    fig.add_trace(go.Scatter(x=h.steps, y=icl, name=_("in-context learning (probe row)"),
                             mode="lines+markers", line={"color": "#9467bd"}), row=2, col=1)
    if snapshots:
        steps = sorted(int(k) for k in snapshots)
        for row, key, label in ((1, "held_out_loss", N_("held-out loss (documents, snapshots)")),
                                (2, "icl", N_("in-context learning (documents, snapshots)"))):
            fig.add_trace(go.Scatter(x=steps, y=[snapshots[str(x)][key] for x in steps],
                                     name=_(label), mode="markers+lines",
                                     line={"dash": "dot"}), row=row, col=1)
    fig.add_hline(y=0, line_color="#888", row=2, col=1)
    if phase is not None:
        for row in (1, 2):
            _mark(fig, phase, row=row, col=1)
        fig.add_annotation(x=phase, y=1.0, yref="paper", showarrow=False, yanchor="bottom",
                           text=_("phase change: step {step}").format(step=phase),
                           font={"color": "#d62728"})
    fig.update_layout(base_layout(_("Loss and in-context learning over training"), 560))
    fig.update_layout(legend={"orientation": "h", "y": -0.15})
    fig.update_yaxes(title_text=_("loss (nats)"), row=1, col=1)
    fig.update_yaxes(title_text=_("late − early loss"), row=2, col=1)
    fig.update_xaxes(title_text=_("training step"), row=2, col=1)
    return fig


def head_labels(n_layers: int, n_heads: int) -> list[str]:
    """'L0 H0', 'L0 H1', … in (layer, head) order."""
    return [f"L{layer} H{head}" for layer in range(n_layers) for head in range(n_heads)]


def heads_steps_figure(h, detector: str, name: str, phase: int | None) -> go.Figure:
    """Every head's score of one detector (rows) at every probe (columns), on 0..1."""
    s, n_l, n_h = h.heads[detector].shape
    z = h.heads[detector].reshape(s, n_l * n_h).T  # (L·H, S)
    steps = [str(int(x)) for x in h.steps]
    fig = heatmap(z, steps, head_labels(n_l, n_h),
                  title=_("{detector} score of every head over training").format(detector=name),
                  x_title=_("training step"), y_title=_("head"), colorscale=SEQUENTIAL[0],
                  zmin=0.0, zmax=1.0, height=max(320, 160 + 30 * n_l * n_h))
    if phase is not None:  # a category axis: mark the column of the phase change
        fig.add_vline(x=category_at(steps, steps[h.at(phase)]), line_dash="dash",
                      line_color="#d62728")
    return fig


def best_heads_rows(h, i: int, names: dict[str, str]) -> list[dict]:
    """For probe i: each detector's best head and its score."""
    rows = []
    for detector, scores in h.heads.items():
        layer, head = np.unravel_index(int(np.argmax(scores[i])), scores[i].shape)
        score = round(float(scores[i, layer, head]), 3)
        rows.append({_("detector"): names.get(detector, detector),
                     _("head"): f"L{layer} H{head}", _("score"): score})
    return rows
