"""bertviz: its head and model views of the sentence, drawn locally in an iframe."""

from __future__ import annotations

import urllib.parse

import streamlit as st

from ui.common import goto
from ui.context import Ctx, trace_key
from ui.i18n import N_, Labels, _
from ui.runtime import cached_bertviz
from ui.state import seed
from ui.text import md
from ui.views.measure import measure_toggle
from viz.bertviz_embed import BertvizTooLarge, bertviz_height


def render(ctx: Ctx) -> None:
    t, measure = measure_toggle(ctx)  # weights α, or ‖αf(x)‖ as row shares
    st.subheader(_("bertviz, sentence {b}").format(b=ctx.b + 1))
    n_layers = min(t.n_layers(k) for k in t.attn)
    c1, c2 = st.columns([1, 2])
    view = c1.radio(_("bertviz view"), ["head", "model"], horizontal=True, key="bv_view",
                    format_func=Labels(head=N_("head view"), model=N_("model view")).get)
    seed("bv_layers", list(range(n_layers)))
    if any(not 0 <= i < n_layers for i in st.session_state["bv_layers"]):
        st.session_state["bv_layers"] = list(range(n_layers))
    layers = sorted(c2.multiselect(_("Layers"), list(range(n_layers)), key="bv_layers"))
    st.caption(_("Choose Encoder / Decoder / Cross inside the page. Head view: hover a token "
                 "to see where it attends, double-click a colour to show one head. Model view: "
                 "every layer × head; click a thumbnail to enlarge it. Padding is left out and "
                 "values are rounded to 3 decimals; everything is drawn locally, nothing is "
                 "downloaded."))
    if not layers:
        st.info(_("Choose at least one layer."))
        return
    try:
        html = cached_bertviz(t, (*trace_key(ctx), measure), ctx.b, view, tuple(layers))
    except BertvizTooLarge as exc:
        st.info(md(exc))
        st.button(_("Open the attention view"), key="bv_to_attention", on_click=goto,
                  args=("attention",))
        return
    except ValueError as exc:  # e.g. a sentence with an empty side
        st.info(_("bertviz cannot show this sentence: {reason}").format(reason=md(exc)))
        return
    st.iframe(html, height=bertviz_height(t, ctx.b, view, layers))
    # st.iframe asks urllib.parse whether the page is a URL, and urlsplit keeps its last 128
    # arguments and results (an lru_cache): every page drawn (up to 8 MB, held twice) stayed in
    # the server, ~1 MB more per input in the soak until 128 pages were held
    urllib.parse.urlsplit.cache_clear()
