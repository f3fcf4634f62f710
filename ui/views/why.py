"""Why this head attends (view=why, issue 37): for one head, query and key, the score split over
(query component, key component) pairs, its largest terms in words, the head's Q/K/V
composition with every earlier head beside a random baseline, and what the head writes at the
query (its keys' components, its direct effect on the logits)."""

from __future__ import annotations

import json

import numpy as np
import streamlit as st

from model.analysis import composition
from model.backends import capabilities
from model.capture import key_side, query_side
from ui import cost
from ui.common import chart, head_picker
from ui.context import Ctx, trace_key
from ui.i18n import _
from ui.presenter import MIN_PX, PLOT_WIDTH, ZOOM, presenting
from ui.runtime import (
    cached_composition,
    cached_ov_components,
    cached_qk_components,
    kept_composition,
)
from ui.state import link_int, seed, url_value
from ui.text import md
from viz import why as viz_why
from viz.common import SCREEN_W

LINKED = "_why_linked"  # set once the link's query=/key= were read: later visits keep widgets


def applies(bundle) -> str | None:
    """Models whose stream the backend can split by component (caps.components)."""
    if capabilities(bundle).components:
        return None
    return _("Splitting a score by upstream component needs a model whose stream the lab "
             "can rebuild part by part (this project's checkpoints; GPT-2-, Llama-, BERT- and "
             "T5-like Hugging Face models).")


# Time estimates for the two buttons, measured in CPU seconds at one thread on this 2-core
# server (the wall time of a free core; a loaded machine is slower), issue 37's calibration:
COMP_RATE = 1.0e10  # numpy float64 multiply-adds per second in composition_scores' products:
#                     219 G in 22.3 s on a GPT-2-small shape (144 heads, 768 wide)
COMP_FIXED = 0.15  # weights, QR and the baseline's draws: 0.09-0.22 s on lm, paper, 12x12 heads
OV_FIXED = 0.025  # ov_components' per-call cost apart from its keys (12x12 heads, 96 wide)
OV_PER_KEY = 7e-4  # streams rebuilt at one key
OV_PER_CELL = 8e-5  # one (key, component) value projected: 2.5 s at 200 keys x 146 components


def composition_seconds(bundle) -> float:
    """About how long composition_scores takes on one free core (0.1-0.3 s on the shipped
    models, about 22 s on a GPT-2-small shape)."""
    return COMP_FIXED + composition.multiply_adds(bundle) / COMP_RATE


def ov_seconds(bundle, kind: str, n_keys: int, layer: int) -> float:
    """About how long ov_components takes on one free core: each key's stream split into its
    components (embedding, position, bias, and each earlier head and MLP)."""
    before = bundle.n_layers("enc_self") if kind == "cross" else layer
    parts = 3 + before * (bundle.config.n_heads + 1)
    return OV_FIXED + n_keys * (OV_PER_KEY + OV_PER_CELL * parts)


def _pick(label: str, key: str, options: list[int], default: int, tokens: list[str]) -> int:
    """A position selectbox kept in the session, clamped to this sentence's options."""
    seed(key, default)
    if st.session_state[key] not in options:
        st.session_state[key] = default
    return st.selectbox(label, options, key=key,
                        format_func=lambda i: f"{i}: {tokens[i]!r}")


def _linked(name: str, options: list[int], default: int) -> None:
    """Seed position `why_<name>` from the link's `<name>=` (0-based) the first time this view
    is drawn; a value that is not one of the options is a visible note and the default."""
    raw = url_value(name)
    state_key = f"why_{name}"
    if raw is None or state_key in st.session_state:
        return
    number = link_int(raw)
    if number in options:
        st.session_state[state_key] = number
        return
    st.session_state[state_key] = default
    shown = md(repr(raw[:20]))
    if name == "query":
        st.warning(_("Query position {value} from the link is not between 0 and {last}; "
                     "showing {default}.").format(value=shown, last=options[-1],
                                                  default=default))
    else:  # keys a head does not attend to (blocked, or beyond the sentence) have no score
        st.warning(_("Key position {value} from the link is not one this head attends to "
                     "from that query ({first}–{last}); showing {default}, its strongest "
                     "key.").format(value=shown, first=options[0], last=options[-1],
                                    default=default))


def _composition(ctx: Ctx):
    """composition_scores of this model, kept for every session once computed
    (ui/runtime.why_cache); None while a slow one waits for its button."""
    held = kept_composition(ctx.key)
    if held is not None:
        return held
    secs = composition_seconds(ctx.bundle)
    if cost.asks_first(secs) and not st.button(
            _("Compute composition scores (about {s:.0f} s)").format(s=secs), key="why_comp_go"):
        st.caption(_("Composition between every pair of heads takes about {s:.0f} s on this "
                     "model: start it with the button.").format(s=secs))
        return None
    return cached_composition(ctx.bundle, ctx.key)


def _drawn() -> tuple[float, float]:
    """The width a full-width chart is drawn at in this mode and its map titles' size (the
    1.5x of presenter mode, ui.presenter.for_screen)."""
    if presenting():
        return PLOT_WIDTH, max(MIN_PX, round(viz_why.SUBPLOT_TITLE_PX * ZOOM))
    return SCREEN_W, viz_why.SUBPLOT_TITLE_PX


def _export(c, o, kind: str, layer: int, head: int, query: int, key: int) -> str:
    """The numbers on screen as JSON."""
    out = {"kind": kind, "layer": layer, "head": head, "query": query, "key": key,
           "score": c.score, "bias": c.bias, "query_parts": c.query_parts,
           "key_parts": c.key_parts, "terms": np.round(c.terms, 6).tolist()}
    if o is not None:
        out["output"] = {"parts": o.parts, "keys": o.keys,
                         "share": np.round(o.share, 6).tolist(),
                         "promoted": o.promoted, "suppressed": o.suppressed,
                         "no_logits": o.no_logits}
    return json.dumps(out, ensure_ascii=False, indent=1)


def render(ctx: Ctx) -> None:
    t, b = ctx.trace, ctx.b
    kind, layer, head = head_picker(ctx)
    q_tokens, k_tokens = t.tokens(query_side(kind))[b], t.tokens(key_side(kind))[b]
    if not q_tokens or not k_tokens:
        st.info(_("This sentence has no tokens on this attention's sides."))
        return
    attn = t.attn[kind][layer, b, head, :len(q_tokens), :len(k_tokens)]
    first_visit = LINKED not in st.session_state
    st.session_state[LINKED] = True
    c1, c2 = st.columns(2)
    queries = list(range(len(q_tokens)))
    if first_visit:
        _linked("query", queries, len(q_tokens) - 1)
    with c1:
        query = _pick(_("Query position"), "why_query", queries, len(q_tokens) - 1, q_tokens)
    keys = [int(k) for k in np.nonzero(attn[query] > 0)[0]] or [0]
    strongest = int(np.argmax(attn[query]))
    if first_visit:
        _linked("key", keys, strongest)
    with c2:
        key = _pick(_("Key position"), "why_key", keys, strongest, k_tokens)
    st.caption(_("Attention from {q} to {k}: {a:.3f}").format(
        q=md(repr(q_tokens[query])), k=md(repr(k_tokens[key])), a=float(attn[query, key])))
    try:
        c = cached_qk_components(ctx.bundle, t, trace_key(ctx), kind, layer, head, query, key,
                                 b)
    except ValueError as exc:
        st.info(_("This score cannot be split by component here: {reason}").format(
            reason=md(exc)))
        return
    st.markdown(_("**Why this head attends here**: the score over (query component, key "
                  "component) pairs, every norm frozen at its actual scale."))
    chart(viz_why.components_figure(c, q_tokens[query], k_tokens[key]), ctx, key="why_terms")
    for line in viz_why.top_sentences(c, repr(q_tokens[query]), repr(k_tokens[key])):
        st.markdown("- " + md(line))
    st.markdown(_("**Composition with earlier heads** (Elhage et al. 2021; weights only)"))
    scores = _composition(ctx)
    if scores is not None:
        chart(viz_why.composition_figure(scores, kind, layer, head, *_drawn()), ctx,
              key="why_comp")
    st.markdown(_("**What the head writes** at {q}").format(q=md(repr(q_tokens[query]))))
    o = None
    secs = ov_seconds(ctx.bundle, kind, len(keys), layer)
    wanted = ("why_ov", ctx.key, kind, layer, head, query, b)
    if not cost.asks_first(secs) or st.session_state.get("why_ov") == wanted or st.button(
            _("Split what the head writes (about {s:.0f} s)").format(s=secs), key="why_ov_go"):
        st.session_state["why_ov"] = wanted
        try:
            o = cached_ov_components(ctx.bundle, t, trace_key(ctx), kind, layer, head, query, b)
        except ValueError as exc:
            st.info(_("What this head writes cannot be split here: {reason}").format(
                reason=md(exc)))
    if o is not None:
        chart(viz_why.output_figure(o), ctx, key="why_output")
        if o.logits is not None:
            chart(viz_why.tokens_figure(o), ctx, key="why_tokens")
        else:
            st.caption(_("No direct effect on the logits: {reason}").format(
                reason=md(o.no_logits)))
    st.download_button(_("Download these numbers (.json)"),
                       data=_export(c, o, kind, layer, head, query, key),
                       file_name=f"why-{kind}-{layer}-{head}-{query}-{key}.json",
                       mime="application/json", key="why_download", on_click="ignore")
