"""Information flow (view=flow): routes into one output token through depths and heads, edges
weighted by norm-based shares (after Ferrando & Voita 2024), with a threshold slider."""

from __future__ import annotations

import streamlit as st

from model.analysis.flow import POOL, flow_routes
from model.backends import capabilities, facts
from model.dispatch import estimate_flow
from ui.admission import admitted, or_warning
from ui.common import chart
from ui.context import Ctx
from ui.i18n import N_, Labels, _
from ui.state import seed, sticky
from ui.text import md
from viz.flow import flow_figure

SIDES = Labels(dec=N_("decoder output"), enc=N_("encoder output"),
               pool=N_("pooled sentence vector"))
MAX_EDGES = 4000  # beyond this the figure is unreadable and slow to send


def applies(bundle) -> str | None:
    """Needs weighted norms: the lab's models, or a Hugging Face family with a known W_O."""
    if capabilities(bundle).weighted_norms:
        return None
    return _("The information-flow graph needs the attention output projection, which the lab "
             "does not know for this model.")


def render(ctx: Ctx) -> None:
    t = ctx.trace
    sides = [s for s, k in (("dec", "dec_self"), ("enc", "enc_self"))
             if k in t.norms and s in t.hidden]
    if not sides:
        st.info(_("This trace has no weighted norms or hidden states to build the graph "
                  "from."))
        return
    if facts(ctx.bundle).pooling == "mean":  # its output is the mean of the top stack's pieces
        sides = [POOL, *sides]
    c1, c2, c3 = st.columns([1, 2, 2])
    seed("flow_side", sides[0])
    if st.session_state["flow_side"] not in sides:
        st.session_state["flow_side"] = sides[0]
    side = sticky(c1.radio, "flow_side", _("Token of the"), options=sides, format_func=SIDES.get)
    pooled = side == POOL
    stack = sides[1] if pooled else side  # the pooled stack: the one listed after the pool
    pieces = t.tgt_tokens[ctx.b] if stack == "dec" else t.src_tokens[ctx.b]
    if not pieces:
        st.info(_("This sentence has no tokens on that side."))
        return
    seed("flow_pos", len(pieces) - 1)
    if not 0 <= st.session_state["flow_pos"] < len(pieces):
        st.session_state["flow_pos"] = len(pieces) - 1
    if pooled:
        pos = len(pieces) - 1
        c2.caption(_("The model's sentence vector is the mean of the last layer's {n} "
                     "piece vectors: the graph's last node.").format(n=len(pieces)))
    else:
        pos = sticky(c2.selectbox, "flow_pos", _("Position"),
                     options=list(range(len(pieces))),
                     format_func=lambda i: f"{i + 1}: {pieces[i]!r}")
    seed("flow_threshold", 0.05)
    threshold = sticky(c3.slider, "flow_threshold", _("Keep edges carrying at least"),
                       min_value=0.01, max_value=0.5, step=0.01,
                       help=_("share of what flows into a node (residual and every head)"))
    try:  # memory grows with the sentence: through the admission gate
        graph = or_warning(lambda: admitted(
            estimate_flow(t, ctx.b, MAX_EDGES), lambda: None,
            lambda: flow_routes(t, ctx.b, int(pos), float(threshold), stack,
                                max_edges=MAX_EDGES, pooled=pooled)))
    except ValueError as exc:
        st.info(_("No flow graph for this input: {reason}").format(reason=md(exc)))
        return
    if graph is None:
        return
    if "cross" in ctx.bundle.kinds:
        st.caption(_("{edges} edges, {nodes} nodes. An edge's weight is its share of ‖residual‖ "
                     "+ Σ‖α·f(x)‖ flowing into a node; decoder nodes also take cross-attention "
                     "edges from the encoder's last depth. Lower the threshold to see more "
                     "routes.").format(edges=len(graph.edges), nodes=len(graph.nodes)))
    else:  # one stack: no cross-attention edges to speak of
        st.caption(_("{edges} edges, {nodes} nodes. An edge's weight is its share of ‖residual‖ "
                     "+ Σ‖α·f(x)‖ flowing into a node. Lower the threshold to see more routes.")
                   .format(edges=len(graph.edges), nodes=len(graph.nodes)))
    if graph.truncated:
        st.info(_("More than {n:,} edges at this threshold: raise it to draw the graph.")
                .format(n=MAX_EDGES))
        return
    chart(flow_figure(graph), ctx, key="flow_graph")
