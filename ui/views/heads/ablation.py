"""Heads › Knock out heads: tick heads to zero, see the translation and loss before and after."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import format_ablate, parse_ablate
from model.analysis.similarity import partner
from model.backends import capabilities, facts, is_translator
from ui.admission import or_warning
from ui.common import NOT_NATIVE, can_ablate, chart, head_label
from ui.context import Ctx
from ui.i18n import _
from ui.model_words import embedding_words
from ui.runtime import cached_ablation, cached_translate
from ui.text import KIND_LABELS, md
from viz import heads as viz_heads
from viz import similarity as viz_similarity


def _set_ablate(spec: str) -> None:
    st.session_state["ablate"] = spec


def _toggle_head(key: str, head: tuple[str, int, int], spec: str) -> None:
    heads = set(parse_ablate(spec))
    if st.session_state[key]:
        heads.add(head)
    else:
        heads.discard(head)
    _set_ablate(format_ablate(heads))


def render(ctx: Ctx) -> None:
    bundle = ctx.bundle
    if not can_ablate(bundle):
        st.info(_(NOT_NATIVE).format(what=_("Knocking out heads")))
        return
    current = parse_ablate(ctx.ablate)
    st.caption(_("Tick a head to zero its output (its context vector, before W_O) and rerun. "
                 "The choice belongs to this browser session; it is also in the link (ablate=…) "
                 "and in the sidebar's “Knock out heads” box. Every view shows the model with "
                 "these heads knocked out."))
    n_heads = bundle.config.n_heads
    for kind in bundle.kinds:
        st.markdown(f"**{KIND_LABELS[kind]}**")
        for layer in range(bundle.n_layers(kind)):
            cols = st.columns(n_heads + 1)
            cols[0].markdown(_("layer {layer}").format(layer=layer))
            for h in range(n_heads):
                key = f"abl:{kind}:{layer}:{h}"
                st.session_state[key] = (kind, layer, h) in current
                cols[h + 1].checkbox(head_label(ctx.trace, h), key=key, on_change=_toggle_head,
                                     args=(key, (kind, layer, h), ctx.ablate))
    st.button(_("Clear all"), key="abl_clear", on_click=_set_ablate, args=("",),
              disabled=not current)
    b = ctx.b
    if not is_translator(bundle):
        _hf_effect(ctx, current)
        return
    if not current:
        result = cached_translate(bundle, ctx.key, ctx.lines, ctx.lang, "")[b]
        st.markdown(_("**Translation of sentence {b}** (no head knocked out)").format(b=b + 1))
        st.code(result.text or _("(empty)"), language=None)
        return
    effect = _effect(ctx)
    if effect is None:
        return
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Before**: sentence {b} with every head").format(b=b + 1))
        st.code(effect["before"][b].text or _("(empty)"), language=None)
    with right:
        st.markdown(_("**After**: without {heads}").format(heads=md(effect["ablate_spec"])))
        st.code(effect["after"][b].text or _("(empty)"), language=None)
    changed = sum(effect["changed"])
    c1, c2 = st.columns(2)
    c1.metric(_("Loss (mean NLL per target token, whole input)"), f"{effect['loss_after']:.3f}",
              delta=f"{effect['loss_change']:+.3f} nats", delta_color="inverse")
    c2.metric(_("Translations changed"), _("{n} of {m}").format(n=changed,
                                                                 m=len(effect["changed"])))
    chart(viz_heads.ablation_figure(effect, b), ctx)


def _effect(ctx: Ctx) -> dict | None:
    """The cached ablation; None, with the message shown, when the admission gate turns it
    away (the ticked heads and the text stay as they are)."""
    return or_warning(lambda: cached_ablation(ctx.bundle, ctx.key, ctx.lines, ctx.lang,
                                              ctx.ablate))


# what "before/after" and "loss" mean for a Hugging Face model (model/backends/hf/forced.py)
_HF_WORDS = {
    "decoder": ("Continuation (greedy, 8 tokens)", "Loss (mean NLL of each next typed token)"),
    "seq2seq": ("Greedy output", "Loss (mean NLL per output token, whole input)"),
    "encoder": ("", "Mean relative change of the last hidden states"),
}


def _hf_effect(ctx: Ctx, current: frozenset) -> None:
    """The effect of the ticked heads on a Hugging Face model."""
    if not current:
        st.info(_("Tick heads above to see what the model loses without them."))
        return
    b = ctx.b
    effect = _effect(ctx)
    if effect is None:
        return
    if effect["measure"] == "cosine":
        _cosine_effect(ctx, effect)
        return
    wrote, loss = _HF_WORDS[capabilities(ctx.bundle).family]
    if wrote:
        left, right = st.columns(2)
        left.markdown(f"**Before** · {wrote}, sentence {b + 1}")
        left.code(effect["before"][b].text or "(empty)", language=None)
        right.markdown(f"**After**: without {md(effect['ablate_spec'])}")
        right.code(effect["after"][b].text or "(empty)", language=None)
    st.metric(_(loss), f"{effect['loss_after']:.3f}", delta=f"{effect['loss_change']:+.3f}",
              delta_color="inverse")
    chart(viz_heads.ablation_figure(effect, b, unit=facts(ctx.bundle).effect_unit), ctx)


def _cosine_effect(ctx: Ctx, effect: dict) -> None:
    """A sentence-embedding model: its output is one vector per line, so a knock-out is
    measured on the cosine of line A (the selected sentence) to line B, or, with one line,
    on line A's own vector (model.analysis.similarity.pooled_knockout)."""
    p = effect["pooled"]
    a = ctx.b
    b = partner(len(ctx.lines), a)
    what = embedding_words(facts(ctx.bundle))
    spec = md(effect["ablate_spec"])
    if b is not None:
        st.caption(_("This model's output is {what}. Measured here: the change in the cosine "
                     "of line {a} to line {b} (the sentence picker chooses line {a}).").format(
            what=what, a=a + 1, b=b + 1))
        st.metric(_("Cosine of line {a} to line {b} without {heads}").format(
            a=a + 1, b=b + 1, heads=spec), f"{p.after[a, b]:.4f}",
            delta=f"{p.after[a, b] - p.before[a, b]:+.4f}", delta_color="off")
        change = p.after[:, b] - p.before[:, b]
        change[b] = np.nan
        title = _("Knocking out {heads}: change in each line's cosine to line {b}").format(
            heads=effect["ablate_spec"], b=b + 1)
    else:
        st.caption(_("This model's output is {what}. With one line typed, measured here: the "
                     "change in the pooled embedding, as the cosine of the line's vector "
                     "without the heads to its vector with every head (1 = unmoved). Type a "
                     "second line to measure the change in the cosine to it.").format(what=what))
        st.metric(_("Cosine to its own embedding with every head, without {heads}").format(
            heads=spec), f"{p.moved[a]:.4f}", delta=f"{p.moved[a] - 1:+.4f}",
            delta_color="off")
        change = p.moved - 1.0
        title = _("Knocking out {heads}: change in each line's pooled embedding").format(
            heads=effect["ablate_spec"])
    chart(viz_similarity.knockout_figure(ctx.lines, change, title, _("Δ cosine")), ctx)
