"""Inside one head: Q, K, V, scores, mask, softmax and context with the real numbers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from model.analysis import qk_terms
from model.backends import Facts, capabilities, facts
from model.capture import query_side
from ui.common import chart, head_picker, side_tokens
from ui.context import Ctx
from ui.i18n import _
from ui.model_words import fill_label
from ui.runtime import cached_weights
from ui.text import md
from viz import masks as viz_masks
from viz import qkterms as viz_qkterms
from viz import steps as viz_steps
from viz import tour as viz_tour


def render(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(_("Inside one head, with the real numbers"))
    if not capabilities(ctx.bundle).raw_hooks:  # recorder's q/k/v/scores only, no W_O output
        _hf_steps(ctx)
        return
    kind, layer, head = head_picker(ctx)
    weights = cached_weights(ctx.bundle, ctx.key, kind, layer)
    walk = viz_steps.walkthrough(t, weights, kind, layer, ctx.b, head)
    fill = fill_label(facts(ctx.bundle))
    if walk.blocked.any():
        st.caption(_("Padding is kept here, as in seed 000, so the {fill} cells of the mask "
                     "show.").format(fill=fill))
    else:  # one line of an encoder: no padding, no causal mask, so no fill value to show
        st.caption(_("Padding is kept here, as in seed 000."))
    for step in viz_steps.steps(walk, t, hide_pad=False, numbers=ctx.numbers,
                                colorscale=ctx.colorscale, fill=fill):
        _show_step(step, ctx)
    st.subheader(_("One query against every key"))
    q_tokens = viz_masks.axis_tokens(t, kind, ctx.b)[0]
    n_q = t.length(query_side(kind), ctx.b)
    if st.session_state.get("steps_query", 0) >= n_q:
        st.session_state["steps_query"] = 0
    query = st.selectbox(_("Query token"), list(range(n_q)), key="steps_query",
                         format_func=lambda i: f"{i}: {q_tokens[i]}")
    for fig in viz_steps.query_key_figures(walk, t, query, hide_pad=ctx.hide_pad):
        chart(fig, ctx)
    qk_terms_section(ctx, kind, layer, head, query)


def qk_terms_section(ctx: Ctx, kind: str, layer: int, head: int, query: int | None = None
                     ) -> None:
    """One query–key score split into the terms it is made of (model.analysis.qk_terms)."""
    q_tokens, k_tokens = side_tokens(ctx.trace, kind, ctx.b)
    if not q_tokens or not k_tokens or kind not in ctx.trace.scores:
        return
    st.subheader(_("Why this score: its query–key terms"))
    if query is None:
        if st.session_state.get("qk_query", 0) >= len(q_tokens):
            st.session_state["qk_query"] = 0
        query = st.selectbox(_("Query token"), list(range(len(q_tokens))), key="qk_query",
                             format_func=lambda i: f"{i}: {q_tokens[i]}")
    if st.session_state.get("qk_key", 0) >= len(k_tokens):
        st.session_state["qk_key"] = 0
    key = st.selectbox(_("Key token"), list(range(len(k_tokens))), key="qk_key",
                       format_func=lambda i: f"{i}: {k_tokens[i]}")
    try:
        terms = qk_terms(ctx.bundle, ctx.trace, kind, layer, head, query, key, batch=ctx.b)
    except ValueError as exc:
        st.info(_("No query–key decomposition here: {reason}").format(reason=md(exc)))
        return
    score = float(ctx.trace.scores[kind][layer, ctx.b, head, query, key])
    chart(viz_qkterms.terms_bar(terms, score, q_tokens[query], k_tokens[key]), ctx)


def _show_step(step: viz_steps.Step, ctx: Ctx) -> None:
    """One step: its name, formula and shape on the left, its figure on the right."""
    left, right = st.columns([1, 3])
    with left:
        st.markdown(f"**{md(step.name)}**")
        st.caption(md(step.formula))
        st.code(step.shape, language=None, wrap_lines=True)
    with right:
        chart(step.figure, ctx, share=0.75)


_HF_SKIP = {"X", "concat", "·W_O"}  # a Hugging Face trace has no block input or W_O output


def recorder_caption(f: Facts) -> str:
    """What the recorded scores hold, from this model's facts: its scaling, and only where the
    model has them, the relative position bias (T5) and the score softcap (Gemma 2)."""
    parts = [_("Recorded live inside the model's attention (transformers' "
               "AttentionInterface). The scaled scores are the model's own, with its scaling.")]
    if f.positional == "relative_bias":
        parts.append(_("They include the relative position bias this model adds to every "
                       "score."))
    if f.score_softcap:
        parts.append(_("This model caps them softly at ±{c:g} (c · tanh(score / c)) before "
                       "the mask.").format(c=f.score_softcap))
    parts.append(_("Padding is kept."))
    return " ".join(parts)


def _hf_steps(ctx: Ctx) -> None:
    """The steps of one head of a Hugging Face model from the recorder's own numbers: Q, K, V,
    the scores as the family computes them (scaling, T5's bias, softcap), mask, softmax, ·V."""
    t = ctx.trace
    if not t.q:
        st.info(_("This model's attention does not run through the lab's recorder, so its Q, "
                  "K and V were not recorded; the attention, bertviz and embeddings views work."))
        return
    kind, layer, head = head_picker(ctx)
    walk = viz_tour.trace_walk(t, kind, layer, ctx.b, head)
    scores = t.scores[kind][layer, ctx.b, head].astype(float)  # as the model computed them
    probs = t.attn[kind][layer, ctx.b, head].astype(float)
    f = facts(ctx.bundle)  # blocked cells hold what this model adds: its dtype's minimum
    walk = replace(walk, scaled=scores, masked=np.where(walk.blocked, f.mask_fill_value, scores),
                   probs=probs, context=probs @ walk.v)
    st.caption(recorder_caption(f))
    for step in viz_steps.steps(walk, t, hide_pad=False, numbers=ctx.numbers,
                                colorscale=ctx.colorscale, fill=fill_label(f)):
        if step.name in _HF_SKIP:
            continue
        _show_step(step, ctx)
    qk_terms_section(ctx, kind, layer, head)
