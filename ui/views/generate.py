"""Generation: a decoder-only model continues the typed text, greedy, step by step with top-k.

The decoder-only counterpart of the translation view: what the model believed at each step,
and the chosen piece's probability. Knocked-out heads (sidebar) stay out at every step.
"""

from __future__ import annotations

import streamlit as st

from model import Bundle
from model.backends import capabilities, is_translator
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.snapshots import cached_generate
from viz import translation as viz_translation

MAX_NEW = 24


def applies(bundle: Bundle) -> str | None:
    """Decoder-only models whose backend generates; the translators have the translation view."""
    if capabilities(bundle).generates:
        return None
    if is_translator(bundle):
        return _("Step-by-step generation is for decoder-only models, which continue text; "
                 "this model's counterpart is the translation view.")
    return _("Step-by-step generation is for decoder-only models, which continue text; this "
             "model writes no text of its own.")


def render(ctx: Ctx) -> None:
    try:
        result = cached_generate(ctx.bundle, ctx.key, ctx.lines, ctx.ablate, MAX_NEW)[ctx.b]
    except ValueError as exc:
        st.error(str(exc))
        return
    st.markdown(_("**Continuation** (greedy, up to {n} pieces)").format(n=MAX_NEW))
    # pieces the tokenizer cannot write out (rows past its end, specials) are still named
    said = result.text or " ".join(result.pieces) or _("(empty)")
    st.code(ctx.lines[ctx.b] + " ⟶ " + said, language=None,
            wrap_lines=True)  # a long continuation wraps, not runs past the window
    if not result.finished:
        st.caption(_("Stopped after {n} pieces, before the end-of-text piece.").format(
            n=len(result.ids)))
    steps = viz_translation.steps_from_translation(result)
    if not steps:
        st.info(_("No generation steps: the input already fills the model's positions."))
        return
    step = (st.slider(_("Step"), 0, len(steps) - 1, 0, key="gen_step")
            if len(steps) > 1 else 0)
    chart(viz_translation.step_bar_figure(steps[step], step), ctx)
    chart(viz_translation.topk_figure(steps), ctx)
