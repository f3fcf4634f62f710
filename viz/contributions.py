"""Head contributions to one predicted token: layers × heads maps, the other terms, top tokens.

Pure: a model.analysis.contributions.Contributions in, plotly Figures out. Every piece passes
through plotly_text, so tokens never render as markup.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.analysis.contributions import Contributions

from .common import (
    DIVERGING,
    SCREEN_W,
    fitting_numbers,
    half_width,
    layer_row_px,
    plotly_text,
    style,
    token_labels,
)
from .i18n import N_, _
from .masks import KIND_NAMES, kind_name

MEASURES = {  # (name, how it is computed): translate with _() where shown
    "dla": (N_("direct logit attribution"),
            N_("head output through the frozen final LayerNorm and the unembedding")),
    "knockout": (N_("logit change when knocked out"),
                 N_("logit with the head's context zeroed − logit without; red = the head "
                    "raises this token")),
}


def _table(c: Contributions, measure: str) -> dict[str, np.ndarray]:
    if measure == "dla":
        if c.dla is None:
            raise ValueError("direct logit attribution needs a pre-LN model with a final "
                             "LayerNorm; use the knock-out measure")
        return c.dla
    if measure == "knockout":
        return {k: -v for k, v in c.knockout.items()}  # shown as what the head adds
    raise ValueError(f"unknown measure {measure!r}; use one of {sorted(MEASURES)}")


def heads_figure(c: Contributions, measure: str = "dla") -> go.Figure:
    """One layers × heads map per attention kind on one symmetric colour range."""
    tables = _table(c, measure)
    kinds = list(tables)
    m = half_width(*tables.values())
    fig = make_subplots(rows=1, cols=len(kinds), horizontal_spacing=0.08,
                        subplot_titles=[kind_name(k) for k in kinds])
    label = "logit" if measure == "dla" else "−Δ logit"
    for col, kind in enumerate(kinds, start=1):
        z = np.asarray(tables[kind], dtype=np.float64)
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), colorscale=DIVERGING,
            zmin=-m, zmax=m, zmid=0, showscale=col == len(kinds),
            colorbar_title=label, texttemplate="%{text}",
            text=fitting_numbers(z, "+.2f", layer_row_px(z.shape[0]),
                                 (SCREEN_W - 150) / len(kinds)),
            name=kind, hovertemplate=kind_name(kind) + " " + _("layer") + " %{y} " + _("head")
                                     + f" %{{x}}<br>{label} %{{z:+.4f}}<extra></extra>"),
            row=1, col=col)
    name, how = MEASURES[measure]
    n_l = max(np.asarray(t).shape[0] for t in tables.values())
    head = _("{measure}: {token} at step {step} (logit {logit:.2f})").format(
        measure=_(name), token=plotly_text(c.token), step=c.step + 1, logit=c.logit)
    style(fig, f"{head}<br><sup>{_(how)}</sup>", _("head"), _("layer"),
          height=max(300, 190 + layer_row_px(n_l) * n_l))
    n_h = max(np.asarray(t).shape[1] for t in tables.values())
    fig.update_xaxes(dtick=-(-n_h // 40))  # a tick per head up to 40, then every k-th
    fig.update_yaxes(dtick=-(-n_l // 40), autorange="reversed")
    fig.update_layout(margin={"t": 110})
    return fig


def terms_figure(c: Contributions) -> go.Figure:
    """The whole sum on a pre-LN model: heads per kind and layer, then every other term."""
    if c.dla is None:
        raise ValueError("the sum of terms exists only on pre-LN models")
    names, values = [], []
    heads = _("{kind} layer {layer} heads")
    for kind, table in c.dla.items():
        shown = _(KIND_NAMES[kind]) if kind in KIND_NAMES else kind
        for layer, row in enumerate(np.asarray(table)):
            names.append(heads.format(kind=shown, layer=layer))
            values.append(float(row.sum()))
    for name, value in c.other.items():
        names.append(plotly_text(name))
        values.append(float(value))
    m = half_width(np.array(values))
    fig = go.Figure(go.Bar(
        x=values, y=names, orientation="h",
        marker={"color": values, "colorscale": DIVERGING, "cmin": -m,
                "cmax": m, "cmid": 0},
        hovertemplate="%{y}<br>%{x:+.4f}<extra></extra>"))
    title = _("Every term of the logit of {token}: Σ = {total:.4f}, model {logit:.4f}").format(
        token=plotly_text(c.token), total=c.dla_total(), logit=c.logit)
    style(fig, title, _("contribution to the logit"), "", height=max(300, 80 + 22 * len(names)))
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


def top_tokens_figure(c: Contributions, head: tuple[str, int, int],
                      measure: str = "dla") -> go.Figure:
    """What one head pushes the output towards (right) and away from (left)."""
    tops = c.dla_top if measure == "dla" else c.knockout_top
    if head not in tops:
        raise ValueError(f"no top tokens for head {head} with measure {measure!r}")
    top = tops[head]
    rows = list(top["promotes"]) + list(top["suppresses"])[::-1]  # largest first
    labels = token_labels([piece for piece, _v in rows])
    values = [v for _p, v in rows]
    colours = ["#b2182b" if v > 0 else "#2166ac" for v in values]
    fig = go.Figure(go.Bar(x=values, y=labels, orientation="h", marker_color=colours,
                           hovertemplate="%{y}<br>%{x:+.4f}<extra></extra>"))
    kind, layer, h = head
    title = _("{kind} layer {layer} head {head}: tokens promoted (red) and suppressed (blue)"
              ).format(kind=kind_name(kind), layer=layer, head=h)
    note = _("{measure} over the whole vocabulary").format(measure=_(MEASURES[measure][0]))
    style(fig, f"{title}<br><sup>{note}</sup>", _("effect on the logit"), "",
          height=max(300, 100 + 22 * len(rows)))
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_layout(margin={"t": 90})
    return fig
