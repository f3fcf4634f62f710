"""Information-flow routes to one output token (after Ferrando & Voita, EMNLP 2024).

A node is one token's residual stream at one depth: ("enc" | "dec", depth, position), depth 0
the embeddings and depth l the output of layer l - 1 (Trace.hidden's index). Into node
(side, l, i) flow the residual x_i at depth l - 1 and, through every head h of layer l - 1,
α_ij · f_h(x_j) from each key j: self-attention from the same side at depth l - 1 and, in a
decoder, cross-attention from the encoder's last depth. Each part's share of the node's
incoming total, with the sizes ‖x_i‖ and ‖α_ij f_h(x_j)‖ (Trace.norms), is an edge's weight;
heads into the same key add up, and the edge remembers its largest head.

A model whose sentence vector is the mean of its last vectors (sentence-transformers' mean
pooling) gets one more node, ("pool", top depth + 1, 0), the pooled output: into it flows each
real piece's top-depth vector, weighted 1/n in the mean, with the share ‖x_i‖ / Σ_j ‖x_j‖ (the
same norm-based proxy), edges of kind "pool".

Routes: from the chosen token at the top depth (or the pooled output), keep every edge whose
weight is at least `threshold` and walk on from the nodes it starts at, down to the embeddings.
The sizes are a norm-based proxy (Kobayashi et al. 2020) for the paper's proximity measure, and
a node's self- and cross-attention shares are taken side by side although they run one after
the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..capture import Trace

Node = tuple[str, int, int]  # (side "enc"/"dec", depth, position); ("pool", depth, 0) pooled
POOL = "pool"
_SELF = {"enc": "enc_self", "dec": "dec_self"}


@dataclass(frozen=True)
class Edge:
    """Information moving from `src` (one depth below) into `dst`."""

    src: Node
    dst: Node
    weight: float  # share of dst's incoming total, 0..1
    kind: str  # "residual", "enc_self", "dec_self", "cross" or "pool" (into the pooled output)
    head: int = -1  # the head moving most of it; -1 for the residual


@dataclass
class FlowGraph:
    """Routes to one output token: the edges kept and every node they touch."""

    target: Node
    threshold: float
    edges: list[Edge] = field(default_factory=list)
    nodes: set[Node] = field(default_factory=set)
    tokens: dict[str, list[str]] = field(default_factory=dict)  # side -> pieces
    depths: dict[str, int] = field(default_factory=dict)  # side -> number of layers
    truncated: bool = False  # the walk stopped at max_edges


def _side_of(trace: Trace) -> str:
    return "dec" if "dec_self" in trace.norms else "enc"


def _check(trace: Trace) -> None:
    missing = [s for s, k in (("enc", "enc_self"), ("dec", "dec_self"))
               if k in trace.norms and s not in trace.hidden]
    if not trace.norms or missing:
        raise ValueError("the flow graph needs a trace captured with names including "
                         "'norms' and 'hidden'")
    if "dec_self" in trace.norms and "cross" in trace.masks and "cross" not in trace.norms:
        raise ValueError("the flow graph needs cross-attention norms for this model")


def incoming(trace: Trace, b: int, node: Node, threshold: float = 0.0) -> list[Edge]:
    """Edges into `node` (depth ≥ 1) with their share of the node's incoming total, those
    with a share ≥ threshold."""
    side, depth, i = node
    if side == POOL:
        return _pooled_edges(trace, b, depth - 1, threshold)
    if depth < 1:
        return []
    layer = depth - 1
    n_own = trace.length(side, b)
    resid = float(np.linalg.norm(trace.hidden[side][layer, b, i].astype(np.float64)))
    blocks = [(_SELF[side], side, layer,
               trace.norms[_SELF[side]][layer, b, :, i, :n_own].astype(np.float64))]  # (H, K)
    if side == "dec" and "cross" in trace.norms:
        top = trace.hidden["enc"].shape[0] - 1
        n_src = trace.length("src", b)
        blocks.append(("cross", "enc", top,
                       trace.norms["cross"][layer, b, :, i, :n_src].astype(np.float64)))
    total = resid + sum(float(sizes.sum()) for *_, sizes in blocks)
    if total <= 0:
        return []
    edges = []
    if resid / total >= threshold:
        edges.append(Edge((side, layer, i), node, resid / total, "residual"))
    for kind, src_side, src_depth, sizes in blocks:
        share = sizes.sum(0) / total  # (K,) heads into the same key add up
        best = sizes.argmax(0)
        for j in np.flatnonzero((share >= threshold) & (share > 0)):
            edges.append(Edge((src_side, src_depth, int(j)), node, float(share[j]), kind,
                              int(best[j])))
    return edges


def _pooled_edges(trace: Trace, b: int, top: int, threshold: float) -> list[Edge]:
    """Edges from every real piece's top-depth vector into the mean-pooled output: share
    ‖x_i‖ / Σ_j ‖x_j‖ (each x_i enters the mean as x_i / n)."""
    side = _side_of(trace)
    n = trace.length(side, b)
    sizes = np.linalg.norm(trace.hidden[side][top, b, :n].astype(np.float64), axis=-1)  # (n,)
    total = float(sizes.sum())
    if total <= 0:
        return []
    target: Node = (POOL, top + 1, 0)
    return [Edge((side, top, int(i)), target, float(sizes[i] / total), POOL)
            for i in np.flatnonzero(sizes / total >= threshold)]


def flow_routes(trace: Trace, b: int = 0, position: int | None = None,
                threshold: float = 0.05, side: str | None = None,
                max_edges: int | None = None, pooled: bool = False) -> FlowGraph:
    """Routes into token `position` (default: the last) of the top depth of `side` (default:
    the decoder if there is one), keeping edges with weight ≥ threshold. With max_edges, the
    walk stops once more edges than that are kept (graph.truncated). pooled=True: routes into
    the mean-pooled output of the top stack instead (the module docstring; position and side
    are then not used)."""
    _check(trace)
    side = _side_of(trace) if pooled or side is None else side
    if side not in ("enc", "dec") or _SELF[side] not in trace.norms:
        raise ValueError(f"this trace has no {side!r} stack with norms")
    if not 0 <= b < len(trace.src_tokens):
        raise ValueError(f"sentence must be between 0 and {len(trace.src_tokens) - 1}")
    n = trace.length(side, b)
    if n == 0:
        raise ValueError("the sentence has no tokens on that side")
    position = n - 1 if position is None else int(position)
    if not 0 <= position < n:
        raise ValueError(f"position must be between 0 and {n - 1}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must be between 0 and 1")
    depths = {s: trace.hidden[s].shape[0] - 1 for s in ("enc", "dec")
              if s in trace.hidden and _SELF[s] in trace.norms}
    target: Node = (POOL, depths[side] + 1, 0) if pooled else (side, depths[side], position)
    graph = FlowGraph(target=target, threshold=threshold, nodes={target}, depths=depths,
                      tokens={s: list(trace.tokens(s)[b])
                              for s in depths})
    frontier, seen = [target], {target}
    while frontier and not graph.truncated:
        nxt = []
        for node in frontier:
            for edge in incoming(trace, b, node, threshold):
                graph.edges.append(edge)
                graph.nodes.add(edge.src)
                if edge.src not in seen:
                    seen.add(edge.src)
                    nxt.append(edge.src)
            if max_edges is not None and len(graph.edges) > max_edges:
                graph.truncated = True
                break
        frontier = nxt
    return graph
