"""The "weights α / weighted norms ‖αf(x)‖" toggle shared by the attention, heads and bertviz
views (not a view itself).

With norms chosen, the views draw a Trace whose `attn` holds each query row's norms as shares
(‖α_ij f(x_j)‖ / Σ_j ‖α_ij f(x_j)‖), so every heatmap keeps its 0–1 scale and compares with α
directly. `measure=norms` in the link opens a view with the toggle on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import streamlit as st

from model import Trace
from ui.context import Ctx, trace_key
from ui.i18n import N_, Labels, _
from ui.runtime import norm_shares
from ui.state import seed, sticky
from ui.text import KIND_LABELS

MEASURES = Labels(weights=N_("weights α"), norms=N_("weighted norms ‖αf(x)‖"))
HELP = N_("Weights α say where a head looks; ‖α·f(x)‖ (Kobayashi et al. 2020) also counts how "
          "large the vector it moves from there is, f(x_j) = v_j·W_O^h. Shown as each query "
          "row's shares, so both read on the same 0–1 scale.")


def row_shares(norms: np.ndarray) -> np.ndarray:
    """(…, Q, K) norms -> each row divided by its sum (rows summing to 0 stay 0), float32."""
    total = norms.sum(-1, keepdims=True)
    return np.divide(norms, total, out=np.zeros_like(norms), where=total > 0).astype(np.float32)


def shares_trace(trace: Trace, key: tuple) -> Trace:
    """`trace` with attn replaced by norm shares for every kind that has norms (cached in
    ui/runtime.py's norm_shares, for every session)."""
    store = norm_shares()
    hit = store.get(key)
    if hit is not None:
        return hit
    attn = {k: row_shares(trace.norms[k]) if k in trace.norms else a
            for k, a in trace.attn.items()}
    return store.put(key, replace(trace, attn=attn))


def wants_norms(state: Mapping, link: Mapping) -> bool:
    """Whether the toggle is on (or, before it is drawn, the link's measure=norms): only then
    do the views that draw it need the norms recorded."""
    return state.get("attn_measure", link.get("measure", "weights")) == "norms"


def measure_toggle(ctx: Ctx, key: str = "attn_measure") -> tuple[Trace, str]:
    """The radio, and the Trace to draw: ctx.trace for weights, the shares trace for norms."""
    link = st.query_params.get("measure", "weights")
    seed(key, link if link in MEASURES else "weights")
    choice = sticky(st.radio, key, _("Show"), options=list(MEASURES), format_func=MEASURES.get,
                    horizontal=True, help=_(HELP))
    if choice != "norms":
        return ctx.trace, "weights"
    t = ctx.trace
    missing = [k for k in t.attn if k not in t.norms]
    if not t.norms:
        st.info(_("This model's trace has no weighted norms (its attention output projection "
                  "is not one the lab knows); showing the weights α."))
        return t, "weights"
    if missing:
        st.caption(_("No norms for {kinds}: those stay weights α.").format(
            kinds=", ".join(KIND_LABELS.get(k, k) for k in missing)))
    st.caption(_("Showing ‖α·f(x)‖ as shares of each query row."))
    return shares_trace(t, (*trace_key(ctx), "norm-shares")), "norms"
