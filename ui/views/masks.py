"""Masks: the pad and causal masks of a sentence, and what a mask does to one head."""

from __future__ import annotations

import streamlit as st

from model.backends import facts
from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import _
from ui.model_words import fill_label
from ui.presenter import presenting
from viz import masks as viz_masks


def _row(figs: list, ctx: Ctx, across: int) -> None:
    """Figures `across` to a row; one to a row in presenter mode, where a third of 1280 px cut
    the titles off and left the cells too small for a number."""
    across = 1 if presenting() else across
    for i in range(0, len(figs), across):
        if across == 1:
            chart(figs[i], ctx)
            continue
        for col, fig in zip(st.columns(across), figs[i: i + across]):
            with col:
                chart(fig, ctx, share=1 / across)


def render(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(_("Masks for sentence {b}").format(b=ctx.b + 1))
    st.caption(_("True = blocked. Shown with padding, since padding is what the pad masks block."))
    _row(list(viz_masks.mask_figures(t, ctx.b).values()), ctx, 2)
    st.subheader(_("What a mask does to one head"))
    if not t.scores:
        st.info(_("The scores before masking are recorded only for this project's own models "
                  "(hooks inside attention); this model's masks are shown above."))
        return
    kind, layer, head = head_picker(ctx)
    f = facts(ctx.bundle)  # what this model adds to blocked cells: -1e9, or a dtype minimum
    _row(list(viz_masks.mask_effect_figures(t, kind, layer, ctx.b, head,
                                            colorscale=ctx.colorscale, numbers=ctx.numbers,
                                            fill_value=f.mask_fill_value,
                                            fill=fill_label(f))),
         ctx, 3)
