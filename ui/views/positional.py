"""Positional encoding: the table, its dimensions, similarity and the two embedding terms."""

from __future__ import annotations

import streamlit as st

from ui.common import chart
from ui.context import Ctx
from viz import positional as viz_positional


def render(ctx: Ctx) -> None:
    t = ctx.trace
    max_len, depth = t.pos_table.shape
    kind = getattr(ctx.bundle.config, "pos_encoding", "")
    c1, c2, c3 = st.columns(3)
    n_pos = c1.slider("Positions shown", 2, max_len, min(max_len, 64), key="pos_n")
    dims = c2.multiselect("Dimensions as curves", list(range(depth)),
                          default=[d for d in (0, 1, 2, 3) if d < depth], key="pos_dims")
    metric = c3.radio("Similarity", ["dot", "cosine"], horizontal=True, key="pos_metric")
    chart(viz_positional.table_heatmap(t.pos_table, n_pos,
                                       title=f"Positional table of {ctx.bundle.name} ({kind})"),
          ctx)
    if dims:
        chart(viz_positional.dimension_curves(t.pos_table, dims, n_pos), ctx)
    chart(viz_positional.position_similarity(t.pos_table, n_pos, metric=metric), ctx)
    if ctx.bundle.kind != "native":
        st.info("Token term vs positional term needs this project's own models (hooks on the "
                "two embedding terms).")
        return
    sides = ["enc"] + (["dec"] if t.tgt_tokens else [])
    side = st.radio("Input side", sides, horizontal=True, key="pos_side",
                    format_func={"enc": "encoder", "dec": "decoder"}.get)
    chart(viz_positional.term_sizes(t, ctx.b, side), ctx)
