"""Heads › Statistics: maps of per-head measures for a sentence, the input or validation pairs."""

from __future__ import annotations

import streamlit as st

from model.analysis.heads import validation_stats
from model.backends import is_translator
from model.dispatch import estimate_validation
from ui.admission import admitted, or_warning
from ui.common import goto
from ui.context import Ctx, trace_key
from ui.corpus_cache import LOOKUP_SAMPLE, cached_alignment
from ui.i18n import _
from ui.pick import head_chart
from ui.runtime import cached_head_stats, result_get, result_put, val_split
from ui.state import seed
from ui.sweep import Sweep, stopped
from ui.text import KIND_LABELS, md
from ui.views.measure import measure_toggle
from viz import heads as viz_heads
from viz.click import cell_targets

VAL_SIZES = (100, 250, 500, 1000)  # validation sentences the statistics can be averaged over


def validation_button(ctx: Ctx) -> None:
    """The button that averages the statistics over validation sentences, with progress and
    Cancel."""
    if not is_translator(ctx.bundle):
        st.caption(_("Averages over validation sentences are computed for this project's own "
                     "checkpoints, on the corpus they were trained on; this model has no such "
                     "split."))
        return
    c1, c2 = st.columns([1, 2])
    n = c1.select_slider(_("Validation sentences"), VAL_SIZES, value=VAL_SIZES[1], key="hs_val_n")
    c2.caption(_("Teacher-forced on the reference translations, both directions (so twice "
                 "as many forward passes), and with gold alignments for cross attention."))
    stopped("val")  # the last run's average was cancelled: say so once
    if c2.button(_("Average over validation sentences"), key="hs_val_go"):
        pairs = val_split(ctx.bundle, ctx.key)[:n]

        def kept() -> tuple | None:  # this many pairs already averaged: shown, never queued
            found = result_get(("val", ctx.key))
            return found if found is not None and found[0] == len(pairs) else None

        def run() -> tuple:
            # a bar and Cancel; a stop raises out before the put, so nothing is kept
            with Sweep("val", _("Running {n} validation pairs in both directions…")
                       .format(n=n)) as sweep:
                found = (len(pairs), validation_stats(ctx.bundle, pairs, progress=sweep.report))
                result_put(("val", ctx.key), found)
            return found

        if kept() is None and or_warning(
                lambda: admitted(estimate_validation(ctx.bundle, pairs), kept, run)) is None:
            return
        st.session_state["_hs_show_val"] = True  # the scope radio above is already drawn
        st.rerun()


def render(ctx: Ctx) -> None:
    t, measure = measure_toggle(ctx)  # statistics of α, or of ‖αf(x)‖ row shares
    kinds = [k for k in t.kinds if k in t.attn]
    seed("hs_kind", st.session_state["kind"])
    if st.session_state["hs_kind"] not in kinds:
        st.session_state["hs_kind"] = kinds[0]
    validation = result_get(("val", ctx.key))
    scopes = {"sentence": _("sentence {b}").format(b=ctx.b + 1),
              "batch": _("every sentence of the input")}
    if validation is not None:
        scopes["validation"] = _("{n} validation pairs (both directions)").format(
            n=validation[0])
    c1, c2 = st.columns(2)
    kind = c1.radio(_("Attention"), kinds, key="hs_kind", format_func=KIND_LABELS.get)
    seed("hs_scope", "sentence")
    if st.session_state.pop("_hs_show_val", False) and "validation" in scopes:
        st.session_state["hs_scope"] = "validation"
    if st.session_state["hs_scope"] not in scopes:
        st.session_state["hs_scope"] = "sentence"
    scope = c2.radio(_("Average over"), list(scopes), key="hs_scope", format_func=scopes.get)
    validation_button(ctx)
    if scope == "validation":
        stats = dict(validation[1].get(kind, {}))
    else:
        stats = dict(cached_head_stats(t, (*trace_key(ctx), measure), kind,
                                       ctx.b if scope == "sentence" else None))
        if kind == "cross" and is_translator(ctx.bundle) and measure == "weights":
            line = ctx.lines[ctx.b]
            align = cached_alignment(ctx.bundle, ctx.key, line, ctx.lang)
            if align is not None:
                stats["alignment"] = align
                st.caption(_("Sentence {b} is a corpus sentence, so its gold word alignment "
                             "is known: see the alignment map (teacher-forced on the corpus "
                             "reference).").format(b=ctx.b + 1))
            else:
                st.caption(_("Alignment agreement: the selected sentence is not among the "
                             "corpus sentences searched (the seed sentences and {n:,} generated "
                             "pairs); the validation average includes it.").format(
                                 n=LOOKUP_SAMPLE))
    if not stats:
        st.info(_("No statistics for this attention kind."))
        return
    names = viz_heads.METRIC_NAMES  # N_-marked copies
    st.markdown("\n".join(f"- **{md(_(names.get(m, m)))}**: "
                          f"{md(viz_heads.metric_definition(m, kind))}" for m in stats))
    figs = viz_heads.stats_heatmaps(stats, kind)
    hint = _("click to open this head")
    for i in range(0, len(figs), 2):
        for col, fig in zip(st.columns(2), figs[i:i + 2]):
            with col:  # a click on a cell opens that head in the attention view
                key = f"hs_map_{fig.layout.meta['metric']}"
                head_chart(cell_targets(fig, hint), ctx, key=key, kind=kind, share=0.5)
    n_layers, n_heads = t.n_layers(kind), t.attn[kind].shape[2]
    st.markdown(_("**Open a head** (click a cell of the maps above, or pick it here) in the "
                  "attention view"))
    c1, c2, c3 = st.columns(3, vertical_alignment="bottom")
    layer = c1.selectbox(_("Layer"), list(range(n_layers)), key="hs_open_layer")
    head = c2.selectbox(_("Head"), list(range(n_heads)), key="hs_open_head")
    c3.button(_("Open in the attention view"), key="hs_open", on_click=goto,
              args=("attention", (kind, layer, head)))
