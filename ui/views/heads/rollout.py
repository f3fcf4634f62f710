"""Heads › Attention rollout: attention multiplied through the layers (Abnar & Zuidema, 2020)."""

from __future__ import annotations

import streamlit as st

from model.analysis.rollout import cross_rollout, pooled_rollout, rollout
from model.backends import facts
from ui.common import chart, side_tokens
from ui.context import Ctx
from ui.i18n import _
from ui.text import KIND_LABELS
from viz import heads as viz_heads


def render(ctx: Ctx) -> None:
    t, b = ctx.trace, ctx.b
    residual = st.checkbox(_("Count the residual connection (A′ = 0.5·A + 0.5·I)"), value=True,
                           key="ro_residual")
    st.caption(_("Attention rollout (Abnar & Zuidema, 2020): each layer's attention, averaged "
                 "over heads, multiplied through the layers; a row says which input tokens the "
                 "output token's information comes from."))
    kind = "enc_self" if "enc_self" in t.attn else "dec_self"
    tokens = side_tokens(t, kind, b)[0]
    if not tokens:
        st.info(_("This sentence has no tokens on that side."))
        return
    r = rollout(t, b, kind, residual)
    pooling = facts(ctx.bundle).pooling
    if pooling == "mean":  # its sentence vector: every real piece's last vector, averaged
        st.caption(_("This model's sentence vector is the mean of every real piece's "
                     "last-layer vector ({n} pieces here), so rollout's target is that mean: "
                     "the first chart averages the map's rows, each piece weighted 1/{n}.")
                   .format(n=len(tokens)))
        chart(viz_heads.pooled_bars(pooled_rollout(r, pooling), tokens,
                                    _("Rollout for the pooled sentence vector, sentence {b}: "
                                      "where its information comes from").format(b=b + 1)),
              ctx, key="ro_pooled")
    elif pooling == "cls":
        st.caption(_("This model's sentence vector is the first piece's last-layer vector: "
                     "row 1 says where it comes from."))
    chart(viz_heads.rollout_figure(r, tokens, tokens,
                                   _("Rollout of the {kind}, sentence {b}").format(
                                       kind=KIND_LABELS[kind], b=b + 1)), ctx)
    if st.session_state.get("ro_query", 0) >= len(tokens):
        st.session_state["ro_query"] = 0
    query = st.selectbox(_("Query token"), list(range(len(tokens))), key="ro_query",
                         format_func=lambda i: f"{i + 1}: {tokens[i]}")
    chart(viz_heads.rollout_bars(r, tokens, query), ctx)
    if "cross" in t.attn and t.tgt_tokens[b] and t.src_tokens[b]:
        x = cross_rollout(t, b, residual)
        chart(viz_heads.rollout_figure(x, t.tgt_tokens[b], t.src_tokens[b],
                                       _("Decoder → source rollout through cross attention, "
                                         "sentence {b}").format(b=b + 1)), ctx)
