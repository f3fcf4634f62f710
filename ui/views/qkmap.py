"""Global query–key map (view=qkmap): one head's queries and keys from 300 validation
sentences in one 2-D embedding (after AttentionViz), cached per head for every session. A
model without the translators' validation split reads 300 corpus sentences alone."""

from __future__ import annotations

import streamlit as st

from model.backends import facts, is_translator
from ui.admission import or_warning
from ui.common import chart, head_picker
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.runtime import cached_qkmap
from ui.state import seed, sticky
from ui.text import md
from viz.qkmap import COLOUR_BY, qkmap_figure

N_SENTENCES = 300
COLOURS = Labels(position=N_("position"), token=N_("token"), language=N_("language"),
                 role=N_("role (query or key)"))
METHODS = Labels(pca=N_("PCA (fast)"), tsne=N_("t-SNE (slower, once per head)"))




def render(ctx: Ctx) -> None:
    kind, layer, head = head_picker(ctx)
    c1, c2 = st.columns(2)
    seed("qk_colour", "position")
    colour = sticky(c1.radio, "qk_colour", _("Colour by"), options=list(COLOUR_BY),
                    format_func=COLOURS.get, horizontal=True)
    seed("qk_method", "pca")
    method = sticky(c2.radio, "qk_method", _("Embedding"), options=list(METHODS),
                    format_func=METHODS.get, horizontal=True)
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
