"""Global query–key map (view=qkmap): one head's queries and keys from 300 validation
sentences in one 2-D embedding (after AttentionViz), cached per head for every session. A
model without the translators' validation split reads 300 corpus sentences alone."""

from __future__ import annotations

import streamlit as st

from model.backends import facts, is_translator
from model.dispatch import estimate_qkmap
from ui import cost
from ui.admission import or_warning
from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.runtime import cached_qkmap, qkmap_cache
from ui.state import seed, sticky
from ui.text import md
from viz.qkmap import COLOUR_BY, qkmap_figure

N_SENTENCES = 300
COLOURS = Labels(position=N_("position"), token=N_("token"), language=N_("language"),
                 role=N_("role (query or key)"))
METHODS = Labels(pca=N_("PCA (fast)"), tsne=N_("t-SNE (slower, once per head)"))




def build_seconds(ctx: Ctx) -> float:
    """0 once the map's queries and keys are captured, else ui/cost.py's estimate of the
    capture: every chunk as long as its longest (the gate's worst chunk). On the 768-wide
    GPT-2-small shape the first open took 25-49 s on two busy cores without asking."""
    cache = qkmap_cache(ctx.bundle, ctx.key, N_SENTENCES)
    if cache.built:
        return 0.0
    dims = estimate_qkmap(ctx.bundle, cache.sentences, cache.batch).dims
    chunks = -(-len(cache.sentences) // max(1, cache.batch))
    return 0.0 if dims is None else cost.seconds(dims, chunks)


def render(ctx: Ctx) -> None:
    kind, layer, head = head_picker(ctx)
    c1, c2 = st.columns(2)
    seed("qk_colour", "position")
    colour = sticky(c1.radio, "qk_colour", _("Colour by"), options=list(COLOUR_BY),
                    format_func=COLOURS.get, horizontal=True)
    seed("qk_method", "pca")
    method = sticky(c2.radio, "qk_method", _("Embedding"), options=list(METHODS),
                    format_func=METHODS.get, horizontal=True)
    secs = build_seconds(ctx)
    if cost.asks_first(secs) and not st.button(
            _("Build the query–key map (about {s:.0f} s)").format(s=secs), key="qk_go"):
        st.caption(_("The map reads the queries and keys of {n} sentences through the whole "
                     "model once (then every head is quick): about {s:.0f} s here, so it waits "
                     "for the button.").format(n=N_SENTENCES, s=secs))
        return
    try:
        with st.spinner(_("Embedding this head's queries and keys from {n} validation "
                          "sentences (once per head)…").format(n=N_SENTENCES)):
            # the first build captures every sentence's q/k: through the admission gate
            cache = or_warning(lambda: cached_qkmap(ctx.bundle, ctx.key, N_SENTENCES))
            if cache is None:
                return
            points = cache.get(kind, layer, head, method)
    except ValueError as exc:
        st.info(_("No query–key map for this head: {reason}").format(reason=md(exc)))
        return
    st.caption(_("Queries are circles, keys open diamonds. Keys are shifted and scaled "
                 "(softmax unchanged) so a query sits near the keys it attends to. Hover a point "
                 "for its token and sentence. The typed input is not part of this map."))
    if not is_translator(ctx.bundle) and "ko" not in facts(ctx.bundle).languages:
        st.caption(_("This model has no validation split of its own: the points are {n} "
                     "English sentences written for this lab (its vocabulary has no Korean), "
                     "each read alone.").format(n=len(cache.sentences)))
    elif not is_translator(ctx.bundle):
        st.caption(_("This model has no validation split of its own: the points are {n} "
                     "sentences of this project's English and Korean corpus, each read alone "
                     "(a model trained on other text may split them into many pieces).")
                   .format(n=N_SENTENCES))
    chart(qkmap_figure(points, kind, layer, head, colour), ctx, key="qk_map")
