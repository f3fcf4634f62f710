"""Masks: the pad and causal masks of a sentence, and what a mask does to one head."""

from __future__ import annotations

import streamlit as st

from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import _
from viz import masks as viz_masks


def render(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(_("Masks for sentence {b}").format(b=ctx.b + 1))
    st.caption(_("True = blocked. Shown with padding, since padding is what the pad masks block."))
    figs = list(viz_masks.mask_figures(t, ctx.b).values())
    for i in range(0, len(figs), 2):
        cols = st.columns(2)
        for col, fig in zip(cols, figs[i: i + 2]):
            with col:
                chart(fig, ctx)
    st.subheader(_("What a mask does to one head"))
    if not t.scores:
        st.info(_("The scores before masking are recorded only for this project's own models "
                  "(hooks inside attention); this model's masks are shown above."))
        return
    kind, layer, head = head_picker(ctx)
    cols = st.columns(3)
    figs = viz_masks.mask_effect_figures(t, kind, layer, ctx.b, head,
                                         colorscale=ctx.colorscale, numbers=ctx.numbers)
    for col, fig in zip(cols, figs):
        with col:
            chart(fig, ctx)
