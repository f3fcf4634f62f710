"""Attention: one head, the layer's heads side by side and the grid of every head."""

from __future__ import annotations

import streamlit as st

from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import _
from ui.views.measure import measure_toggle
from viz import attention as viz_attention


def _open_head(n_heads: int) -> None:
    index = st.session_state["_w_open"]
    st.session_state["layer"], st.session_state["head"] = divmod(int(index), n_heads)


def render(ctx: Ctx) -> None:
    t, _shares = measure_toggle(ctx)  # weights α, or ‖αf(x)‖ as row shares
    kind, layer, head = head_picker(ctx)
    opts = {"hide_pad": ctx.hide_pad, "colorscale": ctx.colorscale}
    chart(viz_attention.head_figure(t, kind, layer, ctx.b, head, numbers=ctx.numbers, **opts),
          ctx)
    chart(viz_attention.layer_figure(t, kind, layer, ctx.b, **opts), ctx)
    n_layers, n_heads = t.n_layers(kind), t.attn[kind].shape[2]
    grid = viz_attention.grid_figure(t, kind, ctx.b, selected=(layer, head), **opts)
    chart(grid, ctx)
    if grid.layout.meta["tiles"]["pooled"]:  # the thumbnails are block means, not the weights
        st.caption(_("Each thumbnail is pooled to what its size on screen can show: a cell is "
                     "the mean over a block of pieces (the hover names the block). Open a head "
                     "for its full matrix."))
    st.session_state["_w_open"] = layer * n_heads + head
    st.selectbox(_("Open a head from the grid"), list(range(n_layers * n_heads)), key="_w_open",
                 format_func=lambda i: _("layer {layer}, head {head}").format(
                     layer=i // n_heads, head=i % n_heads),
                 on_change=_open_head, args=(n_heads,))
