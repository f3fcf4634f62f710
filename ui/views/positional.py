"""Positional encoding: the table, its dimensions, similarity and the two embedding terms."""

from __future__ import annotations

import streamlit as st

from model.analysis.distance import score_by_distance
from model.backends import backend_for, capabilities
from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from viz import positional as viz_positional


def _relative_positions(ctx: Ctx) -> bool:
    """Rotary or T5 positions, or none found (True when drawn here; a table: False)."""
    t, backend = ctx.trace, backend_for(ctx.bundle)
    kind = backend.position_kind(t.pos_table)
    if kind == "rotary":
        theta = backend.rotary_frequencies()
        chart(viz_positional.rotary_frequencies(theta), ctx)
        recorded, label = None, ""
        if t.scores:
            att, layer, head = head_picker(ctx)
            n = t.length("src" if att == "enc_self" else "tgt", ctx.b)
            recorded = score_by_distance(t.scores[att][layer, ctx.b, head, :n, :n],
                                         t.masks[att][ctx.b, :n, :n])
            label = f"layer {layer} head {head}"
        max_d = max(8, min(256, t.tgt_ids.shape[1] + t.src_ids.shape[1]))
        chart(viz_positional.rotary_distance(theta, max_d, recorded, label), ctx)
        return True
    if kind == "t5":
        n = st.slider(_("Positions shown"), 4, 128, 32, key="pos_t5_n")
        biases = backend.relative_bias(n)
        side = st.radio(_("Stack"), list(biases), horizontal=True, key="pos_t5_side")
        head = st.selectbox(_("Head"), list(range(biases[side].shape[0])), key="pos_t5_head")
        chart(viz_positional.t5_bias_heatmap(biases[side], head, side), ctx)
        return True
    if kind == "none":
        st.info(_("No position table, rotary embedding or relative bias was found in this model."))
        return True
    return False


def render(ctx: Ctx) -> None:
    t = ctx.trace
    if _relative_positions(ctx):
        return
    caps = capabilities(ctx.bundle)
    max_len, depth = t.pos_table.shape
    kind = caps.positional
    c1, c2, c3 = st.columns(3)
    n_pos = c1.slider(_("Positions shown"), 2, max_len, min(max_len, 64), key="pos_n")
    dims = c2.multiselect(_("Dimensions as curves"), list(range(depth)),
                          default=[d for d in (0, 1, 2, 3) if d < depth], key="pos_dims")
    metric = c3.radio(_("Similarity"), ["dot", "cosine"], horizontal=True, key="pos_metric")
    note = None if caps.pad_row else ""  # "row 0 = pad position" only where it is so
    chart(viz_positional.table_heatmap(t.pos_table, n_pos,
                                       title=_("Positional table of {name} ({kind})").format(
                                           name=ctx.bundle.name, kind=kind),
                                       note=note), ctx)
    if dims:
        chart(viz_positional.dimension_curves(t.pos_table, dims, n_pos, note=note), ctx)
    chart(viz_positional.position_similarity(t.pos_table, n_pos, metric=metric, note=note), ctx)
    if not caps.raw_hooks:
        st.info(_("Token term vs positional term needs this project's own models (hooks on "
                  "the two embedding terms)."))
        return
    sides = ["enc"] + (["dec"] if t.tgt_tokens else [])
    side = st.radio(_("Input side"), sides, horizontal=True, key="pos_side",
                    format_func=Labels(enc=N_("encoder"), dec=N_("decoder")).get)
    chart(viz_positional.term_sizes(t, ctx.b, side), ctx)
