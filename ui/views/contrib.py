"""Head contributions (view=contrib): each head's effect on the token the decoder predicts at
one step: direct logit attribution on pre-LN models, knock-out on every model, top tokens."""

from __future__ import annotations

import streamlit as st

from model.analysis.contributions import Contributions
from model.backends import capabilities, is_translator
from model.dispatch import estimate_scan
from ui import cost
from ui.admission import refusal
from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import _
from ui.pick import head_chart, kind_maps
from ui.runtime import cached_contributions
from ui.state import seed, sticky
from ui.sweep import chunk_within, stopped
from ui.text import KIND_LABELS, md
from viz import contributions as viz_contrib

SWEEP_CHUNK = 64  # knock-out copies per forward (head_contributions' chunk)


def applies(bundle) -> str | None:
    """The lab's own encoder–decoders, and decoder-only Hugging Face models whose logit is a
    sum of per-head parts (pre-LN, attention through the recorder)."""
    caps = capabilities(bundle)
    if is_translator(bundle) or (caps.teacher_forced and caps.logit_attribution):
        return None
    return _("Head contributions to a predicted token are computed for this project's "
             "encoder–decoder checkpoints and for pre-LN decoder-only Hugging Face models "
             "(GPT-2, Llama, Mistral, Qwen …): direct logit attribution and a teacher-forced "
             "knock-out of every head.")


def _contributions(ctx: Ctx, source: str, target: str | None, step: int,
                   knockout: bool = True, secs: float = 0.0) -> Contributions:
    """Cached in ui/runtime.py for every session; a new one passes the admission gate. The
    sweep runs about half a second of copies per forward, so Cancel lands within a second."""
    chunk = chunk_within(secs, _sweep_rows(ctx.bundle), SWEEP_CHUNK)
    return cached_contributions(ctx.bundle, ctx.key, source, target, ctx.lang, step,
                                knockout=knockout, chunk=chunk)


def _sweep_rows(bundle) -> int:
    """Rows of the knock-out sweep: every head of every kind, plus the untouched one."""
    return sum(bundle.n_layers(k) for k in bundle.kinds) * bundle.config.n_heads + 1


def _sweep_seconds(ctx: Ctx, source: str) -> float:
    """The knock-out sweep's time from the admission estimate's shapes (ui/cost.py): heads + 1
    teacher-forced copies of the sentence, 64 per forward."""
    dims = estimate_scan(ctx.bundle, source, ctx.lang if is_translator(ctx.bundle) else None,
                         chunk=SWEEP_CHUNK).dims
    return 0.0 if dims is None else cost.sweep_seconds(dims, _sweep_rows(ctx.bundle))


def render(ctx: Ctx) -> None:
    t = ctx.trace
    n_t = t.length("tgt", ctx.b)
    if n_t == 0:
        st.info(_("This sentence has no decoder tokens."))
        return
    pieces = t.tgt_tokens[ctx.b]
    seed("contrib_step", n_t - 1)
    if not 0 <= st.session_state["contrib_step"] < n_t:
        st.session_state["contrib_step"] = n_t - 1
    step = sticky(st.selectbox, "contrib_step", _("Decoder step (its output is explained)"),
                  options=list(range(n_t)),
                  format_func=lambda i: _("{i}: after {piece}").format(i=i + 1,
                                                                       piece=repr(pieces[i])))
    source = ctx.lines[ctx.b]
    target = ctx.targets[ctx.b] if ctx.targets else None
    wanted = ("contrib_sweep", ctx.key, source, int(step))
    if stopped("contrib"):  # cancelled (or any rerun) mid-sweep: it waits for its button again
        st.session_state.pop("contrib_sweep", None)
    secs = _sweep_seconds(ctx, source)
    asks = cost.asks_first(secs)
    if asks and st.session_state.get("contrib_sweep") != wanted:
        dla = capabilities(ctx.bundle).logit_attribution
        st.caption((_("{rows:,} heads × {n} tokens: knocking out every head takes about "
                      "{s:.0f} s here, so only the direct logit attribution (one pass) is shown "
                      "until you start it.") if dla else
                    _("{rows:,} heads × {n} tokens: knocking out every head takes about "
                      "{s:.0f} s here, and this model has no direct logit attribution to show "
                      "meanwhile: start it with the button.")).format(
            rows=_sweep_rows(ctx.bundle) - 1, n=n_t, s=secs))
        if st.button(_("Knock out every head (about {s:.0f} s)").format(s=secs),
                     key="contrib_sweep_go"):
            st.session_state["contrib_sweep"] = wanted
        elif not dla:
            return
    full = not asks or st.session_state.get("contrib_sweep") == wanted
    try:
        c = _contributions(ctx, source, target, int(step), knockout=full, secs=secs)
    except Exception as exc:
        if refusal(exc):  # busy, or too large for the server: a warning, the rest stays
            st.warning(refusal(exc))
            return
        if not isinstance(exc, ValueError):
            raise
        st.info(_("Head contributions cannot be computed here: {reason}").format(
            reason=md(exc)))
        return
    pre = c.dla is not None
    measures = (["dla", "knockout"] if c.knockout else ["dla"]) if pre else ["knockout"]
    seed("contrib_measure", measures[0])
    if st.session_state["contrib_measure"] not in measures:
        st.session_state["contrib_measure"] = measures[0]
    measure = sticky(st.radio, "contrib_measure", _("Measure"), options=measures,
                     horizontal=True, format_func=lambda m: _(viz_contrib.MEASURES[m][0]))
    st.markdown(_("The decoder predicts **{token}** at step {step} (logit {logit:.2f}).")
                .format(token=md(repr(c.token)), step=c.step + 1, logit=c.logit))
    if not pre:
        st.caption(_("Post-LN model: every sublayer's LayerNorm rescales what came before, so "
                     "no exact per-head logit sum exists; the knock-out effect is exact."))
    kinds = list(c.dla if measure == "dla" else c.knockout)  # the maps, in the figure's order
    # a click on a cell picks that head for the panel below (the shared kind/layer/head)
    head_chart(kind_maps(viz_contrib.heads_figure(c, measure), kinds), ctx,
               key="contrib_heads", kind=kinds[0], view="contrib")
    if pre:
        chart(viz_contrib.terms_figure(c), ctx, key="contrib_terms")
    st.markdown(_("**What one head promotes and suppresses**"))
    kind, layer, head = head_picker(ctx)
    if (kind, layer, head) in (c.dla_top if measure == "dla" else c.knockout_top):
        chart(viz_contrib.top_tokens_figure(c, (kind, layer, head), measure), ctx,
              key="contrib_top")
    else:
        st.info(_("No direct attribution for {kind} heads: encoder heads reach the output "
                  "only through cross-attention; choose the knock-out measure.").format(
                      kind=KIND_LABELS.get(kind, kind)))
