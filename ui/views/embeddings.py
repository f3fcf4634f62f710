"""Embeddings by layer: PCA paths, cosines, norms, layer change and the logit lens."""

from __future__ import annotations

import streamlit as st

from model.backends import capabilities
from ui.admission import or_warning
from ui.common import chart
from ui.context import Ctx, trace_key
from ui.i18n import N_, Labels, _
from ui.runtime import cached_logit_lens
from viz import embeddings as viz_embeddings


def render(ctx: Ctx) -> None:
    t = ctx.trace
    sides = [s for s in ("enc", "dec") if s in t.hidden]
    c1, c2 = st.columns(2)
    side = c1.radio(_("Stack"), sides, horizontal=True, key="emb_side",
                    format_func=Labels(enc=N_("encoder"), dec=N_("decoder")).get)
    n_layers = t.hidden[side].shape[0] - 1
    layer = c2.slider(_("Layer (0 = embeddings + positions)"), 0, n_layers, n_layers,
                      key=f"emb_layer_{side}")
    chart(viz_embeddings.pca_trajectories(t, side, ctx.b, layer), ctx)
    chart(viz_embeddings.cosine_by_layer(t, side, ctx.b, layer), ctx)
    chart(viz_embeddings.norms_by_layer(t, side, ctx.b), ctx)
    chart(viz_embeddings.layer_change(t, side, ctx.b), ctx)
    if side == "dec":
        if not capabilities(ctx.bundle).logit_lens:  # the backend reads every layer out
            st.info(_("The logit lens is not available for this model."))
        else:
            # refused by the admission gate: a warning here, the other charts stay
            lens = or_warning(lambda: cached_logit_lens(ctx.bundle, t, trace_key(ctx), ctx.b, k=5))
            if lens is None:
                return
            chart(viz_embeddings.logit_lens_figure(lens), ctx)
