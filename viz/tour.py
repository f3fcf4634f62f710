"""The guided tour's own pieces: what the existing views do not draw, and the numbers quoted
in the tour's sentences. Pure: Trace (and recorded hooks) in, figures and numbers out.

The tour walks seed 000's path through layer 0 of the first stack: embedding lookup, the
positional term and their sum (recorded hooks), one head from the trace's own q/k/v (so it
works for Hugging Face models too), residual + LayerNorm and the FFN (hooks of layer 0).
"""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go

from .common import DIVERGING, heatmap, style, token_labels
from .i18n import N_, _
from .steps import Walk

PIECE = N_("piece")  # matrix_figure's default row title, shown as _(PIECE)


def matrix_figure(z: np.ndarray, rows: list[str], title: str, x_title: str,
                  y_title: str = PIECE) -> go.Figure:
    """A (pieces × dimensions) matrix on a diverging scale centred on 0 (no cell numbers).

    title and the axis titles are shown as given; the default row title is translated."""
    if y_title == PIECE:
        y_title = _(PIECE)
    z = np.asarray(z, dtype=np.float32)
    bound = float(np.abs(z).max()) if z.size else 1.0
    return heatmap(z, [str(i) for i in range(z.shape[1])], token_labels(rows), title=title,
                   x_title=x_title, y_title=y_title, colorscale=DIVERGING, zmid=0,
                   zmin=-(bound or 1.0), zmax=bound or 1.0, numbers=False,
                   height=int(min(620, max(260, 120 + 26 * z.shape[0]))))


def norms_figure(parts: dict[str, np.ndarray], rows: list[str], title: str) -> go.Figure:
    """Per-piece L2 norms of several (n, D) tensors as grouped bars (what a step adds up)."""
    labels = token_labels(rows)
    fig = go.Figure()
    for name, z in parts.items():
        fig.add_trace(go.Bar(x=labels, y=np.linalg.norm(np.asarray(z, np.float64), axis=-1),
                             name=name, hovertemplate="%{x}<br>‖·‖ = %{y:.3f}<extra></extra>"))
    fig.update_xaxes(type="category")
    style(fig, title, _("piece"), _("vector length ‖·‖₂"), height=340)
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.25})
    return fig


def scores_figure(z: np.ndarray, q_tokens: list[str], k_tokens: list[str],
                  title: str) -> go.Figure:
    """Query × key scores on a diverging scale centred on 0; blocked cells blank."""
    z = np.asarray(z, dtype=np.float64)
    finite = z[np.isfinite(z) & (z > -1e8)]
    bound = float(np.abs(finite).max()) if finite.size else 1.0
    shown = np.where(np.isfinite(z) & (z > -1e8), z, np.nan)
    return heatmap(shown, token_labels(k_tokens), token_labels(q_tokens), title=title,
                   x_title=_("key"), y_title=_("query"), colorscale=DIVERGING, zmid=0,
                   zmin=-(bound or 1.0), zmax=bound or 1.0, numbers=False)


def trace_walk(trace, kind: str, layer: int, b: int, head: int) -> Walk:
    """One head's steps from the trace's own q, k, v and recorded scores (any model).

    QKᵀ is recomputed from q and k (read from the key/value head this query head shares under
    grouped-query attention); the scores and weights are the ones the model recorded, so a
    family that adds a position bias or does not divide by √d_k (T5) shows what it computed.
    The inputs X and the output projection are not in a Hugging Face trace, so x, x_kv,
    concat and out are empty (0 columns); the tour shows Q … ·V from this Walk only.
    """
    q = trace.q[kind][layer, b, head].astype(np.float64)  # (n_q, Dh)
    groups = getattr(trace, "kv_groups", None)
    kv = int(groups[head]) if groups is not None and len(groups) > head else head
    k = trace.k[kind][layer, b, kv].astype(np.float64)  # (n_k, Dh), grouped-query aware
    v = trace.v[kind][layer, b, kv].astype(np.float64)
    d_head = q.shape[1]
    qk = q @ k.T
    blocked = np.asarray(trace.masks[kind][b], dtype=bool)
    if kind in trace.scores:
        scaled = trace.scores[kind][layer, b, head].astype(np.float64)
    else:
        scaled = qk / np.sqrt(d_head)
    masked = np.where(blocked, -1e9, scaled)
    if kind in trace.attn:
        probs = trace.attn[kind][layer, b, head].astype(np.float64)
    else:
        e = np.exp(masked - masked.max(axis=-1, keepdims=True))
        probs = np.where(blocked, 0.0, e / e.sum(axis=-1, keepdims=True))
    empty_q, empty_k = np.zeros((q.shape[0], 0)), np.zeros((k.shape[0], 0))
    return Walk(kind=kind, layer=layer, b=b, head=head, batch=int(trace.masks[kind].shape[0]),
                n_heads=int(trace.q[kind].shape[2]), d_head=d_head, x=empty_q, x_kv=empty_k,
                q=q, k=k, v=v, qk=qk, scaled=scaled, masked=masked, blocked=blocked,
                probs=probs, context=probs @ v, concat=empty_q, out=empty_q,
                n_kv_heads=int(trace.k[kind].shape[2]), kv_head=kv)


def attention_block(trace, weights: dict, kind: str, layer: int, b: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(concat (n_q, H·Dh), out (n_q, D)) of one layer's attention for sentence b, rebuilt
    from the recorded weights and values and the layer's W_O and b_O (a backend's
    circuit_weights: W_O (H, Dh, D), b_O (D,), kv_groups (H,)), for a model whose recorder
    keeps no W_O input (a Hugging Face model): context_h = probs_h · V_kv(h), side by side,
    then · W_O + b_O, the block's addition to the residual stream."""
    probs = trace.attn[kind][layer, b].astype(np.float64)  # (H, n_q, n_k)
    v = trace.v[kind][layer, b].astype(np.float64)  # (H_kv, n_k, Dh)
    groups = np.asarray(weights.get("kv_groups", np.arange(probs.shape[0])))
    context = probs @ v[groups]  # (H, n_q, Dh): each query head reads its key/value head
    concat = context.transpose(1, 0, 2).reshape(probs.shape[1], -1)  # (n_q, H·Dh)
    w_o = np.asarray(weights["W_O"], np.float64)  # (H, Dh, D)
    out = concat @ w_o.reshape(-1, w_o.shape[-1]) + np.asarray(weights["b_O"], np.float64)
    return concat, out


def top_pair(probs: np.ndarray, n_q: int, n_k: int) -> tuple[int, int, float]:
    """(query, key, weight) of the largest weight off the diagonal where one exists."""
    p = np.array(probs[:n_q, :n_k], dtype=np.float64)
    if p.shape[0] > 1 and p.shape[1] > 1:
        np.fill_diagonal(p[: min(p.shape), : min(p.shape)], -1.0)
    q, k = np.unravel_index(int(np.argmax(p)), p.shape)
    return int(q), int(k), float(probs[q, k])


def zero_share(hidden: np.ndarray) -> float:
    """Share of exact zeros (what ReLU does to the FFN's hidden layer)."""
    return float(np.mean(np.asarray(hidden) == 0)) if np.size(hidden) else 0.0


def layer_stats(after: np.ndarray) -> tuple[float, float]:
    """Mean over pieces of each vector's mean and standard deviation (LayerNorm's effect)."""
    a = np.asarray(after, dtype=np.float64)
    return float(a.mean(axis=-1).mean()), float(a.std(axis=-1).mean())


def score_scale(walk: Walk) -> str:
    """How the recorded scores relate to QKᵀ on the unblocked cells: "sqrt" (QKᵀ/√d_k, the
    paper's), "none" (QKᵀ itself), "sqrt_bias" / "none_bias" (either, plus a term that depends
    only on the distance key − query: a relative position bias) or "other"."""
    free = ~walk.blocked
    if not free.any():
        return "sqrt"
    tol = 1e-4 * max(1.0, float(np.abs(walk.qk[free]).max()),
                     float(np.abs(walk.scaled[free]).max()))
    offsets = np.arange(free.shape[1])[None, :] - np.arange(free.shape[0])[:, None]
    for name, factor in (("sqrt", 1 / np.sqrt(walk.d_head)), ("none", 1.0)):
        rest = (walk.scaled - factor * walk.qk)[free]
        if np.all(np.abs(rest) <= tol):
            return name
        by_distance = offsets[free]
        if all(np.ptp(rest[by_distance == d]) <= tol for d in np.unique(by_distance)) and \
                len(np.unique(by_distance)) < rest.size:
            return name + "_bias"
    return "other"


def blocked_zero(walk: Walk) -> bool:
    """Every blocked cell's weight is exactly 0."""
    return bool(np.all(walk.probs[walk.blocked] == 0))


def sinusoid_layout(table: np.ndarray) -> str | None:
    """Whether a position table is the sine/cosine formula: "interleaved" (sin in even, cos in
    odd columns, the paper's and seed 000's), "halves" (sines in the first half of the
    columns, cosines in the second, as fairseq and Marian lay it out), or None (learned, or
    no table). Rows may be offset by one (a pad row 0 in front)."""
    table = np.asarray(table, dtype=np.float64)
    n, d = table.shape
    if n < 2 or d < 2 or not np.any(table):
        return None
    half = d // 2
    freq = np.power(10000.0, -2 * np.arange(half, dtype=np.float64) / d)
    layouts = {}
    for start in (0, 1):
        pos = np.arange(n - start, dtype=np.float64)[:, None]
        angle = pos / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)[None, :]
        ref = np.empty((n - start, d))
        ref[:, 0::2] = np.sin(angle)[:, : (d + 1) // 2]
        ref[:, 1::2] = np.cos(angle)[:, : d // 2]
        layouts[("interleaved", start)] = ref
        if d % 2 == 0:
            a = pos * freq[None, :]
            layouts[("halves", start)] = np.concatenate([np.sin(a), np.cos(a)], axis=1)
    for (name, start), ref in layouts.items():
        if np.allclose(table[start:], ref, atol=1e-4):
            return name
    return None


def tokenizer_kind(pieces: list[str]) -> str:
    """How a vocabulary marks words, read from its pieces: "sentencepiece" (▁ starts a word),
    "byte_bpe" (Ġ stands for a space, bytes shown as characters), "wordpiece" (## continues a
    word) or "plain" (no marker: whole words, or pieces that do not say where words start)."""
    counts = {"sentencepiece": sum(p.startswith("▁") and len(p) > 1 for p in pieces),
              "byte_bpe": sum(p.startswith("Ġ") and len(p) > 1 for p in pieces),
              "wordpiece": sum(p.startswith("##") and len(p) > 2 for p in pieces)}
    kind, most = max(counts.items(), key=lambda kv: kv[1])
    return kind if most >= max(3, len(pieces) // 100) else "plain"


def whole_words(pieces: list[str], text: str) -> bool:
    """Every piece that is not a special marker (<s>, [CLS]…) is a whole word or punctuation
    mark of the text (a word-level tokenizer's output)."""
    words = set(re.findall(r"\w+|[^\w\s]", text))
    real = [p for p in pieces if not re.fullmatch(r"<[^<>]*>|\[[A-Z]+\]", p)]
    return bool(real) and all(p in words for p in real)
