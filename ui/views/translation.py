"""Translation: greedy decoding (or teacher forcing) step by step, with cross attention."""

from __future__ import annotations

import streamlit as st

from model.backends import is_translator
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.notices import confidence_notice, marked_line_html, unknown_notice
from ui.runtime import cached_translate, cached_vocab
from viz import translation as viz_translation


def render(ctx: Ctx) -> None:
    t = ctx.trace
    if "cross" not in t.attn or not is_translator(ctx.bundle):
        st.info(_("Step-by-step translation needs one of this project's encoder–decoder "
                  "models."))
        return
    flags = unknown_notice(ctx, ctx.b)  # words never seen in training, named and marked
    if flags and any(flags):
        st.html(marked_line_html(ctx.lines[ctx.b], flags))
    if ctx.targets is None:
        result = cached_translate(ctx.bundle, ctx.key, ctx.lines, ctx.lang, ctx.ablate)[ctx.b]
        confidence_notice(ctx.bundle, result, say_when_sure=True)
        steps = viz_translation.steps_from_translation(result)
        st.markdown(_("**Translation** (greedy decoding)"))
        st.code(result.text or _("(empty)"), language=None)
        if not result.finished:
            st.warning(_("Decoding stopped at the length limit before </s>.")
                       .replace("<", "\\<"))
    else:
        steps = viz_translation.steps_from_logits(t, ctx.b, cached_vocab(ctx.bundle, ctx.key))
        st.markdown(_("**Teacher forcing**: each step reads the typed target so far; the "
                      "chosen piece is the typed one, the candidates are the model's."))
        st.code(t.targets[ctx.b] or _("(empty)"), language=None)
    if not steps:
        st.info(_("No decoding steps."))
        return
    n_layers, n_heads = t.n_layers("cross"), t.attn["cross"].shape[2]
    c1, c2, c3 = st.columns(3)
    layer = c1.selectbox(_("Cross-attention layer"), list(range(n_layers)), index=n_layers - 1,
                         key="tr_layer")
    head = c2.selectbox(_("Head"), [None, *range(n_heads)], key="tr_head",
                        format_func=lambda h: _("mean of heads") if h is None
                        else _("head {head}").format(head=h))
    step = (c3.slider(_("Step"), 0, len(steps) - 1, 0, key="tr_step") if len(steps) > 1 else 0)
    left, right = st.columns(2)
    with left:
        chart(viz_translation.step_bar_figure(steps[step], step), ctx, share=0.5)
    with right:
        chart(viz_translation.cross_row_figure(t, ctx.b, layer, head, step), ctx, share=0.5)
    chart(viz_translation.topk_figure(steps), ctx)
    chart(viz_translation.cross_steps_figure(t, ctx.b, layer, head, steps), ctx)
