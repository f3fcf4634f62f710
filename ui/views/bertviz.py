"""bertviz: its head and model views of the sentence, drawn locally in an iframe."""

from __future__ import annotations

import streamlit as st

from ui.common import goto
from ui.context import Ctx, trace_key
from ui.runtime import cached_bertviz
from ui.state import seed
from ui.text import md
from viz.bertviz_embed import BertvizTooLarge, bertviz_height


def render(ctx: Ctx) -> None:
    t = ctx.trace
    st.subheader(f"bertviz, sentence {ctx.b + 1}")
    n_layers = min(t.n_layers(k) for k in t.attn)
    c1, c2 = st.columns([1, 2])
    view = c1.radio("bertviz view", ["head", "model"], horizontal=True, key="bv_view",
                    format_func={"head": "head view", "model": "model view"}.get)
    seed("bv_layers", list(range(n_layers)))
    if any(not 0 <= i < n_layers for i in st.session_state["bv_layers"]):
        st.session_state["bv_layers"] = list(range(n_layers))
    layers = sorted(c2.multiselect("Layers", list(range(n_layers)), key="bv_layers"))
    st.caption("Choose Encoder / Decoder / Cross inside the page. Head view: hover a token to "
               "see where it attends, double-click a colour to show one head. Model view: every "
               "layer × head; click a thumbnail to enlarge it. Padding is left out and values "
               "are rounded to 3 decimals; everything is drawn locally, nothing is downloaded.")
    if not layers:
        st.info("Choose at least one layer.")
        return
    try:
        html = cached_bertviz(t, trace_key(ctx), ctx.b, view, tuple(layers))
    except BertvizTooLarge as exc:
        st.info(md(exc))
        st.button("Open the attention view", key="bv_to_attention", on_click=goto,
                  args=("attention",))
        return
    except ValueError as exc:  # e.g. a sentence with an empty side
        st.info(f"bertviz cannot show this sentence: {md(exc)}")
        return
    st.iframe(html, height=bertviz_height(t, ctx.b, view, layers))
