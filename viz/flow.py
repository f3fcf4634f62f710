"""The information-flow graph: routes into one output token through depths and heads.

Pure: a model.analysis.flow.FlowGraph in, a plotly Figure out. Columns are depths (embeddings,
then each layer's output); the encoder stack sits on the left, the decoder stack on the right,
and cross-attention edges run from the encoder's last column into the decoder. Line width and
opacity follow an edge's share of what flows into its node.
"""

from __future__ import annotations

import plotly.graph_objects as go

from model.analysis.flow import POOL, Edge, FlowGraph, Node

from .common import base_layout, plotly_text
from .i18n import N_, _

COLOURS = {"residual": "#9e9e9e", "enc_self": "#1b9e77", "dec_self": "#d95f02",
           "cross": "#7570b3", POOL: "#e7298a"}
NAMES = {"residual": N_("residual"), "enc_self": N_("encoder self-attention"),  # _() where shown
         "dec_self": N_("decoder self-attention"), "cross": N_("cross-attention"),
         POOL: N_("mean pooling")}
BINS = (0.1, 0.25, 0.5, 1.01)  # edge weights drawn in four line widths
SIDE_NAMES = {"enc": N_("encoder"), "dec": N_("decoder")}
LABEL_PX = 22  # vertical room one token label needs (18-px text on a projector, and a gap)


def labelled_positions(graph: FlowGraph, side: str, plot_px: float) -> list[int]:
    """Positions of one stack whose token is written: all of them when the rows have room,
    else the ones a route touches first (the target's among them), then every k-th, none
    closer than a label's height to another (at 200 tokens every label was drawn: a smear)."""
    n = len(graph.tokens.get(side, []))
    step = max(1, -(-n * LABEL_PX // max(int(plot_px), 1)))  # rows per label
    if step == 1:
        return list(range(n))
    routes = sorted({pos for s, _d, pos in graph.nodes if s == side and pos < n},
                    key=lambda p: (graph.target[0] != side or p != graph.target[2], p))
    kept: list[int] = []
    for p in [*routes, *range(0, n, step)]:
        if all(abs(p - q) >= step for q in kept):
            kept.append(p)
    return sorted(kept)


def _columns(graph: FlowGraph) -> dict[str, float]:
    """x of each stack's depth 0: the encoder at 0, the decoder two columns after it."""
    if "enc" in graph.depths and "dec" in graph.depths:
        return {"enc": 0.0, "dec": graph.depths["enc"] + 2.0}
    return {side: 0.0 for side in graph.depths}


def _top(cols: dict[str, float]) -> str:
    """The stack whose last depth is the output (the rightmost: the decoder where there is one)."""
    return max(cols, key=lambda s: cols[s])


def _xy(node: Node, cols: dict[str, float], graph: FlowGraph) -> tuple[float, float]:
    side, depth, pos = node
    if side == POOL:  # one column after the top stack's last depth, halfway down its pieces
        stack = _top(cols)
        return cols[stack] + depth, (len(graph.tokens.get(stack, [])) - 1) / 2
    return cols[side] + depth, float(pos)


def _label(graph: FlowGraph, node: Node) -> str:
    side, depth, pos = node
    if side == POOL:
        n = len(graph.tokens.get(_top(_columns(graph)), []))
        return _("pooled output (mean of {n} pieces)").format(n=n)
    pieces = graph.tokens.get(side, [])
    piece = plotly_text(pieces[pos]) if pos < len(pieces) else "?"
    where = _("{side} depth {depth}").format(side=_(SIDE_NAMES[side]), depth=depth)
    return f"{where} · {pos + 1}:{piece}"


def _edge_text(graph: FlowGraph, e: Edge) -> str:
    """Hover text of one edge: kind (and head), weight, and the nodes it joins."""
    what = _(NAMES[e.kind]) + ("" if e.head < 0 else " " + _("head {head}").format(head=e.head))
    return (f"{what}: {e.weight:.3f}<br>" + _("from {node}").format(node=_label(graph, e.src))
            + "<br>" + _("into {node}").format(node=_label(graph, e.dst)))


def flow_figure(graph: FlowGraph, title: str | None = None) -> go.Figure:
    """Nodes of both stacks (faint), route nodes (dark), and edges by kind and weight."""
    cols = _columns(graph)
    n_rows = max((len(t) for t in graph.tokens.values()), default=1)
    height = int(min(1400, max(380, 140 + 26 * n_rows)))
    traces: list[go.Scatter] = []
    for side, depth in graph.depths.items():
        n = len(graph.tokens[side])
        xs = [cols[side] + d for d in range(depth + 1) for _p in range(n)]
        ys = [float(p) for _d in range(depth + 1) for p in range(n)]
        traces.append(go.Scatter(
            x=xs, y=ys, mode="markers", marker={"size": 5, "color": "#e0e0e0"},
            hoverinfo="skip", showlegend=False))
        shown_at = labelled_positions(graph, side, height - 140)
        traces.append(go.Scatter(  # the tokens, left of each stack's embedding column
            x=[cols[side] - 0.15] * len(shown_at), y=[float(p) for p in shown_at],
            mode="text", text=[f"{p + 1}:{plotly_text(graph.tokens[side][p])}"
                               for p in shown_at],
            textposition="middle left", hoverinfo="skip", showlegend=False))
    shown: set[str] = set()
    for kind, colour in COLOURS.items():
        lo = 0.0
        for width, hi in enumerate(BINS, start=1):
            xs, ys = [], []
            for e in graph.edges:
                if e.kind == kind and lo <= e.weight < hi:
                    (x0, y0), (x1, y1) = _xy(e.src, cols, graph), _xy(e.dst, cols, graph)
                    xs += [x0, x1, None]
                    ys += [y0, y1, None]
            if xs:
                shown_now = kind in shown
                shown.add(kind)
                traces.append(go.Scatter(
                    x=xs, y=ys, mode="lines", hoverinfo="skip", legendgroup=kind,
                    name=_(NAMES[kind]), showlegend=not shown_now,
                    line={"color": colour, "width": 1.2 * width ** 1.5},
                    opacity=0.35 + 0.15 * width))
            lo = hi
    mids = [((_xy(e.src, cols, graph)[0] + _xy(e.dst, cols, graph)[0]) / 2,
             (_xy(e.src, cols, graph)[1] + _xy(e.dst, cols, graph)[1]) / 2,
             _edge_text(graph, e)) for e in graph.edges]
    if mids:
        traces.append(go.Scatter(
            x=[m[0] for m in mids], y=[m[1] for m in mids], mode="markers",
            marker={"size": 7, "color": "rgba(0,0,0,0)"}, text=[m[2] for m in mids],
            hovertemplate="%{text}<extra></extra>", showlegend=False))
    nodes = sorted(graph.nodes)
    traces.append(go.Scatter(
        x=[_xy(n, cols, graph)[0] for n in nodes], y=[_xy(n, cols, graph)[1] for n in nodes],
        mode="markers", text=[_label(graph, n) for n in nodes],
        marker={"size": [13 if n == graph.target else 8 for n in nodes],
                "color": ["#c62828" if n == graph.target else "#263238" for n in nodes]},
        hovertemplate="%{text}<extra></extra>", showlegend=False))
    # two short lines per column: on one line, neighbours overlapped and plotly dropped every
    # other one (the last layer went unlabelled)
    ticks = [(cols[s] + d, _(SIDE_NAMES[s]) + "<br>" + (_("emb") if d == 0 else f"L{d - 1}"))
             for s in graph.depths for d in range(graph.depths[s] + 1)]
    if graph.target[0] == POOL:
        ticks.append((_xy(graph.target, cols, graph)[0], _("pooled")))
    head = title or _("Information flow into {node} (edges ≥ {threshold:.2f} of a node's "
                      "input)").format(node=_label(graph, graph.target),
                                       threshold=graph.threshold)
    layout = base_layout(head, height=height)
    left = min(cols.values()) - 2.2
    layout.update(
        xaxis={"tickvals": [t[0] for t in ticks], "ticktext": [t[1] for t in ticks],
               "range": [left, max(t[0] for t in ticks) + 0.5], "zeroline": False,
               "showgrid": False},
        yaxis={"autorange": "reversed", "showticklabels": False, "zeroline": False,
               "showgrid": False, "title": {"text": _("position")}},
        legend={"orientation": "h", "y": -0.08}, plot_bgcolor="white")
    return go.Figure(data=traces, layout=layout)
