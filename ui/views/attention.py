"""Attention: one head, the layer's heads side by side and the grid of every head."""

from __future__ import annotations

import streamlit as st

from ui.common import chart, goto, head_picker
from ui.context import Ctx
from ui.i18n import _
from ui.pick import head_chart
from ui.views.long_attention import render_if_long
from ui.views.measure import measure_toggle
from viz import attention as viz_attention
from viz.click import panel_targets


def _open_head(n_heads: int) -> None:
    index = st.session_state["_w_open"]
    st.session_state["layer"], st.session_state["head"] = divmod(int(index), n_heads)


def render(ctx: Ctx) -> None:
    if render_if_long(ctx):  # a long text given: its own mode, pooled maps
        return
    t, _shares = measure_toggle(ctx)  # weights α, or ‖αf(x)‖ as row shares
    kind, layer, head = head_picker(ctx)
    st.button(_("Why this head attends"), key="attn_why", on_click=goto,  # view=why
              args=("why", (kind, layer, head)))
    opts = {"hide_pad": ctx.hide_pad, "colorscale": ctx.colorscale}
    chart(viz_attention.head_figure(t, kind, layer, ctx.b, head, numbers=ctx.numbers, **opts),
          ctx)
    n_layers, n_heads = t.n_layers(kind), t.attn[kind].shape[2]
    # heatmap cells get no click events in Streamlit: an invisible marker per panel does
    hover = _("layer {layer}, head {head}: click to open").format(
        layer="%{customdata[0]}", head="%{customdata[1]}")
    head_chart(panel_targets(viz_attention.layer_figure(t, kind, layer, ctx.b, **opts), hover,
                             layer=layer, n_heads=n_heads), ctx, key="attn_layer", kind=kind)
    grid = viz_attention.grid_figure(t, kind, ctx.b, selected=(layer, head), **opts)
    head_chart(panel_targets(grid, hover), ctx, key="attn_grid", kind=kind)
    if grid.layout.meta["tiles"]["pooled"]:  # the thumbnails are block means, not the weights
        st.caption(_("Each thumbnail is pooled to what its size on screen can show: a cell is "
                     "the mean over a block of pieces. Click a head, or pick it below, for its "
                     "full matrix."))
    st.session_state["_w_open"] = layer * n_heads + head
    st.selectbox(_("Open a head from the grid"), list(range(n_layers * n_heads)), key="_w_open",
                 format_func=lambda i: _("layer {layer}, head {head}").format(
                     layer=i // n_heads, head=i % n_heads),
                 on_change=_open_head, args=(n_heads,))
