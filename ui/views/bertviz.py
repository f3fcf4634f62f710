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

BERTVIZ_KINDS = {"enc_self": "Encoder", "dec_self": "Decoder", "cross": "Cross"}  # its names

MAX_HEADS = 144  # GPT-2-small's 12 × 12: more thumbnails than this start with a few layers


def default_layers(n_layers: int, n_heads: int, chosen: int) -> list[int]:
    """Every layer when the model view stays readable, else a few: first, chosen and last."""
    if n_layers * n_heads <= MAX_HEADS:
        return list(range(n_layers))
    keep = max(1, MAX_HEADS // max(1, n_heads))
    picked = [min(max(chosen, 0), n_layers - 1), 0, n_layers - 1]
    picked += [round(i * (n_layers - 1) / max(1, keep - 1)) for i in range(keep)]
    out: list[int] = []
    for layer in picked:
        if layer not in out and len(out) < keep:
            out.append(layer)
    return sorted(out)


def render(ctx: Ctx) -> None:
    t, measure = measure_toggle(ctx)  # weights α, or ‖αf(x)‖ as row shares
    st.subheader(_("bertviz, sentence {b}").format(b=ctx.b + 1))
    n_layers = min(t.n_layers(k) for k in t.attn)
    c1, c2 = st.columns([1, 2])
    view = c1.radio(_("bertviz view"), ["head", "model"], horizontal=True, key="bv_view",
                    format_func=Labels(head=N_("head view"), model=N_("model view")).get)
    n_heads = max(t.attn[k].shape[2] for k in t.attn)
    default = default_layers(n_layers, n_heads, int(st.session_state.get("layer", 0)))
    seed("bv_layers", default)
    if any(not 0 <= i < n_layers for i in st.session_state["bv_layers"]):
        st.session_state["bv_layers"] = default
    layers = sorted(c2.multiselect(_("Layers"), list(range(n_layers)), key="bv_layers"))
    if len(default) < n_layers:  # 1,024+ thumbnails are no overview: say what is left out
        st.caption(_("This model has {n} layers × {h} heads, more than bertviz's model view "
                     "can show as an overview: it shows layers {shown} of {n} (the chosen "
                     "layer among them); add others above, or see every head in the attention "
                     "view's grid.").format(n=n_layers, h=n_heads,
                                            shown=", ".join(map(str, layers)) or "–"))
    # bertviz names its attention kinds Encoder / Decoder / Cross: only this model's
    parts = " / ".join(BERTVIZ_KINDS[k] for k in t.attn if k in BERTVIZ_KINDS)
    choose = (_("Choose {parts} inside the page.").format(parts=parts) if len(t.attn) > 1
              else _("The page shows the {part} attention.").format(part=parts))
    st.caption(choose + " " + _(
        "Head view: hover a token to see where it attends, double-click a colour to show one "
        "head. Model view: every layer × head; click a thumbnail to enlarge it. Padding is "
        "left out and values are rounded to 3 decimals; everything is drawn locally, nothing "
        "is downloaded."))
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
