"""Inside one head: Q, K, V, scores, mask, softmax and context with the real numbers."""

from __future__ import annotations

import streamlit as st

from ui.common import chart, head_picker
from ui.context import Ctx
from ui.runtime import cached_weights
from ui.text import md
from viz import masks as viz_masks
from viz import steps as viz_steps


def render(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader("Inside one head, with the real numbers")
    if ctx.bundle.kind != "native":
        st.info("This view needs one of this project's own checkpoints: it reads Q, K, V and "
                "the scores from hooks inside each attention layer and the layer's weights, "
                "which a Hugging Face model does not expose. The attention, bertviz, "
                "embeddings and heads views work on this model.")
        return
    kind, layer, head = head_picker(ctx)
    weights = cached_weights(ctx.bundle, ctx.key, kind, layer)
    walk = viz_steps.walkthrough(t, weights, kind, layer, ctx.b, head)
    st.caption("Padding is kept here, as in seed 000, so the -1e9 cells of the mask show.")
    for step in viz_steps.steps(walk, t, hide_pad=False, numbers=ctx.numbers,
                                colorscale=ctx.colorscale):
        left, right = st.columns([1, 3])
        with left:
            st.markdown(f"**{md(step.name)}**")
            st.caption(md(step.formula))
            st.code(step.shape, language=None, wrap_lines=True)
        with right:
            chart(step.figure, ctx)
    st.subheader("One query against every key")
    q_tokens = viz_masks.axis_tokens(t, kind, ctx.b)[0]
    n_q = t.length("src" if kind == "enc_self" else "tgt", ctx.b)
    if st.session_state.get("steps_query", 0) >= n_q:
        st.session_state["steps_query"] = 0
    query = st.selectbox("Query token", list(range(n_q)), key="steps_query",
                         format_func=lambda i: f"{i}: {q_tokens[i]}")
    for fig in viz_steps.query_key_figures(walk, t, query, hide_pad=ctx.hide_pad):
        chart(fig, ctx)
